@preconcurrency import Glibc
import Audiobook
import GLibKit
import SoundFile
import SystemKit
import VorbisPackets

/// The encoding of one file in segments by an `EncoderPool`: PCM is cut once a segment holds
/// ``segmentSeconds`` of audio (between sentences; FLAC, lossless, at the whole block after), each segment is
/// encoded into a hidden file of its own, and the files are joined in order into the output as they come:
/// Ogg Opus and Ogg Vorbis into one logical stream (`OggOpusJoiner`, `OggVorbisJoiner`), FLAC frames after
/// one STREAMINFO (`FLACJoiner`), MP3 frames simply following each other; each file is removed once joined.
/// At most two segments per thread are under way, so memory does not grow with the text.
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
    private let joiner: Joiner
    /// Samples handed to the encoders so far.
    private var submittedSamples = 0
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
        let samples = Self.segmentSeconds * sourceRate
        switch format {
        case .opus: joiner = .opus(OggOpusJoiner(output: output))
        case .flac: joiner = .flac(FLACJoiner(output: output), MD5())
        case .ogg: joiner = .vorbis(OggVorbisJoiner(output: output) { headers in
            let packets = try VorbisPackets(headers: headers)
            return { packets.blockSize($0) }
        })
        default: joiner = .concatenate
        }
        // FLAC: whole blocks in every segment but the last, so the joined stream keeps one block size.
        let block = format == .flac ? FLACSegment.blockSize : 1
        segmentSamples = (samples + block - 1) / block * block
    }

    /// How the segments' files become one.
    private enum Joiner {
        /// Ogg Opus pages renumbered into one logical stream.
        case opus(OggOpusJoiner)
        /// FLAC frames after one set of metadata, and the PCM's MD5 for its STREAMINFO.
        case flac(FLACJoiner, MD5)
        /// Ogg Vorbis pages renumbered into one logical stream.
        case vorbis(OggVorbisJoiner)
        /// Frames that simply follow each other (MP3).
        case concatenate
    }

    /// Takes one sentence's audio; a full segment is handed to the encoders.
    /// - Throws: `RenderError` when a segment could not be encoded or joined.
    func write(_ pcm: [Int16]) throws(RenderError) {
        buffer += pcm
        if case .flac(_, let md5) = joiner {
            md5.update(littleEndian: pcm)
            // Lossless: cut anywhere, at whole blocks.
            while buffer.count >= segmentSamples { try submit(count: segmentSamples) }
        } else if buffer.count >= segmentSamples {
            try submit(count: buffer.count)
        }
        try absorb()
    }

    /// Hands on what is left, waits for every segment and joins it.
    /// - Throws: `RenderError` when a segment could not be encoded or joined.
    func finish() throws(RenderError) {
        if !buffer.isEmpty || submitted == 0 { try submit(count: buffer.count) }
        try block { () throws(RenderError) in
            while joined < submitted {
                try waitForResult()
                try absorb()
            }
        }
        do {
            switch joiner {
            case .opus(let opus): try opus.finish()
            case .vorbis(let vorbis): try vorbis.finish()
            case .flac(let flac, let md5): try flac.finish(md5: md5.digest())
            case .concatenate: break
            }
        } catch {
            throw RenderError(message: "cannot write: \(error)")
        }
    }

    /// Removes the segments' hidden files (after a failure).
    func abandon() {
        for number in joined..<submitted { unlink(segmentPath(number)) }
    }

    private func segmentPath(_ number: Int) -> String { "\(basePath).\(number)" }

    /// Hands the first `count` samples of the buffer to the encoders.
    private func submit(count: Int) throws(RenderError) {
        try block { () throws(RenderError) in
            while submitted - joined >= 2 * pool.threads {
                try waitForResult()
                try absorb()
            }
        }
        let path = segmentPath(submitted)
        TemporaryFiles.add(path)
        segmentSizes[submitted] = count
        pool.submit(EncoderPool.Job(number: submitted, pcm: Array(buffer[0..<count]), path: path,
                                    firstSample: submittedSamples))
        buffer.removeFirst(count)
        submittedSamples += count
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
                switch joiner {
                case .opus(let opus): try opus.append(segment)
                case .vorbis(let vorbis): try vorbis.append(segment)
                case .flac(let flac, _): try flac.append(segment)
                case .concatenate: try Retagging.copy(from: segment, to: output)
                }
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
