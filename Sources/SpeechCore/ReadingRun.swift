/// One stream playing one utterance from one sentence on: what was asked of the engine, what came back, what
/// was written to the stream, and the events waiting to be heard. A value type owned by `ReadingTimeline`.
///
/// Samples count the run's *timeline*: the audio synthesized for this run, from the start of its first
/// sentence. The stream plays that timeline from `skip` on (a seek or a resume inside the first sentence).
struct ReadingRun: Equatable, Sendable {
    /// An event, at the sample of the run's timeline where it is heard.
    struct Event: Equatable, Sendable {
        enum Kind: Equatable, Sendable { case sentence(Int), word(Range<Int>, sentence: Int) }
        var sample: Int64
        var kind: Kind
    }

    /// A request in flight. `textOffset` > 0: the rest of sentence `index` from that scalar on (after a
    /// prosody change), whose audio follows `prefix` samples of the same sentence already in the timeline.
    struct Request: Equatable, Sendable {
        var tag: UInt32
        var index: Int
        var textOffset = 0
        var prefix: Int64 = 0
    }

    /// Which run this is (runs of one timeline are numbered from 1).
    let id: UInt64
    /// The utterance, with the rate and pitch now in force.
    var utterance: Utterance
    let firstSentence: Int
    /// Next sentence to ask the engine for.
    var nextToRequest: Int
    /// Requests in flight, in order.
    var inFlight: [Request] = []
    /// Where each sentence's audio starts in the timeline.
    var sentenceAt: [Int: Int64] = [:]
    /// Where each request's audio starts in the timeline, set at its first frame.
    var sentenceStart: [UInt32: Int64] = [:]
    /// Synthesized audio not yet written to the stream: `pcm[pcmStart...]`.
    var pcm: [Int16] = []
    var pcmStart = 0
    /// Samples synthesized for this run so far.
    var timeline: Int64 = 0
    /// Events not yet heard, in order of their samples.
    var events: [Event] = []
    /// Everything is written and the stream was asked to drain.
    var draining = false
    /// Sentences lost to the engine since one was last synthesized whole.
    var consecutiveLosses = 0
    /// The language the stream announces (`media.language`): that of the sentence being heard.
    var streamLanguage: String
    /// Samples of the timeline not to be played (a place inside the first sentence), and how many of them
    /// have been dropped so far.
    var skip: Int64 = 0
    var skipped: Int64 = 0
    /// Where in its first sentence this run starts, by word, until that sentence's synthesis has ended.
    var anchor: SeekAnchor?
    /// `skip` as placed by the anchor minus `skip` as asked: the position is reported as asked.
    var shift: Int64 = 0
    /// Word starts of each plain request in flight, in samples from its start.
    var words: [UInt32: [Int64]] = [:]
    /// Where those words start in their sentence's text (scalars from its start), in the same order.
    var wordTexts: [UInt32: [Int]] = [:]
    /// Whether the engine's output is held back (more than the lookahead is synthesized ahead).
    var holding = false

    init(id: UInt64, utterance: Utterance, firstSentence: Int) {
        self.id = id
        self.utterance = utterance
        self.firstSentence = firstSentence
        self.nextToRequest = firstSentence
        self.streamLanguage = utterance.voice(ofSentence: firstSentence).language
    }

    /// The point of the timeline being heard, given the samples the stream has played.
    func heard(played: Int64) -> Int64 { skip + played }

    /// Word starts so far of the request whose audio starts the timeline.
    var firstWords: [Int64] { sentenceStart.first { $0.value == 0 }.flatMap { words[$0.key] } ?? [] }

    /// All sentences of the utterance have been synthesized (or skipped), and none is left to be cut.
    var synthesisDone: Bool { nextToRequest >= utterance.sentences.count && inFlight.isEmpty && utterance.isComplete }

    /// The first sample of the timeline not yet written to the stream (nor skipped).
    var written: Int64 { max(timeline - Int64(pcm.count - pcmStart), skip) }

    /// The sentence index for `tag` if it belongs to this run; on its first frame, marks where its audio starts
    /// and queues its sentence event there.
    mutating func begin(_ tag: UInt32) -> Int? {
        guard let entry = inFlight.first(where: { $0.tag == tag }) else { return nil }
        if sentenceStart[tag] == nil {
            sentenceStart[tag] = timeline
            if entry.textOffset == 0 { // a continuation goes on in a sentence already announced
                sentenceAt[entry.index] = timeline
                events.append(Event(sample: timeline, kind: .sentence(entry.index)))
            }
        }
        return entry.index
    }

    /// Starts the run `skip` samples into its first sentence, as measured in that sentence's last synthesis
    /// (`words`, when known): the place is then taken by word (`SeekAnchor`).
    mutating func start(inside skip: Int64, words: [Int64]?) {
        self.skip = skip
        anchor = skip > 0 ? words.map { SeekAnchor(offset: skip, wordStarts: $0) } : nil
    }

    /// Samples of the timeline to write now, at most `writable`; nil while the anchor's word is not placed or
    /// the skip not reached. Drops the skipped audio on the way.
    mutating func take(writable: Int) -> [Int16]? {
        if let anchor, anchor.skip(newWordStarts: firstWords) == nil { return nil }
        if skipped < skip {
            let drop = Int(min(skip - skipped, Int64(pcm.count - pcmStart)))
            pcmStart += drop
            skipped += Int64(drop)
            if skipped < skip { return nil }
        }
        guard writable > 0 && pcmStart < pcm.count else { return [] }
        let n = min(writable, pcm.count - pcmStart)
        let out = Array(pcm[pcmStart..<pcmStart + n])
        pcmStart += n
        if pcmStart > 262_144 { pcm.removeFirst(pcmStart); pcmStart = 0 }
        return out
    }

    /// Appends synthesized audio to the timeline.
    mutating func append(_ samples: [Int16]) {
        pcm.append(contentsOf: samples)
        timeline += Int64(samples.count)
    }

    /// The next sentence to ask the engine for, given `played` samples heard: while fewer than two requests
    /// are in flight and less than `lookahead` samples are synthesized ahead of what is heard.
    func sentenceToRequest(played: Int64, lookahead: Int64) -> Int? {
        guard nextToRequest < utterance.sentences.count, inFlight.count < 2,
              timeline - heard(played: played) < lookahead else { return nil }
        return nextToRequest
    }

    /// Holds the engine's output while more than `lookahead` samples are synthesized ahead of what is heard,
    /// and reads it again once that falls to `lookahead - resume`; returns the new `holding` when it changed.
    mutating func updateHolding(played: Int64, lookahead: Int64, resume: Int64) -> Bool? {
        let ahead = timeline - heard(played: played)
        let hold = holding ? ahead > lookahead - resume : ahead > lookahead
        guard hold != holding else { return nil }
        holding = hold
        return hold
    }

    /// Whether the run is to drain now: everything synthesized and written, and no drain asked yet.
    mutating func startDraining() -> Bool {
        guard synthesisDone && pcmStart == pcm.count && !draining else { return false }
        draining = true
        return true
    }

    /// The next event heard by `played` samples of the stream (`Int64.max`: everything), and the language the
    /// stream is to announce when it is a sentence in another language. Words before `skip` are dropped.
    mutating func nextHeard(played: Int64) -> (HeardEvent, language: String?)? {
        let heard = played == .max ? .max : heard(played: played)
        while let e = events.first, e.sample <= heard {
            events.removeFirst()
            switch e.kind {
            case .sentence(let index):
                let language = utterance.voice(ofSentence: index).language
                guard language != streamLanguage else { return (.sentence(index), nil) }
                streamLanguage = language
                return (.sentence(index), language)
            case .word(let range, _):
                if e.sample >= skip { return (.word(range), nil) }
            }
        }
        return nil
    }

    /// A word frame of request `tag`: queues its event, and moves the skip to the anchor's word once placed.
    /// Returns whether the skip moved.
    mutating func word(_ tag: UInt32, index: Int, start: Int, length: Int, sample: Int) -> Bool {
        guard let base = sentenceStart[tag], let entry = inFlight.first(where: { $0.tag == tag }) else { return false }
        let sentence = utterance.sentences[index]
        let offset = sentence.range.lowerBound + entry.textOffset
        // The engine counts in what it read: a sentence's spoken form maps back to its written text.
        var written = start..<start + length
        if let spoken = sentence.spoken {
            written = (entry.textOffset == 0 ? spoken : spoken.suffix(fromWritten: entry.textOffset)).writtenRange(written)
        }
        events.append(Event(sample: base + Int64(sample), kind: .word(offset + written.lowerBound..<offset + written.upperBound, sentence: index)))
        guard entry.textOffset == 0 else { return false }
        words[tag, default: []].append(Int64(sample))
        wordTexts[tag, default: []].append(written.lowerBound)
        guard let anchor, index == firstSentence, base == 0, let placed = anchor.skip(newWordStarts: words[tag]!) else {
            return false
        }
        let asked = skip - shift
        skip = max(skipped, placed) // word frames come before the audio that holds them
        shift = skip - asked
        return true
    }

    /// Request `tag` is over (ended, failed or lost).
    mutating func finish(_ tag: UInt32) {
        if sentenceStart[tag] == 0 { anchor = nil } // its words are all known: the skip is final
        words[tag] = nil
        wordTexts[tag] = nil
        inFlight.removeAll { $0.tag == tag }
    }
}
