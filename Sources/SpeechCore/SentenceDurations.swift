/// What the reading knows of how long each sentence of one utterance sounds: the length of every sentence
/// synthesized so far (as heard: a sentence whose rate changed while it was read counts its old-rate start and
/// its new-rate rest), an estimate from its characters and the rate for the others, and where the words of
/// the most recent syntheses start (for `SeekAnchor`).
///
/// Positions and lengths in samples at `sampleRate`; published in µs (MPRIS2 `Position`, `mpris:length`).
public struct SentenceDurations: Equatable, Sendable {
    /// Samples per second of the audio these lengths count.
    public let sampleRate: Int
    /// The utterance these are for; anything else is estimated whole.
    public private(set) var utterance: UInt64?
    /// Synthesized length of each sentence in samples, nil where not synthesized (or forgotten).
    private var samples: [Int?] = []
    /// Word starts, in samples from the sentence's start, of at most `wordStartsKept` sentences.
    private var wordStarts: [Int: [Int64]] = [:]
    /// Where those words start in the sentence's text (Unicode scalars from its start), where known.
    private var wordTexts: [Int: [Int]] = [:]
    /// How many sentences' word starts are kept: those nearest the last one synthesized.
    static let wordStartsKept = 32

    /// Nothing known yet, for audio at `sampleRate` Hz.
    public init(sampleRate: Int) {
        self.sampleRate = sampleRate
    }

    /// Forgets everything unless these are already `u`'s.
    public mutating func begin(_ u: Utterance) {
        guard utterance != u.id else { return }
        utterance = u.id
        samples = Array(repeating: nil, count: u.sentences.count)
        wordStarts = [:]
        wordTexts = [:]
    }

    /// Makes room for the sentences `u` gained (`SpeechAction.extend`).
    public mutating func extend(to u: Utterance) {
        guard utterance == u.id, samples.count < u.sentences.count else { return }
        samples += Array(repeating: nil, count: u.sentences.count - samples.count)
    }

    /// Where sentence `index` of `u` starts in its audio, in samples (exact where synthesized, else estimated).
    public func startSample(of index: Int, in u: Utterance) -> Int64 {
        startSamples(of: [index], in: u)[0]
    }

    /// Where each of the sentences `indices` (ascending; sentence counts past the last mean its end) of `u`
    /// starts, samples, as `startSample(of:in:)` says: in one pass over the sentences before the last index,
    /// so that the start of every chapter of a book costs what one does.
    public func startSamples(of indices: [Int], in u: Utterance) -> [Int64] {
        let known = utterance == u.id ? samples : []
        var total: Int64 = 0, i = 0
        return indices.map { index in
            let end = min(max(index, 0), u.sentences.count)
            if end < i { return startSamples(of: [end], in: u)[0] }  // out of order: counted again from the start
            while i < end {
                if i < known.count, let n = known[i] { total += Int64(n) } else { total += estimate(u.sentences[i], rate: u.rate) }
                i += 1
            }
            return total
        }
    }

    /// The length of `u` as known now, µs: the sentences' lengths and the text not cut yet, estimated.
    public func length(of u: Utterance) -> Int64 {
        microseconds(startSample(of: u.sentences.count, in: u) + pendingEstimate(u))
    }

    /// `samples` in µs.
    public func microseconds(_ samples: Int64) -> Int64 {
        samples * 1_000_000 / Int64(sampleRate)
    }

    /// Samples to read sentence `s` at `rate` wpm, before it is synthesized.
    func estimate(_ s: Sentence, rate: Int) -> Int64 {
        estimate(scalars: s.range.count, rate: rate)
    }

    /// Samples to read `scalars` scalars of a sentence's text (to its end) at `rate` wpm: about 6 characters a
    /// word (with its space) plus a sentence pause of ~0.3 s.
    func estimate(scalars: Int, rate: Int) -> Int64 {
        let seconds = Double(scalars) / 6 / Double(max(rate, 1)) * 60 + 0.3
        return Int64(seconds * Double(sampleRate))
    }

    /// The text not cut into sentences yet, estimated in samples like the sentences before it (their mean
    /// length in scalars tells how many sentence pauses it holds).
    func pendingEstimate(_ u: Utterance) -> Int64 {
        guard u.pendingText > 0, let last = u.sentences.last else { return 0 }
        let perSentence = max(1, last.range.upperBound / u.sentences.count)
        let sentences = (u.pendingText + perSentence - 1) / perSentence
        let seconds = Double(u.pendingText) / 6 / Double(max(u.rate, 1)) * 60 + 0.3 * Double(sentences)
        return Int64(seconds * Double(sampleRate))
    }

    /// Sentence `index` was synthesized whole: `count` samples, its words starting at `words` (nil when its
    /// words are not known from its start, as for the rest of a sentence after a rate change), at `texts` in
    /// its text (scalars from its start, one per word, when known).
    mutating func record(_ index: Int, of u: UInt64, samples count: Int, words: [Int64]?, texts: [Int]? = nil) {
        guard utterance == u, index < samples.count else { return }
        samples[index] = count
        wordStarts[index] = words
        wordTexts[index] = words != nil && texts?.count == words?.count ? texts : nil
        if wordStarts.count > Self.wordStartsKept, let far = wordStarts.keys.max(by: { abs($0 - index) < abs($1 - index) }) {
            wordStarts[far] = nil
            wordTexts[far] = nil
        }
    }

    /// Sentence `index` is being synthesized again from a word on: until that ends, it is `prefix` samples kept
    /// plus the rest of its text (`scalars`) estimated at `rate`.
    mutating func restart(_ index: Int, of u: UInt64, prefix: Int64, scalars: Int, rate: Int) {
        guard utterance == u, index < samples.count else { return }
        samples[index] = Int(prefix + estimate(scalars: scalars, rate: rate))
    }

    /// Sentences before `index` keep the lengths they had under `old`'s rate (estimates are frozen), so a rate
    /// change does not move the position counted from them.
    mutating func freeze(before index: Int, of old: Utterance) {
        guard utterance == old.id else { return }
        for i in 0..<min(index, samples.count) where samples[i] == nil {
            samples[i] = Int(estimate(old.sentences[i], rate: old.rate))
        }
    }

    /// Sentences from `index` on will be synthesized again at new settings: their lengths are estimated again
    /// and their word starts forgotten.
    mutating func forget(from index: Int, of u: UInt64) {
        guard utterance == u, index < samples.count else { return }
        for i in index..<samples.count { samples[i] = nil }
        wordStarts = wordStarts.filter { $0.key < index }
        wordTexts = wordTexts.filter { $0.key < index }
    }

    /// Where the words of sentence `index` started in its last synthesis, if known.
    func words(of index: Int) -> [Int64]? { wordStarts[index] }

    /// Where, in samples from the start of sentence `index` (its last synthesis), the word that holds text
    /// offset `offset` (scalars from the sentence's start) starts: the last word starting at or before it.
    /// Nil when the sentence's words are not known, or the offset lies in its first word.
    public func wordSample(at offset: Int, inSentence index: Int) -> Int64? {
        guard let starts = wordStarts[index], let texts = wordTexts[index],
              let word = texts.lastIndex(where: { $0 <= offset }), word > 0 else { return nil }
        return starts[word]
    }
}
