import Foundation
import Testing

/// Names and texts the end-to-end tests share, from the command-line and D-Bus contract.
enum Lector {
    static let busName = "org.lector.Lector"
    static let objectPath = "/org/lector/Lector"
    static let interface = "org.lector.Lector1"
    /// The one line a second `lector daemon` on the same bus prints before exiting 1.
    static let secondDaemonMessage = "lector: another Lector daemon already runs on this session bus"

    /// A text of a few sentences, about 8 s at the default rate.
    static let sentences =
        "The quick brown fox jumps over the lazy dog. A journey of a thousand miles begins with a single step. "
        + "Every morning the baker opens the shop before sunrise. Rain is expected in the afternoon."

    /// One long sentence without punctuation: its words follow each other with short gaps only, so that
    /// speech resumes at once wherever it was paused (about 12 s at the default rate).
    static let longRun =
        "this long sentence keeps going on and on without any stop so that the speech never pauses for long "
        + "while the reader listens to every single word that the voice pronounces in a steady and even flow "
        + "from the first word to the very last one which comes only after many many more words have been read "
        + "one after another in a row that seems to never end at all"

    /// A text long enough to still be reading after any test's actions (minutes).
    static var veryLong: String { Array(repeating: longRun, count: 20).joined(separator: " ") }
}

/// `key: value` lines of `lector status`.
struct LectorStatus: CustomStringConvertible {
    var fields: [String: String]
    var exitStatus: Int32

    init(_ result: ProcessResult) {
        exitStatus = result.status
        var fields: [String: String] = [:]
        for line in result.stdout.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let key = line[..<colon].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            fields[key] = value
        }
        self.fields = fields
    }

    /// `reading`, `paused`, `stopped` or `not running`.
    var state: String? { fields["state"] }
    /// Seconds heard.
    var position: Double? { fields["position"].flatMap { Double($0.split(separator: " ").first ?? "") } }
    var length: Double? { fields["length"].flatMap { Double($0.split(separator: " ").first ?? "") } }
    var language: String? { fields["language"] }
    var sentence: String? { fields["sentence"] }
    var utterance: String? { fields["utterance"] }
    var description: String { "exit \(exitStatus): \(fields.sorted(by: { $0.key < $1.key }))" }
}

extension PrivateSession {
    /// Runs the `lector` binary under test in this session.
    func lector(
        _ arguments: [String], stdin: Data? = nil, timeout: Double = 30, environment overrides: [String: String] = [:]
    ) async throws -> ProcessResult {
        try await run(Paths.lectorBinary, arguments, stdin: stdin, timeout: timeout, environment: overrides)
    }

    /// `lector status`, parsed.
    func status() async throws -> LectorStatus {
        LectorStatus(try await lector(["status"], timeout: 10))
    }

    /// Polls `lector status` until its state is `state`; returns the last status seen.
    @discardableResult
    func waitForState(_ state: String, timeout: Double) async throws -> LectorStatus {
        try await poll(timeout: timeout, status, until: { $0.state == state })
    }

    /// Polls `lector status` every 0.1 s until the sentence being read contains `text`; returns the last status seen.
    func waitForSentence(containing text: String, timeout: Double) async throws -> LectorStatus {
        try await poll(timeout: timeout, every: .milliseconds(100), status, until: { $0.sentence?.contains(text) == true })
    }

    /// Runs `lector read --wait` with `arguments`, recording around it; returns the result and the audio
    /// from just before it started until `tail` seconds after it returned.
    func readAndRecord(_ arguments: [String], stdin: Data? = nil, tail: Double = 0.4, timeout: Double = 60)
        async throws -> (ProcessResult, AudioAnalysis)
    {
        let mark = recorder.mark()
        let result = try await lector(["read", "--wait"] + arguments, stdin: stdin, timeout: timeout)
        let end = recorder.mark()
        await recorder.waitForSamples(after: end, seconds: tail)
        return (result, AudioAnalysis(recorder.samples(from: mark)))
    }

    /// Stops any reading and waits until the sink is quiet, so that the next test starts from silence.
    func quiesce() async throws {
        _ = try await lector(["stop"], timeout: 10)
        _ = await recorder.waitForSilence(after: recorder.mark(), lasting: 0.2, timeout: 5)
    }

    /// The sound of `text` as eSpeak NG's own command renders it (`espeak-ng -v VOICE -w`), for comparisons.
    func espeakReference(_ text: String, voice: String = "en") async throws -> AudioAnalysis {
        let wav = directory.appendingPathComponent("reference-\(UUID().uuidString).wav")
        defer { try? FileManager.default.removeItem(at: wav) }
        let result = try await run("espeak-ng", ["-v", voice, "-w", wav.path, "--stdin"], stdin: Data(text.utf8))
        guard result.status == 0 else { throw HarnessError("espeak-ng failed: \(result)") }
        return AudioAnalysis(try WAVFile(contentsOf: wav).samples)
    }
}

/// Formats seconds for messages.
func secs(_ x: Double?) -> String { x.map { String(format: "%.3f s", $0) } ?? "none" }
