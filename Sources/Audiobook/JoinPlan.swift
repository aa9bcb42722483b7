/// Where the segments of one rendering, encoded apart, overlap and hand over, so that the joined stream holds
/// the source's samples where the source has them.
///
/// Every segment after the first is encoded from a little before the cut (its lead-in, so that its encoder
/// has settled by the hand-over point), and the joiner drops the lead-in's frames and the previous segment's
/// frames after the hand-over point. MP3 and Opus encoders cut their input into frames of a fixed length from
/// their first sample: a segment starts a whole number of frames after the previous one, so that both share
/// the frame boundary where they hand over, which makes the join exact to the sample. Vorbis blocks vary with
/// the signal: the joiner chooses the hand-over in a window (`OggVorbisJoiner`).
///
/// Positions are samples of the source (the rendering's PCM, from its start) unless said otherwise; `keep` is
/// in the samples the codec decodes (48 kHz for Opus).
public enum JoinPlan {
    /// A codec whose segments are joined this way.
    public enum Codec: Sendable, Equatable {
        /// LAME through libsndfile: frames of `frameSamples` (576 at MPEG-2 rates), input sample 0 decoded at
        /// `MP3Joiner.codecDelay`.
        case mp3(frameSamples: Int)
        /// libopus through libsndfile at 48 kHz from a source at `sourceRate` Hz: packets of 20 ms, input
        /// sample 0 decoded after the pre-skip.
        case opus(sourceRate: Int, preSkip: Int)
        /// libvorbis: the joiner chooses the hand-over in a window.
        case vorbis
    }

    /// One segment's part in the joined stream.
    public struct Segment: Equatable, Sendable {
        /// The source sample of its first input sample.
        public var start: Int
        /// Where its part of the source ends: the cut (the next segment's part begins there), or the end.
        public var end: Int
        /// MP3 and Opus: the decoded samples of its own stream (from its first frame) that the joined stream
        /// takes.
        public var keep: Range<Int>
        /// Vorbis: the source samples where a block centre of it may hand over to the next; nil for the last.
        public var handover: Range<Int>?

        /// A segment from `start` to `end` taking `keep` of its decoded samples, handing over in `handover`.
        public init(start: Int, end: Int, keep: Range<Int>, handover: Range<Int>?) {
            self.start = start
            self.end = end
            self.keep = keep
            self.handover = handover
        }
    }

    /// Source samples a segment after the first is encoded ahead of its cut: MP3 about 136 ms (the hand-over
    /// 52 ms before the cut, then 2 frames and LAME's delay), Opus 80 ms, Vorbis about 163 ms.
    static func leadIn(_ codec: Codec) -> Int {
        switch codec {
        case .mp3: 3_000
        case .opus: 1_764
        case .vorbis: 3_584
        }
    }

    /// The segment from `start` (its kept part from `lower`, in its own decoded samples) cut at `cut`, and
    /// the next segment's start and lower bound. `start` must come from this function or be 0.
    public static func cut(_ codec: Codec, start: Int, lower: Int, cut: Int) -> (segment: Segment, nextStart: Int, nextLower: Int) {
        switch codec {
        case .mp3(let frame):
            // Frames end where the decoded position (input + codec delay) is a multiple of the frame.
            let delay = MP3Joiner.codecDelay
            let next = start + frame * ((cut - leadIn(codec) - start) / frame)
            // Hand over 1,152 samples (two MPEG-2 granules) or more before the cut: LAME's frames there see the
            // input up to the cut, not the silence it ends on.
            let handover = next - delay + frame * ((cut - 1_152 - next + delay) / frame)
            return (Segment(start: start, end: cut, keep: lower..<(handover - start + delay), handover: nil),
                    next, handover - next + delay)
        case .opus(let rate, let preSkip):
            let grid = opusGrid(sourceRate: rate)
            let next = start + grid * ((cut - leadIn(codec) - start) / grid)
            func at48(_ sample: Int) -> Int { sample * 48_000 / rate }
            let handover = at48(next) - preSkip + 960 * ((at48(cut) - 960 - at48(next) + preSkip) / 960)
            return (Segment(start: start, end: cut, keep: lower..<(handover - at48(start) + preSkip), handover: nil),
                    next, handover - at48(next) + preSkip)
        case .vorbis:
            let next = start + 128 * ((cut - leadIn(codec) - start) / 128)
            return (Segment(start: start, end: cut, keep: 0..<Int.max, handover: (cut - 1_536)..<(cut - 512)), next, 0)
        }
    }

    /// The last segment, from `start` (its kept part from `lower`) to `end`, the source's end.
    public static func last(_ codec: Codec, start: Int, lower: Int, end: Int) -> Segment {
        Segment(start: start, end: end, keep: lower..<Int.max, handover: nil)
    }

    /// Source samples in one 20 ms Opus packet's grid step whose 48 kHz count is whole: 441 at 22,050 Hz.
    public static func opusGrid(sourceRate: Int) -> Int {
        func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }
        let step = 960 * sourceRate
        return step / gcd(step, 48_000)
    }
}
