import Testing
@testable import SpeechCore

/// The reading core without a worker or a sound server: inputs in, actions out, like `SpeechManagerTests`.
/// A fake engine answers each request with `samplesPerWord` samples per word, a word event before each.
@Suite struct ReadingTimelineTests {
    static let rate = 22_050
    static let samplesPerWord = 4_410  // 0.2 s

    /// "One two three. Four five. Six seven eight nine." in three sentences.
    static func utterance(id: UInt64 = 1, rate: Int = 175, markup: Bool = false) -> Utterance {
        let text = "One two three. Four five. Six seven eight nine."
        let ranges = [0..<14, 15..<25, 26..<47]
        let scalars = Array(text.unicodeScalars)
        let sentences = ranges.map { r in
            let sentenceText = String(String.UnicodeScalarView(scalars[r]))
            return Sentence(range: r, text: sentenceText, markup: markup ? "<speak>\(sentenceText)</speak>" : nil)
        }
        return Utterance(id: id, text: text, sentences: sentences, language: "en", voiceName: "English",
                         engineVoice: "gmw/en", rate: rate, pitch: 50, title: "One two three")
    }

    /// The requests among `actions`: tag, text.
    static func requests(_ actions: [TimelineAction]) -> [(tag: UInt32, text: String)] {
        actions.compactMap { if case let .synthesize(tag, text, _) = $0 { return (tag, text) } else { return nil } }
    }

    /// The frames a fake engine sends for `text`: per word, a word event and its audio; then the end.
    static func frames(tag: UInt32, text: String, samplesPerWord: Int = samplesPerWord) -> [SynthesisFrame] {
        var frames: [SynthesisFrame] = []
        var offset = 0
        var sample = 0
        for word in text.split(separator: " ", omittingEmptySubsequences: false) {
            let length = word.unicodeScalars.count
            if length > 0 {
                frames.append(.word(tag: tag, start: offset, length: length, sample: sample))
                frames.append(.audio(tag: tag, samples: Array(repeating: Int16(offset + 1), count: samplesPerWord)))
                sample += samplesPerWord
            }
            offset += length + 1
        }
        return frames + [.end(tag: tag, samples: sample)]
    }

    /// Feeds every frame of request `request` to `timeline`; returns the actions.
    static func answer(_ timeline: inout ReadingTimeline, _ request: (tag: UInt32, text: String), played: Int64 = 0,
                       writable: Int = 0) -> [TimelineAction] {
        frames(tag: request.tag, text: request.text).flatMap { timeline.received($0, played: played, writable: writable) }
    }

    @Test func startOpensAStreamAndAsksForTwoSentences() {
        var t = ReadingTimeline(sampleRate: Self.rate)
        let actions = t.start(Self.utterance(), at: 0, corked: false)
        #expect(actions.first == .openStream(title: "One two three", language: "en", corked: false))
        #expect(Self.requests(actions).map(\.text) == ["One two three.", "Four five."])
        #expect(actions.contains(.configure(voice: "gmw/en", rate: 175, pitch: 50)))
        // A second start ends the first run: its requests are cancelled and its stream closed first.
        let again = t.start(Self.utterance(), at: 2, corked: true)
        #expect(Array(again.prefix(2)) == [.cancel(Self.requests(actions).map(\.tag)), .closeStream])
        #expect(Self.requests(again).map(\.text) == ["Six seven eight nine."])
    }

    @Test func audioIsWrittenAsTheStreamTakesItAndEventsAreHeardInOrder() {
        var t = ReadingTimeline(sampleRate: Self.rate)
        let requests = Self.requests(t.start(Self.utterance(), at: 0, corked: false))
        _ = Self.answer(&t, requests[0])
        let write = t.feed(writable: 10_000)
        #expect(write == [.write(Array(repeating: 1, count: 4_410) + Array(repeating: 5, count: 4_410) + Array(repeating: 9, count: 1_180))])
        // Nothing heard yet at 0 samples but the sentence's start and its first word.
        #expect(t.nextHeard(played: 0)?.0 == .sentence(0))
        #expect(t.nextHeard(played: 0)?.0 == .word(0..<3))
        #expect(t.nextHeard(played: 0) == nil)
        #expect(t.nextHeard(played: 4_410)?.0 == .word(4..<7))
        #expect(t.nextTick(played: 4_410) == 200)   // the next word, 4,410 samples on
        #expect(t.durations.startSample(of: 1, in: Self.utterance()) == 3 * 4_410)
        // Many starts in one pass are each what one start is, in or out of order, past the end too.
        let u = Self.utterance()
        let one = [0, 1, 2, 3, 7].map { t.durations.startSample(of: $0, in: u) }
        #expect(t.durations.startSamples(of: [0, 1, 2, 3, 7], in: u) == one)
        #expect(t.durations.startSamples(of: [2, 0, 2], in: u) == [one[2], one[0], one[2]])
    }

    @Test func theLastSampleWrittenDrains() {
        var t = ReadingTimeline(sampleRate: Self.rate)
        let u = Self.utterance()
        var pending = Self.requests(t.start(u, at: 1, corked: false))
        var writes = 0
        while !pending.isEmpty {
            let request = pending.removeFirst()
            let actions = Self.answer(&t, request, writable: 1_000_000)
            pending += Self.requests(actions)
            writes += actions.filter { if case .write = $0 { return true } else { return false } }.count
        }
        #expect(writes > 0)
        #expect(t.isDraining)
        #expect(t.feed(writable: 100) == [])
    }

    @Test func seekLandsInsideASentenceByItsWords() throws {
        var t = ReadingTimeline(sampleRate: Self.rate)
        let u = Self.utterance()
        let requests = Self.requests(t.start(u, at: 0, corked: false))
        for r in requests { _ = Self.answer(&t, r) }
        // 0.3 s into the second sentence (2 words of 0.2 s): the middle of its second word.
        let target = t.durations.microseconds(3 * 4_410 + 6_615)
        #expect(t.locate(target, in: u, current: 0) == .sentence(1, skip: 6_615))
        #expect(t.locate(.max, in: u, current: 0) == .next)
        #expect(t.locate(.max, in: u, current: 2) == nil)
        #expect(t.locate(-5, in: u, current: 1) == .sentence(0, skip: 0))
        // The jump starts a run at sentence 1; the seek places it 6,615 samples in.
        let again = Self.requests(t.start(u, at: 1, corked: false))
        t.startInside(skip: 6_615)
        #expect(t.position(in: u, sentence: 1, played: 0) == target)
        // The new synthesis places the anchor's word (here at the same samples): nothing before it is written.
        _ = Self.answer(&t, again[0])
        let written = t.feed(writable: 100_000)
        #expect(written == [.write(Array(repeating: 6, count: 2_205))])
    }

    @Test func releaseAfterALongPauseKeepsThePlaceAndTheNextRunStartsThere() {
        var t = ReadingTimeline(sampleRate: Self.rate)
        let u = Self.utterance()
        let requests = Self.requests(t.start(u, at: 0, corked: false))
        _ = Self.answer(&t, requests[0])
        _ = t.feed(writable: 100_000)
        while t.nextHeard(played: 5_000) != nil {}
        let release = t.release(at: 0, of: u, played: 5_000)
        #expect(release.contains(.closeStream) && t.runID == nil)
        #expect(t.keptSentence(of: 1) == 0)
        #expect(t.position(in: u, sentence: 0, played: 0) == t.durations.microseconds(5_000))
        // Resume: a new run at the kept sentence, which skips what was heard.
        _ = t.start(u, at: 0, corked: false)
        #expect(t.position(in: u, sentence: 0, played: 0) == t.durations.microseconds(5_000))
        #expect(!t.hasKept(utterance: 1))
    }

    @Test func aLostServerKeepsTheSampleHeard() {
        var t = ReadingTimeline(sampleRate: Self.rate)
        let u = Self.utterance()
        let requests = Self.requests(t.start(u, at: 0, corked: false))
        for r in requests { _ = Self.answer(&t, r) }
        _ = t.feed(writable: 100_000)
        // Heard up to 2,000 samples into the second sentence when the server went away.
        let offset = t.heardInto(1, of: u, played: 3 * 4_410 + 2_000)
        #expect(offset == 2_000)
        #expect(t.discard().contains(.closeStream))
        t.keep(utterance: u.id, sentence: 1, offset: offset)
        #expect(t.position(in: u, sentence: 1, played: 0) == t.durations.microseconds(3 * 4_410 + 2_000))
    }

    @Test func aRateChangeMidWordCutsAtTheNextWordNotYetWritten() {
        var t = ReadingTimeline(sampleRate: Self.rate)
        let u = Self.utterance()
        let requests = Self.requests(t.start(u, at: 0, corked: false))
        _ = Self.answer(&t, requests[0])
        // 1.5 words written: the cut is the third word ("three."), whose audio is dropped.
        _ = t.feed(writable: 6_615)
        var faster = u
        faster.rate = 350
        let actions = t.changeProsody(faster, played: 2_000, writable: 0)
        // Every request in flight is dropped (the second sentence, and the third asked when the first ended).
        guard case .cancel(let dropped) = actions.first else { Issue.record("\(actions)"); return }
        #expect(dropped.contains(requests[1].tag) && dropped.count == 2)
        let asked = Self.requests(actions)
        #expect(asked.first?.text == "three.")
        #expect(actions.contains(.configure(voice: "gmw/en", rate: 350, pitch: 50)))
        // The sentence's length is what was kept plus the rest estimated at the new rate; the position did not move.
        #expect(t.durations.startSample(of: 1, in: faster) == 2 * 4_410 + t.durations.estimate(scalars: 6, rate: 350))
        #expect(t.position(in: faster, sentence: 0, played: 2_000) == t.durations.microseconds(2_000))
        // The rest's words map back into the utterance.
        _ = Self.answer(&t, (asked[0].tag, "three."))
        var heard: [HeardEvent] = []
        while let (event, _) = t.nextHeard(played: .max) { heard.append(event) }
        #expect(heard == [.sentence(0), .word(0..<3), .word(4..<7), .word(8..<14)])
    }

    @Test func inSSMLARateChangeWaitsForTheNextSentence() {
        var t = ReadingTimeline(sampleRate: Self.rate)
        let u = Self.utterance(markup: true)
        let requests = Self.requests(t.start(u, at: 0, corked: false))
        _ = t.received(.audio(tag: requests[0].tag, samples: [1, 2, 3]), played: 0, writable: 0)
        #expect(t.feed(writable: 3) == [.write([1, 2, 3])])
        var slower = u
        slower.rate = 100
        let actions = t.changeProsody(slower, played: 0, writable: 0)
        // The unit being synthesized is kept whole; the next is asked again at the new rate.
        #expect(actions.first == .cancel([requests[1].tag]))
        #expect(Self.requests(actions).map(\.text) == ["<speak>Four five.</speak>"])
    }

    @Test func synthesisIsHeldWhenFarAheadOfWhatIsHeard() {
        var t = ReadingTimeline(sampleRate: Self.rate)
        let requests = Self.requests(t.start(Self.utterance(), at: 0, corked: false))
        let chunk = [Int16](repeating: 0, count: 22_050)
        var held: [Bool] = []
        for _ in 0..<12 {
            for action in t.received(.audio(tag: requests[0].tag, samples: chunk), played: 0, writable: 0) {
                if case .holdSynthesis(let hold) = action { held.append(hold) }
            }
        }
        #expect(held == [true])
        // Once heard up to within the lookahead, the engine's output is read again.
        #expect(t.requestMore(played: 5 * 22_050).contains(.holdSynthesis(false)))
        // Ending the run lets go too.
        _ = t.received(.audio(tag: requests[0].tag, samples: chunk + chunk + chunk + chunk), played: 0, writable: 0)
        #expect(t.end().contains(.holdSynthesis(false)))
    }

    @Test(arguments: [
        (losses: 1, stops: false), (losses: 2, stops: false), (losses: 3, stops: true),
    ])
    func lossesInARowStopReading(losses: Int, stops: Bool) {
        var t = ReadingTimeline(sampleRate: Self.rate)
        var pending = Self.requests(t.start(Self.utterance(), at: 0, corked: false))
        var actions: [TimelineAction] = []
        for _ in 0..<losses {
            actions = t.lost(pending.removeFirst().tag, reason: "eSpeak NG crashed (signal 6)", played: 0, writable: 0)
            pending += Self.requests(actions)
        }
        let failed = actions.contains { if case .readingFailed = $0 { return true } else { return false } }
        #expect(failed == stops)
        #expect(actions.contains { if case .warn(let line) = $0 { return line.hasSuffix("; skipped it") } else { return false } })
    }

    @Test func aSentenceSynthesizedWholeResetsTheLosses() {
        var t = ReadingTimeline(sampleRate: Self.rate)
        let u = Self.utterance()
        let requests = Self.requests(t.start(u, at: 0, corked: false))
        var next = Self.requests(t.lost(requests[0].tag, reason: "x", played: 0, writable: 0))
        next += Self.requests(Self.answer(&t, requests[1]))
        let third = next.first { $0.text.hasPrefix("Six") }!
        let actions = t.lost(third.tag, reason: "x", played: 0, writable: 0)
        #expect(!actions.contains { if case .readingFailed = $0 { return true } else { return false } })
    }

    @Test func staleFramesAreIgnored() {
        var t = ReadingTimeline(sampleRate: Self.rate)
        let first = Self.requests(t.start(Self.utterance(), at: 0, corked: false))
        _ = t.start(Self.utterance(), at: 1, corked: false)
        #expect(Self.answer(&t, first[0], writable: 100_000) == [])
        #expect(t.lost(first[0].tag, reason: "x", played: 0, writable: 0) == [])
    }
}
