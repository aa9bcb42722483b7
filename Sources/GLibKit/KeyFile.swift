import CGio

/// A parsed `.ini`-style key file: `[group]` headers, `key=value` lines, `#` comments (GLib's `GKeyFile`,
/// GLib Reference Manual "Key-value file parser"; format of the Desktop Entry Specification).
///
/// Values are read as GLib reads them: `g_key_file_get_string` (escapes such as `\s`, `\n` and `\\`
/// decoded), `g_key_file_get_integer`, `g_key_file_get_double` (a `.` decimal point in every locale).
/// Comments and translations (`key[de]=…`) are kept but not exposed. GKeyFile reports no line numbers
/// for keys: see ``lineNumber(ofKey:inGroup:)``.
public final class KeyFile {
    private let keyFile: OpaquePointer
    private let source: [Substring]

    /// Parses `text` (UTF-8) as a key file.
    /// - Throws: `GLibError` in the `G_KEY_FILE_ERROR` domain ("g-key-file-error-quark") for a syntax error,
    ///   with GLib's message (which quotes the offending line, but gives no number).
    public init(text: String) throws(GLibError) {
        let file = g_key_file_new()!
        var error: UnsafeMutablePointer<GError>?
        let ok = text.withCString { g_key_file_load_from_data(file, $0, gsize(text.utf8.count), G_KEY_FILE_NONE, &error) }
        guard ok != 0 else {
            g_key_file_free(file)
            throw GLibError(consuming: error!)
        }
        keyFile = file
        source = text.split(separator: "\n", omittingEmptySubsequences: false)
    }

    /// Reads the file at `path` with `readRegularFile` (never blocking, a regular file only, at most
    /// `maximumBytes`; a symbolic link at `path` is followed only when `followLinks`), then parses its bytes
    /// (`g_key_file_load_from_data`, not `g_key_file_load_from_file`, which would follow a link to a device
    /// and block on a FIFO).
    /// - Throws: `GLibError` in the `G_FILE_ERROR` domain when it cannot be read (code `G_FILE_ERROR_NOENT`,
    ///   see ``GLibError/isFileNotFound``, when it does not exist; the message names the file), or in
    ///   `G_KEY_FILE_ERROR` for a syntax error.
    public convenience init(path: String, maximumBytes: Int, followLinks: Bool = false) throws(GLibError) {
        let bytes = try readRegularFile(path, maximumBytes: maximumBytes, followLinks: followLinks)
        try self.init(text: String(decoding: bytes, as: UTF8.self))
    }

    deinit {
        g_key_file_free(keyFile)
    }

    /// The groups in file order (`g_key_file_get_groups`).
    public var groups: [String] {
        var count: Int = 0
        return takeStrings(g_key_file_get_groups(keyFile, &count))
    }

    /// The keys of `group` in file order (`g_key_file_get_keys`); empty when the group does not exist.
    public func keys(inGroup group: String) -> [String] {
        var count: Int = 0
        return takeStrings(g_key_file_get_keys(keyFile, group, &count, nil))
    }

    /// The value of `key` in `group` with escapes decoded (`g_key_file_get_string`), nil when there is none.
    public func string(_ key: String, inGroup group: String) -> String? {
        takeString(g_key_file_get_string(keyFile, group, key, nil))
    }

    /// The value of `key` in `group` as an integer (`g_key_file_get_integer`: decimal, surrounding white
    /// space allowed), nil when the key does not exist.
    /// - Throws: `GLibError` (`G_KEY_FILE_ERROR_INVALID_VALUE`) when the value is not an integer that fits 32 bits.
    public func integer(_ key: String, inGroup group: String) throws(GLibError) -> Int? {
        guard g_key_file_has_key(keyFile, group, key, nil) != 0 else { return nil }
        var error: UnsafeMutablePointer<GError>?
        let value = g_key_file_get_integer(keyFile, group, key, &error)
        if let error { throw GLibError(consuming: error) }
        return Int(value)
    }

    /// The value of `key` in `group` as a number (`g_key_file_get_double`, locale-independent `.`), nil when
    /// the key does not exist.
    /// - Throws: `GLibError` (`G_KEY_FILE_ERROR_INVALID_VALUE`) when the value is not a number.
    public func double(_ key: String, inGroup group: String) throws(GLibError) -> Double? {
        guard g_key_file_has_key(keyFile, group, key, nil) != 0 else { return nil }
        var error: UnsafeMutablePointer<GError>?
        let value = g_key_file_get_double(keyFile, group, key, &error)
        if let error { throw GLibError(consuming: error) }
        return value
    }

    /// The 1-based line of the text where `key` is set in `group` (the last such line, as GKeyFile keeps the
    /// last value), found by a plain scan: `[group]` headers, then `key =` at the start of a line.
    /// nil when the scan does not find it.
    public func lineNumber(ofKey key: String, inGroup group: String) -> Int? {
        var current: Substring?
        var found: Int?
        for (index, raw) in source.enumerated() {
            let line = raw.drop { $0 == " " || $0 == "\t" }
            if line.hasPrefix("[") {
                current = line.dropFirst().prefix { $0 != "]" }
                continue
            }
            guard current == group[...], let equals = line.firstIndex(of: "=") else { continue }
            var name = line[..<equals]
            while let last = name.last, last == " " || last == "\t" { name.removeLast() }
            if name == key[...] { found = index + 1 }
        }
        return found
    }

    /// The 1-based line of the `[group]` header, nil when the scan does not find it.
    public func lineNumber(ofGroup group: String) -> Int? {
        source.firstIndex { $0.drop { $0 == " " || $0 == "\t" }.hasPrefix("[" + group + "]") }.map { $0 + 1 }
    }

    private func takeStrings(_ list: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> [String] {
        guard let list else { return [] }
        defer { g_strfreev(list) }
        var result: [String] = []
        var i = 0
        while let s = list[i] {
            result.append(String(cString: s))
            i += 1
        }
        return result
    }
}

extension GLibError {
    /// Whether this is `G_FILE_ERROR_NOENT`: the file does not exist.
    public var isFileNotFound: Bool {
        domain == "g-file-error-quark" && code == Int32(G_FILE_ERROR_NOENT.rawValue)
    }
}
