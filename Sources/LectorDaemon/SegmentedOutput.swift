@preconcurrency import Glibc
import Audiobook
import SoundFile
import SystemKit

/// The encoding of one file in segments by an `EncoderPool`: PCM is cut between sentences once a segment
/// holds ``segmentSeconds`` of audio, each segment is encoded into a hidden file of its own, and the files are
/// joined in order into the output as they come (Ogg Opus: into one logical stream by `OggOpusJoiner`; MP3:
/// frames follow each other), each removed once joined. At most two segments per thread are under way, so
/// memory does not grow with the text.
final class SegmentedOutput {
    /// Audio per segment, s: a worker-thread's unit of work, and a join (a few ms of silence) per this much.
    static let segmentSeconds = 60

    private let pool: EncoderPool
    private let format: AudioFormat
    private let output: FileDescriptor
    private let basePath: String
    private let segmentSamples: Int
    private var buffer: [Int16] = []
    private var submitted = 0
    private var joined = 0
    private var done: [Int: Result<Int, RenderError>] = [:]
    private let joiner: OggOpusJoiner?
    /// Called with true before the main thread blocks on the encoders, and false after.
    var onBlocking: ((Bool) -> Void)?
    /// Asked while the main thread waits for the encoders: true stops the encoding (an interruption).
    var shouldStop: (() -> Bool)?
    /// Called after a segment has been joined (for progress).
    var onJoined: (() -> Void)?
    /// Source samples encoded and joined into the output so far.
    private(set) var joinedSamples = 0
    private var segmentSizes: [Int: Int] = [:]

    /// Encodes `format` through `pool` into `output`, segments in hidden files named after `basePath`.
    init(pool: EncoderPool, format: AudioFormat, output: FileDescriptor, basePath: String, sourceRate: Int) {
        self.pool = pool
        self.format = format
        self.output = output
        self.basePath = basePath
        segmentSamples = Self.segmentSeconds * sourceRate
        joiner = format == .opus ? OggOpusJoiner(output: output) : nil
    }

    /// Takes one sentence's audio; a full segment is handed to the encoders.
    /// - Throws: `RenderError` when a segment could not be encoded or joined.
    func write(_ pcm: [Int16]) throws(RenderError) {
        buffer += pcm
        if buffer.count >= segmentSamples { try submit() }
        try absorb()
    }

    /// Hands on what is left, waits for every segment and joins it.
    /// - Throws: `RenderError` when a segment could not be encoded or joined.
    func finish() throws(RenderError) {
        if !buffer.isEmpty || submitted == 0 { try submit() }
        try block { () throws(RenderError) in
            while joined < submitted {
                try waitForResult()
                try absorb()
            }
        }
        do { try joiner?.finish() } catch { throw RenderError(message: "cannot write: \(error)") }
    }

    /// Removes the segments' hidden files (after a failure).
    func abandon() {
        for number in joined..<submitted { unlink(segmentPath(number)) }
    }

    private func segmentPath(_ number: Int) -> String { "\(basePath).\(number)" }

    private func submit() throws(RenderError) {
        try block { () throws(RenderError) in
            while submitted - joined >= 2 * pool.threads {
                try waitForResult()
                try absorb()
            }
        }
        let path = segmentPath(submitted)
        TemporaryFiles.add(path)
        segmentSizes[submitted] = buffer.count
        pool.submit(EncoderPool.Job(number: submitted, pcm: buffer, path: path))
        buffer = []
        submitted += 1
    }

    /// Joins the segments encoded so far, in order.
    private func absorb() throws(RenderError) {
        done.merge(pool.takeResults()) { $1 }
        while let result = done.removeValue(forKey: joined) {
            let path = segmentPath(joined)
            defer {
                unlink(path)
                TemporaryFiles.remove(path)
            }
            _ = try result.get()
            do {
                let segment = try FileDescriptor.open(path, O_RDONLY | O_CLOEXEC)
                defer { try? segment.close() }
                if let joiner { try joiner.append(segment) } else { try Retagging.copy(from: segment, to: output) }
            } catch {
                throw RenderError(message: "cannot join the encoded audio: \(error)")
            }
            joinedSamples += segmentSizes.removeValue(forKey: joined) ?? 0
            joined += 1
            onJoined?()
        }
    }

    private func block(_ body: () throws(RenderError) -> Void) throws(RenderError) {
        onBlocking?(true)
        defer { onBlocking?(false) }
        try body()
    }

    /// Waits for the next result, unless the rendering is to stop.
    private func waitForResult() throws(RenderError) {
        if shouldStop?() == true { throw RenderError(message: "interrupted") }
        pool.waitForResult()
    }
}
