@preconcurrency import Glibc
import Audiobook
import Resampling
import SoundFile
import Synchronization
import SystemKit

/// Encoder threads: segments of PCM (a minute or more, cut between sentences) are encoded each into its own
/// file by one of `threads` threads, so that a slow codec (Opus, MP3) uses every core; `SegmentedOutput`
/// joins the files in order. Each thread owns the libsndfile and libsoxr handles it makes; only the job
/// queue and the results are shared, under a mutex, and a pipe wakes whoever waits (a thread for a job, the
/// main thread for a result).
final class EncoderPool: Sendable {
    /// One segment to encode.
    struct Job: Sendable {
        let number: Int
        let pcm: [Int16]
        let path: String
        /// The segment's first sample in the whole file (FLAC numbers its frames from it).
        let firstSample: Int
    }

    private struct Shared {
        var jobs: [Job] = []
        var results: [Int: Result<Int, RenderError>] = [:]
        var closed = false
    }

    /// Whether `format` is encoded in segments by a pool (every format but WAV, which needs no encoding).
    static func encodes(_ format: AudioFormat) -> Bool { format != .wav }

    private let shared = Mutex(Shared())
    private let jobReady: (read: FileDescriptor, write: FileDescriptor)
    private let resultReady: (read: FileDescriptor, write: FileDescriptor)
    let threads: Int

    /// Starts `threads` threads encoding `format` at `bitrate` from PCM at `sourceRate` Hz.
    /// - Throws: `RenderError` when the pipes or threads cannot be made.
    init(threads: Int, format: AudioFormat, bitrate: Int?, sourceRate: Int) throws(RenderError) {
        do throws(Errno) {
            jobReady = try FileDescriptor.pipe()
            resultReady = try FileDescriptor.pipe()
        } catch {
            throw RenderError(message: "cannot start encoders: \(error)")
        }
        try? resultReady.write.setNonBlocking()
        self.threads = threads
        for _ in 0..<threads {
            do throws(Errno) {
                try Thread.detach { [self] in work(format: format, bitrate: bitrate, sourceRate: sourceRate) }
            } catch {
                throw RenderError(message: "cannot start encoders: \(error)")
            }
        }
    }

    /// Queues a segment.
    func submit(_ job: Job) {
        shared.withLock { $0.jobs.append(job) }
        try? jobReady.write.writeAll([1])
    }

    /// The results that have arrived, taken out (frames written, or the failure).
    func takeResults() -> [Int: Result<Int, RenderError>] {
        shared.withLock { state in
            defer { state.results = [:] }
            return state.results
        }
    }

    /// Blocks until a result may have arrived.
    func waitForResult() {
        var byte: [UInt8] = [0]
        _ = try? resultReady.read.readWaiting(into: &byte)
    }

    /// Ends the threads once the queued jobs are done, and closes the pipes' main-thread ends after them.
    func close() {
        shared.withLock { $0.closed = true }
        for _ in 0..<threads { try? jobReady.write.writeAll([0]) }
    }

    private func work(format: AudioFormat, bitrate: Int?, sourceRate: Int) {
        var byte: [UInt8] = [0]
        while (try? jobReady.read.readWaiting(into: &byte)) == 1 {
            guard let job = shared.withLock({ $0.jobs.isEmpty ? nil : $0.jobs.removeFirst() }) else { return }
            let result = Result { () throws(RenderError) -> Int in
                try EncoderPool.encode(job, format: format, bitrate: bitrate, sourceRate: sourceRate)
            }
            shared.withLock { $0.results[job.number] = result }
            _ = try? resultReady.write.write([1][...])
        }
    }

    /// Numbers the frames of the FLAC segment in `fd` from its place in the whole file (`FLACSegment`).
    private static func renumberFLAC(_ fd: FileDescriptor, firstSample: Int) throws {
        let size = Int(try fd.seek(offset: 0, from: .end))
        _ = try fd.seek(offset: 0, from: .start)
        var bytes = [UInt8](repeating: 0, count: size)
        var filled = 0
        while filled < size {
            let n = try fd.read(into: &bytes, at: filled)
            guard n > 0 else { throw RetagError.layout("FLAC segment shorter than its size") }
            filled += n
        }
        let renumbered = try FLACSegment.renumber(bytes, firstFrame: firstSample / FLACSegment.blockSize)
        _ = try fd.seek(offset: 0, from: .start)
        guard ftruncate(fd.rawValue, 0) == 0 else { throw Errno.current }
        try fd.writeAll(renumbered)
    }

    /// Encodes one segment into its own file.
    private static func encode(_ job: Job, format: AudioFormat, bitrate: Int?, sourceRate: Int) throws(RenderError) -> Int {
        let fd: FileDescriptor
        do throws(Errno) {
            fd = try FileDescriptor.open(job.path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode: 0o644)
        } catch {
            throw RenderError(message: "cannot write \(job.path): \(error)")
        }
        defer { try? fd.close() }
        do {
            let rate = format.encodingRate(forSourceRate: sourceRate)
            let resampler = rate == sourceRate ? nil : try Resampler(from: sourceRate, to: rate)
            let writer = try SoundFileWriter(fd: fd, format: format, sampleRate: rate, bitrate: bitrate, title: nil,
                                             artist: nil, originalRate: sourceRate)
            // A second at a time: the segment is not held a second time, resampled to floats.
            var start = 0
            while start < job.pcm.count {
                let chunk = Array(job.pcm[start..<min(start + sourceRate, job.pcm.count)])
                if let resampler { try writer.write(resampler.process(chunk)) } else { try writer.write(chunk) }
                start += chunk.count
            }
            if let resampler { try writer.write(resampler.flush()) }
            try writer.finish()
            if format == .flac { try renumberFLAC(fd, firstSample: job.firstSample) }
            return writer.frames
        } catch {
            throw RenderError(message: "cannot write \(format.rawValue): \(error)")
        }
    }
}
