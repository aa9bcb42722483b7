import CGio

/// Conversions between `Variant` and GLib's `GVariant` (reference-counted, with floating references:
/// GLib Reference Manual, "GVariant", "Floating References").
extension Variant {
    /// Builds a new GVariant and returns a full reference (already sunk); the caller must
    /// `g_variant_unref` it.
    func makeGVariant() -> OpaquePointer {
        g_variant_ref_sink(makeFloatingGVariant())
    }

    /// Builds a new GVariant with a floating reference, for C functions that consume floating values
    /// (a property getter's return value). Its type is always `typeString`, except that an invalid element
    /// type of an array or value type of a dictionary is replaced by "v".
    func makeFloatingGVariant() -> OpaquePointer {
        switch self {
        case .bool(let v): return g_variant_new_boolean(v ? 1 : 0)
        case .byte(let v): return g_variant_new_byte(v)
        case .int16(let v): return g_variant_new_int16(v)
        case .uint16(let v): return g_variant_new_uint16(v)
        case .int32(let v): return g_variant_new_int32(v)
        case .uint32(let v): return g_variant_new_uint32(v)
        case .int64(let v): return g_variant_new_int64(Int(v))
        case .uint64(let v): return g_variant_new_uint64(UInt(v))
        case .double(let v): return g_variant_new_double(v)
        case .string(let s):
            return withValidUTF8(s) { g_variant_new_string($0) }
        case .objectPath(let s):
            return withValidUTF8(s) { path in
                g_variant_is_object_path(path) != 0
                    ? g_variant_new_object_path(path)
                    : g_variant_new_object_path("/org/mpris/MediaPlayer2/TrackList/NoTrack")
            }
        case .signature(let s):
            return withValidUTF8(s) { signature in
                g_variant_is_signature(signature) != 0 ? g_variant_new_signature(signature) : g_variant_new_signature("")
            }
        case .handle(let index): return g_variant_new_handle(index)
        case .variant(let inner):
            let child = inner.makeGVariant()
            defer { g_variant_unref(child) }
            return g_variant_new_variant(child)
        case .array(let elementType, let items):
            let type = VariantType.isUsable(elementType) ? elementType : "v"
            var children: [OpaquePointer?] = []
            children.reserveCapacity(items.count)
            for item in items {
                if let converted = item.converted(to: type) {
                    children.append(converted.makeEntryOrValue(entry: type.hasPrefix("{")))
                } else {
                    Log.warning("Dropped a value of type \(item.typeString) from an array of \(type)")
                }
            }
            return newArray(elementType: type, children)
        case .dictionary(let valueType, let entries):
            let type = VariantType.isUsable(valueType) ? valueType : "v"
            var children: [OpaquePointer?] = []
            children.reserveCapacity(entries.count)
            for key in entries.keys.sorted() {
                let value = entries[key]!
                if let converted = value.converted(to: type) {
                    children.append(Variant.tuple([.string(key), converted]).makeEntryOrValue(entry: true))
                } else {
                    Log.warning("Dropped \(key) of type \(value.typeString) from a dictionary of \(type)")
                }
            }
            return newArray(elementType: "{s" + type + "}", children)
        case .tuple(let items):
            var children: [OpaquePointer?] = items.map { $0.makeGVariant() }
            defer { children.forEach { g_variant_unref($0) } }
            return children.withUnsafeMutableBufferPointer { g_variant_new_tuple($0.baseAddress, gsize($0.count)) }
        }
    }

    /// A full reference to this value as an array element; with `entry`, a two-element `.tuple` becomes a
    /// dictionary entry `{KV}`.
    private func makeEntryOrValue(entry: Bool) -> OpaquePointer {
        guard entry, case .tuple(let pair) = self, pair.count == 2 else { return makeGVariant() }
        let key = pair[0].makeGVariant()
        let value = pair[1].makeGVariant()
        defer { g_variant_unref(key); g_variant_unref(value) }
        return g_variant_ref_sink(g_variant_new_dict_entry(key, value))
    }

    /// Reads a GVariant without taking ownership of it.
    init(borrowing value: OpaquePointer) {
        let typeClass = UInt8(truncatingIfNeeded: g_variant_classify(value).rawValue)
        switch typeClass {
        case UInt8(ascii: "b"): self = .bool(g_variant_get_boolean(value) != 0)
        case UInt8(ascii: "y"): self = .byte(g_variant_get_byte(value))
        case UInt8(ascii: "n"): self = .int16(g_variant_get_int16(value))
        case UInt8(ascii: "q"): self = .uint16(g_variant_get_uint16(value))
        case UInt8(ascii: "i"): self = .int32(g_variant_get_int32(value))
        case UInt8(ascii: "h"): self = .handle(g_variant_get_handle(value))
        case UInt8(ascii: "u"): self = .uint32(g_variant_get_uint32(value))
        case UInt8(ascii: "x"): self = .int64(Int64(g_variant_get_int64(value)))
        case UInt8(ascii: "t"): self = .uint64(UInt64(g_variant_get_uint64(value)))
        case UInt8(ascii: "d"): self = .double(g_variant_get_double(value))
        case UInt8(ascii: "s"): self = .string(String(cString: g_variant_get_string(value, nil)))
        case UInt8(ascii: "o"): self = .objectPath(String(cString: g_variant_get_string(value, nil)))
        case UInt8(ascii: "g"): self = .signature(String(cString: g_variant_get_string(value, nil)))
        case UInt8(ascii: "v"):
            let inner = g_variant_get_variant(value)!
            defer { g_variant_unref(inner) }
            self = .variant(Variant(borrowing: inner))
        case UInt8(ascii: "a"):
            let elementType = String(String(cString: g_variant_get_type_string(value)).dropFirst())
            if elementType.hasPrefix("{s") {
                var entries: [String: Variant] = [:]
                for i in 0..<g_variant_n_children(value) {
                    let entry = g_variant_get_child_value(value, i)!
                    let key = g_variant_get_child_value(entry, 0)!
                    let item = g_variant_get_child_value(entry, 1)!
                    entries[String(cString: g_variant_get_string(key, nil))] = Variant(borrowing: item)
                    g_variant_unref(item)
                    g_variant_unref(key)
                    g_variant_unref(entry)
                }
                self = .dictionary(valueType: String(elementType.dropFirst(2).dropLast()), entries)
            } else {
                self = .array(elementType: elementType, Variant.children(of: value))
            }
        case UInt8(ascii: "m"):
            let elementType = String(String(cString: g_variant_get_type_string(value)).dropFirst())
            self = .array(elementType: elementType, Variant.children(of: value))
        default: // "(" tuple, "{" dictionary entry
            self = .tuple(Variant.children(of: value))
        }
    }

    /// The children of a container GVariant (borrowed), converted.
    static func children(of value: OpaquePointer) -> [Variant] {
        let count = g_variant_n_children(value)
        var result: [Variant] = []
        result.reserveCapacity(Int(count))
        for i in 0..<count {
            let child = g_variant_get_child_value(value, i)!
            result.append(Variant(borrowing: child))
            g_variant_unref(child)
        }
        return result
    }
}

/// A floating array of the given element type from full references in `children`, which it releases.
private func newArray(elementType: String, _ children: [OpaquePointer?]) -> OpaquePointer {
    var children = children
    defer { children.forEach { g_variant_unref($0) } }
    let type = g_variant_type_new(elementType)
    defer { g_variant_type_free(type) }
    return children.withUnsafeMutableBufferPointer { g_variant_new_array(type, $0.baseAddress, gsize($0.count)) }
}

/// Calls `body` with `text` as a C string that GVariant accepts as a string: NUL characters replaced by
/// U+FFFD, and anything `g_utf8_validate` refuses replaced by `g_utf8_make_valid`.
private func withValidUTF8<R>(_ text: String, _ body: (UnsafePointer<CChar>) -> R) -> R {
    let clean = text.utf8.contains(0) ? String(text.unicodeScalars.map { $0 == "\0" ? "\u{FFFD}" : Character($0) }) : text
    return clean.withCString { pointer in
        if g_utf8_validate(pointer, -1, nil) != 0 { return body(pointer) }
        let repaired = g_utf8_make_valid(pointer, -1)!
        defer { g_free(repaired) }
        return body(repaired)
    }
}

extension VariantType {
    /// Whether `type` is a complete, definite GVariant type that D-Bus can carry and this module can build:
    /// no `*`, `?`, `r`, maybe (`m`) or fd handle (`h`).
    static func isUsable(_ type: String) -> Bool {
        guard !type.isEmpty, !type.contains(where: { "*?rmh".contains($0) }) else { return false }
        return g_variant_type_string_is_valid(type) != 0
    }
}
