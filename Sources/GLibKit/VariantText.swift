import CGio

/// `Variant` in GLib's GVariant text format (GLib Reference Manual, "GVariant Text Format"), the form
/// `gdbus call` takes and `gdbus monitor` prints: for writing test calls and reading tool output.
extension Variant {
    /// Parses `text` in GVariant text format (`g_variant_parse` with no expected type), e.g.
    /// `('hello', @a{sv} {'rate': <int32 450>})`, `(int64 5,)` or `<1.5>`.
    ///
    /// Values the text leaves untyped take GLib's defaults (`5` is an `int32`, `1.5` a `double`); a
    /// dictionary whose keys are not strings, and a maybe type, come back in the shapes `init(borrowing:)`
    /// gives them (a `.tuple` per entry; an `.array` of zero or one element).
    /// - Throws: `GLibError` (domain "g-variant-parse-error-quark") with GLib's message when `text` does
    ///   not parse.
    public init(parsing text: String) throws(GLibError) {
        var error: UnsafeMutablePointer<GError>?
        guard let value = g_variant_parse(nil, text, nil, nil, &error) else {
            throw GLibError(consuming: error!)
        }
        let owned = g_variant_ref_sink(value)!
        defer { g_variant_unref(owned) }
        self.init(borrowing: owned)
    }

    /// This value in GVariant text format with type annotations (`g_variant_print(value, TRUE)`), e.g.
    /// `(int64 5,)`; `Variant(parsing:)` reads it back. A `.dictionary` prints its entries in no set order.
    public var text: String {
        let value = makeGVariant()
        defer { g_variant_unref(value) }
        guard let printed = g_variant_print(value, 1) else { return "" }
        defer { g_free(printed) }
        return String(cString: printed)
    }

    /// Whether `path` is a valid D-Bus object path (`g_variant_is_object_path`; D-Bus Specification,
    /// "Valid Object Paths"): "/" or "/"-separated non-empty elements of `[A-Za-z0-9_]`, no trailing "/".
    public static func isObjectPath(_ path: String) -> Bool {
        g_variant_is_object_path(path) != 0
    }
}
