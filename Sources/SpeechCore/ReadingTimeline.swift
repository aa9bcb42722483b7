/// What the reading core asks its driver to do, in order.
public enum TimelineAction: Equatable, Sendable {
    /// Select voice, rate (wpm) and pitch for the requests that follow.
    case configure(voice: String, rate: Int, pitch: Int)
    /// Synthesize `text` (an SSML document when `ssml`); its frames carry `tag`.
    case synthesize(tag: UInt32, text: String, ssml: Bool)
    /// The requests `tags` are no longer wanted.
    case cancel([UInt32])
    /// Stop (true) or go on (false) reading the engine's output: more than the lookahead is synthesized ahead.
    case holdSynthesis(Bool)
    /// Open a new stream for the run (named `title`, announcing `language`), corked or playing.
    case openStream(title: String, language: String, corked: Bool)
    /// Write these samples to the stream.
    case write([Int16])
    /// Everything is written: drain the stream (its end is reported by `drained`).
    case drain
    /// Close the run's stream at once (queued audio is discarded).
    case closeStream
    /// The stream's language changed (`media.language`): the sentence now heard is in another language.
    case announceLanguage(String)
    /// Log this line (a warning): what went wrong, naming the sentence.
    case warn(String)
    /// Tell the state machine: sentence `index` could not be read (`message`, one line); reading goes on.
    case sentenceFailed(index: Int, message: String)
    /// Tell the state machine: reading cannot go on (`message`, one line).
    case readingFailed(message: String)
}

/// A frame of synthesis for the reading core (the engine's `WorkerFrame`, without its transport).
public enum SynthesisFrame: Equatable, Sendable {
    case audio(tag: UInt32, samples: [Int16])
    case word(tag: UInt32, start: Int, length: Int, sample: Int)
    case end(tag: UInt32, samples: Int)
    case failed(tag: UInt32, message: String)
}

/// Something of the reading heard at the moment it plays.
public enum HeardEvent: Equatable, Sendable {
    case sentence(Int)
    case word(Range<Int>)
}

/// Where a seek lands (`ReadingTimeline.locate`).
public enum SeekTarget: Equatable, Sendable {
    /// Sentence `index`, `skip` samples in.
    case sentence(Int, skip: Int64)
    /// Past the end of the text: the next sentence (MPRIS2 Seek: "act as though Next was called").
    case next
}

/// The pure reading core: the timeline of the reading in progress, as `SpeechManager` is its states.
///
/// It knows the utterance's sentences' lengths (`SentenceDurations`), the run being played (`ReadingRun`:
/// requests in flight, audio synthesized and written, events waiting, the skip of a seek or resume, the
/// prosody cut), and where a released stream or a lost sound server left off. Each input (a start, a frame
/// from the engine, writable space, a tick with the samples played) returns `TimelineAction`s that the driver
/// (`ReadingEngine`) carries out; nothing here does I/O. Samples at `durations.sampleRate`.
public struct ReadingTimeline: Equatable, Sendable {
    /// How far synthesis may run ahead of what is heard, in seconds of audio.
    public static let lookaheadSeconds = 10
    /// Sentences lost to the engine in a row that stop the reading.
    public static let maximumConsecutiveLosses = 3

    /// The lengths known of the current utterance's sentences.
    public internal(set) var durations: SentenceDurations
    var run: ReadingRun?
    /// Where a released stream or a lost sound server left off: utterance, sentence, samples heard into it.
    var kept: (utterance: UInt64, sentence: Int, offset: Int64)?
    private var nextTag: UInt32 = 1
    private var nextRun: UInt64 = 1

    /// An idle timeline for audio at `sampleRate` Hz.
    public init(sampleRate: Int) {
        durations = SentenceDurations(sampleRate: sampleRate)
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.durations == b.durations && a.run == b.run && a.kept?.utterance == b.kept?.utterance
            && a.kept?.sentence == b.kept?.sentence && a.kept?.offset == b.kept?.offset
    }

    var lookahead: Int64 { Int64(Self.lookaheadSeconds * durations.sampleRate) }

    /// The run being played, if any (its number changes with every start).
    public var runID: UInt64? { run?.id }

    /// Whether the run has written everything and waits for the stream to drain.
    public var isDraining: Bool { run?.draining ?? false }

    /// Whether a place was kept to resume from (a released stream, a lost sound server) for utterance `id`.
    public func hasKept(utterance id: UInt64) -> Bool { kept?.utterance == id }

    /// The sentence a resume of utterance `id` starts at, if a place was kept for it.
    public func keptSentence(of id: UInt64) -> Int? { kept?.utterance == id ? kept?.sentence : nil }

    // MARK: runs

    /// Starts a run of `u` at `sentence` (the previous one ends): a new stream, corked or not, and the first
    /// requests. Starts inside the sentence where a place was kept there.
    public mutating func start(_ u: Utterance, at sentence: Int, corked: Bool, played: Int64 = 0) -> [TimelineAction] {
        var actions = end()
        durations.begin(u)
        let language = u.voice(ofSentence: sentence).language
        actions.append(.openStream(title: u.title, language: language, corked: corked))
        var run = ReadingRun(id: nextRun, utterance: u, firstSentence: sentence)
        nextRun += 1
        run.start(inside: keptOffset(at: sentence, of: u.id), words: durations.words(of: sentence))
        kept = nil
        self.run = run
        return actions + requestMore(played: played)
    }

    /// Ends the run, if any: its requests are cancelled and its stream closed. The kept place stays.
    public mutating func end() -> [TimelineAction] {
        guard let run else { return [] }
        self.run = nil
        var actions: [TimelineAction] = [.cancel(run.inFlight.map(\.tag)), .closeStream]
        if run.holding { actions.append(.holdSynthesis(false)) }
        return actions
    }

    /// Ends the run and forgets any kept place (`SpeechAction.discard`).
    public mutating func discard() -> [TimelineAction] {
        kept = nil
        return end()
    }

    /// Ends the run of a long pause, keeping the place heard in `sentence` (the current one) of `u`.
    public mutating func release(at sentence: Int, of u: Utterance, played: Int64) -> [TimelineAction] {
        guard run != nil else { return [] }
        let offset = heardInto(sentence, of: u, played: played)
        let actions = end()
        kept = (u.id, sentence, offset)
        return actions
    }

    /// Samples heard into `sentence` of `u` by the run (0 without one).
    public func heardInto(_ sentence: Int, of u: Utterance, played: Int64) -> Int64 {
        guard let run else { return 0 }
        let heard = durations.startSample(of: run.firstSentence, in: u) + min(run.heard(played: played), run.timeline)
        return max(0, heard - durations.startSample(of: sentence, in: u))
    }

    /// Keeps `offset` samples heard into `sentence` of utterance `id`, where the next run there starts.
    public mutating func keep(utterance id: UInt64, sentence: Int, offset: Int64) {
        kept = (id, sentence, offset)
    }

    private func keptOffset(at sentence: Int, of id: UInt64) -> Int64 {
        guard let kept, kept.sentence == sentence, kept.utterance == id else { return 0 }
        return kept.offset
    }

    // MARK: position

    /// Position heard in `u`, µs (clamped to `length` by the caller): from the run, or from the sentence and
    /// the place kept there.
    public func position(in u: Utterance, sentence: Int, played: Int64) -> Int64 {
        guard let run else {
            return durations.microseconds(durations.startSample(of: sentence, in: u) + keptOffset(at: sentence, of: u.id))
        }
        // Never past what was synthesized, but a seek's target counts as heard before its audio arrives.
        let heard = max(run.skip, min(run.heard(played: played), run.timeline)) - run.shift
        return durations.microseconds(durations.startSample(of: run.firstSentence, in: u) + heard)
    }

    /// Where `target` µs of `u` lies (below 0 → 0); nil past the end of its last sentence when `current` is
    /// the last one.
    public func locate(_ target: Int64, in u: Utterance, current: Int) -> SeekTarget? {
        // µs → samples without overflow: Seek(Int64.max) is a valid call (it acts as Next).
        let (scaled, overflow) = max(0, target).multipliedReportingOverflow(by: Int64(durations.sampleRate))
        let t = overflow ? Int64.max : scaled / 1_000_000
        if t >= durations.startSample(of: u.sentences.count, in: u) {
            return current + 1 < u.sentences.count ? .next : nil
        }
        var index = 0
        while index + 1 < u.sentences.count && durations.startSample(of: index + 1, in: u) <= t { index += 1 }
        return .sentence(index, skip: t - durations.startSample(of: index, in: u))
    }

    /// The run (just started by a jump) begins `skip` samples into its first sentence.
    public mutating func startInside(skip: Int64) {
        guard run != nil else { return }
        run!.start(inside: skip, words: durations.words(of: run!.firstSentence))
    }

    // MARK: synthesis

    /// Keeps synthesis ahead of playback by up to the lookahead, with at most two requests in flight, and
    /// holds the engine's output while further ahead than that.
    public mutating func requestMore(played: Int64) -> [TimelineAction] {
        var actions = hold(played: played)
        let lookahead = lookahead
        while let index = run?.sentenceToRequest(played: played, lookahead: lookahead) {
            let sentence = run!.utterance.sentences[index]
            let (tag, asked) = request(sentence.markup ?? sentence.heard, ssml: sentence.markup != nil, index: index, of: run!.utterance)
            actions += asked
            run!.inFlight.append(.init(tag: tag, index: index))
            run!.nextToRequest += 1
        }
        return actions
    }

    private mutating func hold(played: Int64) -> [TimelineAction] {
        let lookahead = lookahead
        guard let holding = run?.updateHolding(played: played, lookahead: lookahead, resume: 0) else { return [] }
        return [.holdSynthesis(holding)]
    }

    /// A new tag, and the configuration and the request for `text` of sentence `index` of `u`.
    mutating func request(_ text: String, ssml: Bool, index: Int, of u: Utterance) -> (UInt32, [TimelineAction]) {
        let tag = nextTag
        nextTag = nextTag == UInt32.max ? 1 : nextTag + 1
        return (tag, [.configure(voice: u.voice(ofSentence: index).engineVoice, rate: u.rate, pitch: u.pitch),
                      .synthesize(tag: tag, text: text, ssml: ssml)])
    }

    /// A frame from the engine; stale tags are ignored. `writable`: samples the stream takes now.
    ///
    /// The run is changed in place (`run!`, `run?`), here and in every input: a copy of it (`guard var run`)
    /// would share its audio buffer with `self.run`, and the first append would copy the whole buffer (up to
    /// the lookahead, ~430 KB at 22,050 Hz) on every frame.
    public mutating func received(_ frame: SynthesisFrame, played: Int64, writable: Int) -> [TimelineAction] {
        switch frame {
        case .audio(let tag, let samples):
            guard run?.begin(tag) != nil else { return [] }
            run!.append(samples)
            return hold(played: played) + feed(writable: writable)
        case .word(let tag, let start, let length, let sample):
            guard let index = run?.begin(tag) else { return [] }
            let moved = run!.word(tag, index: index, start: start, length: length, sample: sample)
            return moved ? feed(writable: writable) : []
        case .end(let tag, let samples):
            guard let index = run?.begin(tag), let entry = run!.inFlight.first(where: { $0.tag == tag }) else { return [] }
            durations.record(index, of: run!.utterance.id, samples: Int(entry.prefix) + samples,
                             words: entry.textOffset == 0 ? run!.words[tag] ?? [] : nil,
                             texts: entry.textOffset == 0 ? run!.wordTexts[tag] ?? [] : nil)
            run!.consecutiveLosses = 0
            return finish(tag, played: played, writable: writable)
        case .failed(let tag, let message):
            guard let index = run?.begin(tag) else { return [] }
            return [.warn("sentence \(index + 1) not read: \(message)"), .sentenceFailed(index: index, message: message)]
                + finish(tag, played: played, writable: writable)
        }
    }

    /// The engine lost request `tag` (it crashed or hung, `reason`): its sentence is skipped, or reading stops
    /// after `maximumConsecutiveLosses` in a row.
    public mutating func lost(_ tag: UInt32, reason: String, played: Int64, writable: Int) -> [TimelineAction] {
        guard let index = run?.begin(tag) else { return [] }
        run!.consecutiveLosses += 1
        let losses = run!.consecutiveLosses
        let excerpt = run!.utterance.sentences[index].excerpt
        let skipped = TimelineAction.warn("\(reason) on sentence \(index + 1) (\"\(excerpt)\"); skipped it")
        if losses >= Self.maximumConsecutiveLosses {
            let message = "the speech engine failed on \(losses) sentences in a row (\(reason)); reading stopped"
            return [skipped, .warn(message), .readingFailed(message: message)]
        }
        return [skipped, .sentenceFailed(index: index, message: "\(reason) on sentence \(index + 1); skipped it")]
            + finish(tag, played: played, writable: writable)
    }

    private mutating func finish(_ tag: UInt32, played: Int64, writable: Int) -> [TimelineAction] {
        run?.finish(tag)
        return requestMore(played: played) + feed(writable: writable)
    }

    // MARK: playback

    /// Writes what the stream takes (`writable` samples); drains once everything of the utterance is written.
    public mutating func feed(writable: Int) -> [TimelineAction] {
        guard let samples = run?.take(writable: writable) else { return [] }
        var actions: [TimelineAction] = samples.isEmpty ? [] : [.write(samples)]
        if run!.startDraining() { actions.append(.drain) }
        return actions
    }

    /// The next event heard by `played` samples of the stream (`Int64.max`: everything, at the end), with the
    /// language to announce when a sentence in another language begins. Words seeked over are not heard.
    public mutating func nextHeard(played: Int64) -> (HeardEvent, [TimelineAction])? {
        guard let (event, language) = run?.nextHeard(played: played) else { return nil }
        return (event, language.map { [.announceLanguage($0)] } ?? [])
    }

    /// When to look again for events (ms): at the next one, at least every 250 ms to keep synthesis ahead.
    public func nextTick(played: Int64) -> UInt32 {
        guard let run, let next = run.events.first else { return 250 }
        let due = (next.sample - run.heard(played: played)) * 1000 / Int64(durations.sampleRate)
        return UInt32(min(250, max(2, due)))
    }

    // MARK: the text changes while it is read

    /// More sentences of `u` were cut (`SpeechAction.extend`): the run goes on into them.
    public mutating func extend(_ u: Utterance, played: Int64, writable: Int) -> [TimelineAction] {
        durations.extend(to: u)
        guard run?.utterance.id == u.id else { return [] }
        run!.utterance = u
        return requestMore(played: played) + feed(writable: writable)
    }

    /// Drops the run's copy of `id`'s sentences before the manager appends to its own, so that it appends
    /// without copying them.
    public mutating func releaseSentences(of id: UInt64) {
        if run?.utterance.id == id { run!.utterance.sentences = [] }
    }
}
