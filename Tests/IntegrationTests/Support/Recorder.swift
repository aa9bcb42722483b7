import Foundation

/// Records what the sound server plays: `parec` on a monitor source, raw s16le mono at 22050 Hz, into a
/// file that tests read while it grows.
///
/// A null sink's monitor delivers samples at real-time pace without gaps (silence is digital zero), so a
/// sample index is a time: `mark()` before an action and `samples(from:)` after it relate the two.
/// An idle null sink can take ~2 s before the first data flows (PITFALLS.md): `start()` waits for it.
final class Recorder: @unchecked Sendable {
    /// Samples per second (Hz).
    static let sampleRate = PrivateSession.sampleRate

    let file: URL
    let device: String
    private let environment: [String: String]
    private let lock = NSLock()
    private var process: BackgroundProcess?
    private var startInstant: ContinuousClock.Instant?
    private var startSamples = 0

    /// A recorder of `device` (a source name such as `lector_test.monitor`) into `file`.
    init(environment: [String: String], file: URL, device: String) {
        self.environment = environment
        self.file = file
        self.device = device
    }

    /// The recorder's process id while it runs.
    var pid: Int32? { lock.withLock { process?.pid } }

    /// Starts `parec` and returns once samples flow.
    /// - Throws: `HarnessError` when no data arrives within `timeout` seconds.
    func start(timeout: Double = 10) async throws {
        let process = try BackgroundProcess(
            "parec",
            [
                "--raw", "--format=s16le", "--rate=\(Self.sampleRate)", "--channels=1", "--latency-msec=5",
                "-d", device,
            ],
            environment: environment, stdoutURL: file,
            stderrURL: file.deletingPathExtension().appendingPathExtension("parec.log"))
        // After a restart (a new sound server) the file grows on from where it was.
        let before = sampleCount
        lock.withLock { self.process = process }
        let flowing = await eventually(timeout: timeout, every: .milliseconds(5)) {
            sampleCount >= before + 441 || !process.isRunning  // 20 ms of sound, or no recorder
        }
        guard flowing && process.isRunning && sampleCount >= before + 441 else {
            await process.stop(grace: 1)
            throw HarnessError("parec -d \(device): no data within \(timeout) s: \(process.stderr)")
        }
        let now = ContinuousClock.now
        let count = sampleCount
        lock.withLock {
            startInstant = now
            startSamples = count
        }
    }

    /// Samples recorded so far.
    var sampleCount: Int {
        let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.intValue ?? 0
        return size / 2
    }

    /// The index of the next sample to arrive: the position in the recording of "now".
    func mark() -> Int { sampleCount }

    /// The monotonic time at which data started to flow, with the sample count at that moment.
    var started: (instant: ContinuousClock.Instant, sample: Int)? {
        lock.withLock { startInstant.map { ($0, startSamples) } }
    }

    /// The sample index that corresponds to `instant`, from the start time and the sample rate.
    func sampleIndex(at instant: ContinuousClock.Instant) -> Int? {
        guard let (start, sample) = started else { return nil }
        let elapsed = instant - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return sample + Int((seconds * Double(Self.sampleRate)).rounded())
    }

    /// The samples in `from ..< to` (to the end of what was recorded when `to` is nil).
    func samples(from: Int = 0, to: Int? = nil) -> [Int16] {
        guard let handle = try? FileHandle(forReadingFrom: file) else { return [] }
        defer { try? handle.close() }
        let available = sampleCount
        let end = min(to ?? available, available)
        guard end > from else { return [] }
        do {
            try handle.seek(toOffset: UInt64(from * 2))
            guard let data = try handle.read(upToCount: (end - from) * 2) else { return [] }
            return decodeS16LE(data)
        } catch {
            return []
        }
    }

    /// Waits until the recording holds at least `mark + seconds` of samples (or `timeout` passes).
    func waitForSamples(after mark: Int, seconds: Double, timeout: Double = 10) async {
        let target = mark + Int(seconds * Double(Self.sampleRate))
        _ = await eventually(timeout: seconds + timeout, every: .milliseconds(5)) { sampleCount >= target }
    }

    /// Waits up to `timeout` seconds for speech after `mark`; returns the seconds from `mark` to the first
    /// speech window, or nil when none was heard.
    func waitForSpeech(after mark: Int, timeout: Double) async -> Double? {
        await poll(timeout: timeout, every: .milliseconds(20), { AudioAnalysis(samples(from: mark)).firstSpeech },
                   until: { $0 != nil })
    }

    /// Waits until `seconds` of continuous silence follow `mark` (or `timeout` passes); returns the
    /// seconds from `mark` to the start of that silence, or nil on timeout.
    func waitForSilence(after mark: Int, lasting seconds: Double, timeout: Double) async -> Double? {
        await poll(timeout: timeout, {
            let analysis = AudioAnalysis(samples(from: mark))
            let endOfSpeech = analysis.lastSpeech ?? 0
            return analysis.duration - endOfSpeech >= seconds ? endOfSpeech : nil
        }, until: { $0 != nil })
    }

    /// Stops `parec` and returns everything it recorded.
    func stop() async -> [Int16] {
        let process = lock.withLock { self.process }
        await process?.stop(grace: 2)
        return samples()
    }
}

/// Decodes raw signed 16-bit little-endian PCM.
func decodeS16LE(_ data: Data) -> [Int16] {
    var out = [Int16](repeating: 0, count: data.count / 2)
    data.withUnsafeBytes { raw in
        for i in 0..<out.count {
            out[i] = Int16(bitPattern: UInt16(raw[2 * i]) | UInt16(raw[2 * i + 1]) << 8)
        }
    }
    return out
}
