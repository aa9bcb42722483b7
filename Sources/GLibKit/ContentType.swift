import CGio

/// Content types (MIME types on Linux) as GIO guesses them from the shared MIME-info database
/// (GIO Reference Manual, "GContentType"; freedesktop.org Shared MIME-info Database specification).
public enum ContentType {
    /// The content type of a file from its name and its first bytes (`g_content_type_guess`), e.g.
    /// "text/plain", "image/png", "application/x-executable"; nil `fileName` guesses from the bytes alone,
    /// an empty `data` from the name alone. Without a MIME database GIO answers "text/plain" for bytes that
    /// look like text and "application/octet-stream" for others.
    /// - Parameters:
    ///   - fileName: the file's name (its last path component is enough); only its glob patterns are used.
    ///   - data: its first bytes (GIO's magic rules look at the first few KiB).
    public static func guess(fileName: String?, data: [UInt8]) -> String {
        var uncertain: gboolean = 0
        let guessed = data.withUnsafeBufferPointer { bytes in
            g_content_type_guess(fileName, bytes.baseAddress, gsize(bytes.count), &uncertain)
        }
        guard let guessed else { return "application/octet-stream" }
        defer { g_free(guessed) }
        return String(cString: guessed)
    }

    /// Whether `type` is `supertype` or a subclass of it in the MIME database (`g_content_type_is_a`), e.g.
    /// "application/xml" and "application/x-shellscript" are "text/plain".
    public static func isA(_ type: String, _ supertype: String) -> Bool {
        g_content_type_is_a(type, supertype) != 0
    }
}
