#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Testing

/// SplitMix64: a small seeded generator, so that a failing random text can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The project's shared test files (`<repo>/../shared`), found from this source file's path.
enum SharedFiles {
    /// `<repo>/../shared`, where `<repo>` is three levels above this file (`Tests/<Target>/<file>`).
    static let root: String = {
        var parts = String(#filePath).split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/") + "/../shared"
    }()

    static var badInputs: String { root + "/bad-inputs" }
    static var samples: String { root + "/samples" }

    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// The bytes of the file at `path`, or nil when it cannot be opened.
    static func read(_ path: String) -> [UInt8]? {
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
    static func text(_ path: String) throws -> String {
        String(decoding: try #require(read(path), "cannot read \(path)"), as: UTF8.self)
    }

    /// The names of the regular files in `directory`, sorted; empty when it cannot be read.
    static func files(in directory: String) -> [String] {
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
