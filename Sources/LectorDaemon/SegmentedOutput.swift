@preconcurrency import Glibc
import Audiobook
import GLibKit
import SoundFile
import SystemKit
import VorbisPackets

/// The encoding of one file in segments by an `EncoderPool`: PCM is cut once a segment holds
/// ``segmentSeconds`` of audio (between sentences; FLAC, lossless, at the whole block after), each segment is
/// encoded into a hidden file of its own, and the files are joined in order into the output as they come:
/// Ogg Opus and Ogg Vorbis into one logical stream (`OggOpusJoiner`, `OggVorbisJoiner`), MP3 frames after one
/// Info frame (`MP3Joiner`), FLAC frames after one STREAMINFO (`FLACJoiner`); each file is removed once
/// joined. The lossy codecs' segments overlap where they are cut (`JoinPlan`): each is encoded from a little
/// before its place and the joiner drops what each encoder adds there, so that the joined file holds the
/// source's samples where the source has them (MP3 and Opus exactly; Vorbis within a quarter of a block,
/// ``shift(at:)``). At most two segments per thread are under way, so memory does not grow with the text.
final class SegmentedOutput {
    /// Audio per segment, s: a worker-thread's unit of work, and a join per this much.
    /// `LECTOR_TEST_SEGMENT_SECONDS` (1–60) makes it shorter for the end-to-end tests (many joins in a short
    /// book); nothing in Lector sets it.
    static let segmentSeconds: Int = {
        guard let text = getenv("LECTOR_TEST_SEGMENT_SECONDS").map({ String(cString: $0) }), let value = Int(text),
              (1...60).contains(value) else { return 60 }
        return value
    }()

    private let pool: EncoderPool
    private let format: AudioFormat
    private let output: FileDescriptor
    private let basePath: String
    private let sourceRate: Int
    private let segmentSamples: Int
    private var buffer: [Int16] = []
    /// The source sample of `buffer[0]`.
    private var bufferStart = 0
    /// Where the next segment's part of the source begins (the last cut), and its kept part's lower bound.
    private var partStart = 0
    private var nextLower = 0
    private var submitted = 0
    private var joined = 0
    private var done: [Int: Result<Int, RenderError>] = [:]
    private var plans: [Int: JoinPlan.Segment] = [:]
    private let joiner: Joiner
    /// Called with true before the main thread blocks on the encoders, and false after.
    var onBlocking: ((Bool) -> Void)?
    /// Asked while the main thread waits for the encoders: true stops the encoding (an interruption).
    var shouldStop: (() -> Bool)?
    /// Called after a segment has been joined (for progress).
    var onJoined: (() -> Void)?
    /// Source samples encoded and joined into the output so far.
    private(set) var joinedSamples = 0
    /// From which source sample the joined audio lies how many samples after its place (Vorbis), in order.
    private var shifts: [(from: Int, by: Int)] = []

    /// Encodes `format` through `pool` into `output`, segments in hidden files named after `basePath`.
    init(pool: EncoderPool, format: AudioFormat, output: FileDescriptor, basePath: String, sourceRate: Int) {
        self.pool = pool
        self.format = format
        self.output = output
        self.basePath = basePath
        self.sourceRate = sourceRate
        let samples = Self.segmentSeconds * sourceRate
        switch format {
        case .opus: joiner = .opus(OggOpusJoiner(output: output), .opus(sourceRate: sourceRate, preSkip: 312))
        case .flac: joiner = .flac(FLACJoiner(output: output), MD5())
        case .ogg: joiner = .vorbis(OggVorbisJoiner(output: output) { headers in
            let packets = try VorbisPackets(headers: headers)
            return { packets.blockSize($0) }
        })
        default: joiner = .mp3(MP3Joiner(output: output), .mp3(frameSamples: sourceRate >= 32_000 ? 1_152 : 576))
        }
        // FLAC: whole blocks in every segment but the last, so the joined stream keeps one block size.
        let block = format == .flac ? FLACSegment.blockSize : 1
        segmentSamples = (samples + block - 1) / block * block
    }

    /// How the segments' files become one.
    private enum Joiner {
        /// Ogg Opus packets in one logical stream, overlapping segments cut on the packets' grid.
        case opus(OggOpusJoiner, JoinPlan.Codec)
        /// FLAC frames after one set of metadata, and the PCM's MD5 for its STREAMINFO.
        case flac(FLACJoiner, MD5)
        /// Ogg Vorbis packets in one logical stream, overlapping segments joined where their blocks fit.
        case vorbis(OggVorbisJoiner)
        /// MP3 frames after one Info frame, overlapping segments cut on the frames' grid.
        case mp3(MP3Joiner, JoinPlan.Codec)

        var codec: JoinPlan.Codec? {
            switch self {
            case .opus(_, let codec), .mp3(_, let codec): codec
            case .vorbis: .vorbis
            case .flac: nil
            }
        }
    }

    /// Takes one sentence's audio; a full segment is handed to the encoders.
    /// - Throws: `RenderError` when a segment could not be encoded or joined.
    func write(_ pcm: [Int16]) throws(RenderError) {
        buffer += pcm
        if case .flac(_, let md5) = joiner {
            md5.update(littleEndian: pcm)
            // Lossless: cut anywhere, at whole blocks.
            while buffer.count >= segmentSamples { try submit(count: segmentSamples, last: false) }
        } else if bufferStart + buffer.count - partStart >= segmentSamples {
            try submit(count: buffer.count, last: false)
        }
        try absorb()
    }

    /// Hands on what is left, waits for every segment and joins it.
    /// - Throws: `RenderError` when a segment could not be encoded or joined.
    func finish() throws(RenderError) {
        let total = bufferStart + buffer.count
        // The lossy codecs' last segment holds at least the lead-in of the cut before it.
        if joiner.codec != nil || !buffer.isEmpty || submitted == 0 { try submit(count: buffer.count, last: true) }
        try block { () throws(RenderError) in
            while joined < submitted {
                try waitForResult()
                try absorb()
            }
        }
        do {
            switch joiner {
            case .opus(let opus, _): try opus.finish(samples: UInt64(total * 48_000 / sourceRate))
            case .vorbis(let vorbis): try vorbis.finish(samples: total)
            case .flac(let flac, let md5): try flac.finish(md5: md5.digest())
            case .mp3(let mp3, _): try mp3.finish(samples: total)
            }
        } catch {
            throw RenderError(message: "cannot write: \(error)")
        }
    }

    /// Samples by which the joined audio at source sample `sample` lies after it (negative: before).
    func shift(at sample: Int) -> Int {
        shifts.last { $0.from <= sample }?.by ?? 0
    }

    /// Removes the segments' hidden files (after a failure).
    func abandon() {
        for number in joined..<submitted { unlink(segmentPath(number)) }
    }

    private func segmentPath(_ number: Int) -> String { "\(basePath).\(number)" }

    /// Hands the first `count` samples of the buffer to the encoders: the segment ends there (`last`: the
    /// source ends there); the lossy codecs' next segment begins a little before (`JoinPlan`).
    private func submit(count: Int, last: Bool) throws(RenderError) {
        try block { () throws(RenderError) in
            while submitted - joined >= 2 * pool.threads {
                try waitForResult()
                try absorb()
            }
        }
        let path = segmentPath(submitted)
        TemporaryFiles.add(path)
        let cut = bufferStart + count
        var keep = count
        if let codec = joiner.codec {
            if last {
                plans[submitted] = JoinPlan.last(codec, start: bufferStart, lower: nextLower, end: cut)
            } else {
                let (plan, next, lower) = JoinPlan.cut(codec, start: bufferStart, lower: nextLower, cut: cut)
                plans[submitted] = plan
                nextLower = lower
                keep = count - (next - bufferStart)
            }
        } else {
            plans[submitted] = JoinPlan.Segment(start: bufferStart, end: cut, keep: 0..<Int.max, handover: nil)
            keep = 0
        }
        pool.submit(EncoderPool.Job(number: submitted, pcm: Array(buffer[0..<count]), path: path, firstSample: bufferStart))
        buffer.removeFirst(count - keep)
        bufferStart = cut - keep
        partStart = cut
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
            guard let plan = plans.removeValue(forKey: joined) else { break }
            do {
                let segment = try FileDescriptor.open(path, O_RDONLY | O_CLOEXEC)
                defer { try? segment.close() }
                try join(segment, plan, after: joinedSamples)
            } catch {
                throw RenderError(message: "cannot join the encoded audio: \(error)")
            }
            joinedSamples = plan.end
            joined += 1
            onJoined?()
        }
    }

    /// Appends a segment whose part of the source begins at `cut`.
    private func join(_ segment: FileDescriptor, _ plan: JoinPlan.Segment, after cut: Int) throws {
        switch joiner {
        case .opus(let opus, _):
            try opus.append(segment, keep: UInt64(plan.keep.lowerBound)..<UInt64(plan.keep.upperBound))
        case .vorbis(let vorbis):
            try vorbis.append(segment, start: plan.start, handover: plan.handover)
            if plan.start > 0 { shifts.append((cut, vorbis.shift)) }
        case .flac(let flac, _): try flac.append(segment)
        case .mp3(let mp3, _): try mp3.append(segment, keep: plan.keep)
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
