#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Testing

/// The project's shared test fixtures (`<repo>/Tests/Fixtures`: `bad-inputs/`, `samples/`), found from this
/// source file's path, for the unit test targets (which do not use Foundation).
public enum SharedFiles {
    /// `<repo>/Tests/Fixtures`, where `<repo>` is three levels above this file (`Tests/TestSupport/<file>`).
    public static let root: String = {
        var parts = String(#filePath).split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/") + "/Tests/Fixtures"
    }()

    /// The folder of inputs that once broke a library or the daemon.
    public static var badInputs: String { root + "/bad-inputs" }
    /// The folder of sample texts.
    public static var samples: String { root + "/samples" }

    /// Whether anything exists at `path` (`access(2)` with `F_OK`).
    public static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// The bytes of the file at `path`, or nil when it cannot be opened.
    public static func read(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = buffer.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
            if n <= 0 { break }
            bytes.append(contentsOf: buffer[0..<n])
        }
        return bytes
    }

    /// The text of the file at `path` (invalid UTF-8 repaired).
    /// - Throws: an `ExpectationFailedError` (recorded as a test issue) when the file cannot be read.
    public static func text(_ path: String) throws -> String {
        String(decoding: try #require(read(path), "cannot read \(path)"), as: UTF8.self)
    }

    /// The bytes of `bad-inputs/<name>`.
    /// - Throws: an `ExpectationFailedError` (recorded as a test issue) when the file cannot be read.
    public static func badInput(_ name: String) throws -> [UInt8] {
        try #require(read(badInputs + "/" + name), "cannot read \(badInputs)/\(name)")
    }

    /// The names of the regular files in `directory`, sorted; empty when it cannot be read.
    public static func files(in directory: String) -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if !name.hasPrefix(".") && entry.pointee.d_type != UInt8(DT_DIR) { names.append(name) }
        }
        return names.sorted()
    }
}
