#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import SpeechCore
import Testing

/// An utterance `id` of `count` sentences "Sentence 0." … "Sentence n.", one space apart, ranges in scalars.
func makeUtterance(_ id: UInt64, sentences count: Int = 3) -> Utterance {
    var text = ""
    var sentences: [Sentence] = []
    for i in 0..<count {
        if i > 0 { text += " " }
        let piece = "Sentence \(i) of utterance \(id)."
        let start = text.unicodeScalars.count
        text += piece
        sentences.append(Sentence(range: start..<text.unicodeScalars.count, text: piece))
    }
    return Utterance(id: id, text: text, sentences: sentences, language: "en-US",
                     voiceName: "English (America)", engineVoice: "en-us", rate: 175, pitch: 50,
                     title: TextCleaner.title(of: text))
}

/// SplitMix64: a small seeded generator, so that a failing random sequence can be replayed.
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

    /// The bytes of `bad-inputs/<name>`.
    static func badInput(_ name: String) throws -> [UInt8] {
        try #require(read(badInputs + "/" + name), "cannot read \(badInputs)/\(name)")
    }
}
