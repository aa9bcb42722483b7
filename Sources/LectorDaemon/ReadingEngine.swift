import Audio
import GLibKit
import SpeechCore
import Synthesis

/// Carries out what the two pure cores decide: `SpeechManager` (the states) and `ReadingTimeline` (the
/// run's timeline). It feeds them their inputs (calls, frames from the worker, the stream's writable space and
/// played samples, ticks, the sound going away) and carries out their actions on the engine (`SpeechEngine`),
/// the sound (`Playback`) and the timers. All of it runs on the GLib main loop.
final class ReadingEngine {
    private(set) var manager = SpeechManager()
    private(set) var timeline: ReadingTimeline
    /// The rate of the engine's audio and of the stream, in Hz.
    var sampleRate: Int { timeline.durations.sampleRate }

    /// An event, at the moment it is heard, with the position heard then (µs).
    var onEvent: ((SpeechEvent, Int64) -> Void)?
    /// Something clients may show changed (state, utterance, sentence, length, volume): announce it, coalesced.
    var onChange: (() -> Void)?
    /// Cuts the rest of the current utterance into sentences now, when it is still being cut in slices
    /// (`Utterance.pendingText` > 0; see `PendingSentences`). Called before anything that needs every sentence.
    var prepareRest: (() -> Void)?

    /// The sound: its stream, the volume clients set and the fade of the sleep timer.
    let playback: Playback
    private let synthesis: any SpeechEngine
    /// The next event to be heard, or at least the next look at keeping synthesis ahead.
    private let tick = OneShotTimer()
    /// Closes the stream after a long pause.
    private let release = OneShotTimer()
    /// The sound went away while Lector was reading, and nothing but Play was asked since: reading goes on
    /// when the sound server is back.
    private var playWhenBack = false
    /// The start of the message of an error raised because there is no sound output (`FailureNotifier` says
    /// "No sound output" for it).
    static let noOutputPrefix = "no sound output: "

    init(server: SoundServer, synthesis: any SpeechEngine) {
        timeline = ReadingTimeline(sampleRate: synthesis.sampleRate)
        playback = Playback(server: server, sampleRate: synthesis.sampleRate)
        self.synthesis = synthesis
        synthesis.onFrame = { [unowned self] frame in
            guard let frame = SynthesisFrame(frame) else { return }
            self.carryOut(self.timeline.received(frame, played: self.played, writable: self.writable))
        }
        synthesis.onLost = { [unowned self] tag, reason in
            self.carryOut(self.timeline.lost(tag, reason: reason, played: self.played, writable: self.writable))
        }
        synthesis.onUnavailable = { [unowned self] reason in
            Log.warning(reason)
            self.perform(self.manager.failed(reason))
        }
        playback.onWritable = { [unowned self] in self.carryOut(self.timeline.feed(writable: self.writable)) }
        playback.onDrained = { [unowned self] in self.drained() }
        playback.onLost = { [unowned self] reason in self.outputLost(reason) }
        playback.onBack = { [unowned self] in
            guard self.playWhenBack, self.manager.state == .paused else { return }
            self.playWhenBack = false
            Log.message("the sound server is back: reading goes on")
            self.perform(self.manager.resume())
        }
    }

    private var played: Int64 { playback.played }
    private var writable: Int { playback.writable }

    // MARK: inputs

    /// Applies one transition of the state machine: `body` gets the manager, returns its actions, which are
    /// carried out in order. Errors from the manager are rethrown before anything happened.
    func apply(_ body: (inout SpeechManager) throws(SpeechError) -> [SpeechAction]) throws(SpeechError) {
        let before = manager.state
        let actions = try body(&manager)
        // Pause or stop asked after the sound went away: it stays so when the server comes back.
        if manager.state != before || manager.state == .stopped { playWhenBack = false }
        perform(actions)
    }

    /// Pause was asked: nothing goes on by itself when the sound server comes back.
    func forgetPlayWhenBack() { playWhenBack = false }

    /// Starts the speech engine if it does not run yet (see `SpeechEngine.startEarly`).
    func startSynthesis() { synthesis.startEarly() }

    /// Replaces the start of utterance `id`'s text with the whole text (`SpeechManager.complete`).
    func complete(utterance id: UInt64, text: String, pendingText: Int, structure: TextStructure? = nil) {
        perform(manager.complete(utterance: id, text: text, pendingText: pendingText, structure: structure))
    }

    /// Appends sentences cut from the rest of utterance `id`, and the voices found for them
    /// (`SpeechManager.extend`; see `PendingSentences`).
    func extend(utterance id: UInt64, with sentences: [Sentence], voices: [UtteranceVoice] = [], pendingText: Int) {
        if manager.current?.id == id, manager.current?.isComplete == false { timeline.releaseSentences(of: id) }
        perform(manager.extend(utterance: id, with: sentences, voices: voices, pendingText: pendingText))
    }

    // MARK: what clients see

    /// Position heard in the current utterance, µs: frozen while paused, 0 when stopped, never past `length`.
    var position: Int64 {
        guard manager.state != .stopped, let u = manager.current else { return 0 }
        return min(length, timeline.position(in: u, sentence: manager.sentenceIndex, played: played))
    }

    /// Length of the current utterance as published, µs (MPRIS `mpris:length`, Lector's `Length`): the sum of
    /// synthesized sentence lengths, estimated for the others. Synthesis refines it while a sentence plays;
    /// the refined value is taken only with a change that is announced anyway, so that steady reading sends
    /// no PropertiesChanged.
    private(set) var length: Int64 = 0

    /// Moves to `target` µs of the current utterance (below 0 → 0): to the sentence that holds it, skipping
    /// the samples before the target; past the end, to the next sentence (MPRIS2 Seek: "act as though Next
    /// was called"; nothing in the last sentence). The state is kept (paused stays paused).
    /// - Returns: whether it moved (false past the end of the last sentence).
    /// - Throws: `SpeechError.nothingToPlay` with no text.
    @discardableResult
    func seek(to target: Int64) throws(SpeechError) -> Bool {
        if manager.current?.isComplete == false { prepareRest?() }
        guard let u = manager.current else { throw .nothingToPlay }
        switch timeline.locate(target, in: u, current: manager.sentenceIndex) {
        case nil:
            return false
        case .next:
            try apply { m throws(SpeechError) in try m.jump(toSentence: m.sentenceIndex + 1) }
        case .sentence(let index, let skip):
            try apply { m throws(SpeechError) in try m.jump(toSentence: index) }
            timeline.startInside(skip: skip)
        }
        return true
    }

    /// Moves to sentence `index` of the current utterance, from the word that holds `textOffset` (scalars from
    /// the sentence's start) when the sentence's words are known from an earlier synthesis (`SeekAnchor`
    /// places that word in the new one), else from the sentence's start. The state is kept.
    /// - Throws: `SpeechError` as `SpeechManager.jump(toSentence:)`.
    func jump(toSentence index: Int, textOffset: Int) throws(SpeechError) {
        let skip = timeline.durations.wordSample(at: textOffset, inSentence: index)
        try apply { m throws(SpeechError) in try m.jump(toSentence: index) }
        if let skip { timeline.startInside(skip: skip) }
    }

    /// Where sentence `index` starts in the current utterance's audio, in samples (exact where synthesized,
    /// else estimated).
    func startSample(of index: Int) -> Int64 {
        manager.current.map { timeline.durations.startSample(of: index, in: $0) } ?? 0
    }

    // MARK: the state machine's actions

    private func perform(_ actions: [SpeechAction]) {
        let announced = actions.changeLength
        if announced { updateLength() }
        for action in actions {
            switch action {
            case .start(let u, let sentence, let corked): start(u, at: sentence, corked: corked)
            case .changeProsody(let u): carryOut(timeline.changeProsody(u, played: played, writable: writable))
            case .extend(let u): carryOut(timeline.extend(u, played: played, writable: writable))
            case .cork:
                playback.setCorked(true)
                tick.cancel()
                scheduleRelease()
            case .uncork:
                release.cancel()
                if timeline.runID == nil, let u = manager.current, let sentence = timeline.keptSentence(of: u.id) {
                    start(u, at: sentence, corked: false) // the paused stream was released
                } else {
                    playback.setCorked(false)
                    scheduleTick()
                }
            case .discard:
                stopTimers()
                carryOut(timeline.discard())
            case .emit(let event): onEvent?(event, position)
            }
        }
        if announced { updateLength() }
        if !actions.isQuiet { onChange?() }
    }

    private func updateLength() {
        length = manager.current.map { timeline.durations.length(of: $0) } ?? 0
    }

    private func start(_ u: Utterance, at sentence: Int, corked: Bool) {
        stopTimers()
        carryOut(timeline.start(u, at: sentence, corked: corked))
        if !corked { scheduleTick() }
    }

    // MARK: the timeline's actions

    /// Uses `lexicon` for every sentence requested from now on; what is synthesized ahead of the stream is
    /// asked again, so the change is heard from the next word or sentence.
    func setLexicon(_ lexicon: Lexicon) {
        let reading = manager.current.flatMap { timeline.runID != nil ? $0 : nil }
        carryOut(timeline.changeLexicon(lexicon, reading: reading, played: played, writable: writable))
    }

    private func carryOut(_ actions: [TimelineAction]) {
        for action in actions {
            switch action {
            case .configure(let voice, let rate, let pitch): synthesis.configure(voice: voice, rate: rate, pitch: pitch)
            case .synthesize(let tag, let text, let ssml): synthesis.synthesize(text, tag: tag, ssml: ssml)
            case .cancel(let tags): synthesis.cancel(tags)
            case .holdSynthesis(let hold): synthesis.holding = hold
            case .openStream(let title, let language, let corked): playback.open(title: title, language: language, corked: corked)
            case .write(let samples): playback.write(samples)
            case .drain: playback.drain()
            case .closeStream: playback.close()
            case .announceLanguage(let language): playback.announce(language: language)
            case .warn(let line): Log.warning(line)
            case .sentenceFailed(let index, let message): perform(manager.sentenceFailed(index, message: message))
            case .readingFailed(let message): perform(manager.failed(message))
            }
        }
    }

    private func drained() {
        fireEvents(upTo: .max)
        stopTimers()
        carryOut(timeline.end())
        perform(manager.reachedEnd())
    }

    // MARK: events at the moment they are heard

    private func scheduleTick(after milliseconds: UInt32 = 0) {
        tick.arm(milliseconds: milliseconds) { [unowned self] in self.onTick() }
    }

    private func stopTimers() {
        tick.cancel()
        release.cancel()
    }

    private func onTick() {
        guard let run = timeline.runID, manager.state == .reading else { return }
        fireEvents(upTo: played)
        carryOut(timeline.requestMore(played: played))
        carryOut(timeline.feed(writable: writable))
        guard timeline.runID == run, manager.state == .reading else { return }
        scheduleTick(after: timeline.nextTick(played: played))
    }

    private func fireEvents(upTo played: Int64) {
        guard let run = timeline.runID else { return }
        while let (event, actions) = timeline.nextHeard(played: played) {
            carryOut(actions)
            switch event {
            case .sentence(let index): perform(manager.sentenceHeard(index))
            case .word(let range): perform(manager.wordHeard(range))
            }
            guard timeline.runID == run else { return }
        }
    }

    // MARK: a long pause, the sound lost

    /// After this long paused, the corked stream is closed (libpulse keeps asking the server for timing about
    /// every 1.5 s while a stream is corked): the position is kept to the sample and resuming re-synthesizes
    /// the sentence and starts it there, as after a lost sound server. ms.
    static let releaseAfterPausedMilliseconds: UInt32 = 3000

    private func scheduleRelease() {
        release.arm(milliseconds: Self.releaseAfterPausedMilliseconds) { [unowned self] in
            guard self.manager.state == .paused, let u = self.manager.current else { return }
            self.tick.cancel()
            self.carryOut(self.timeline.release(at: self.manager.sentenceIndex, of: u, played: self.played))
        }
    }

    /// The audio is gone (server lost, stream failed): one log line; reading → paused with the position kept,
    /// to the sample, so that Play re-synthesizes the sentence and starts it where it was heard last.
    private func outputLost(_ message: String) {
        let offset = manager.current.map { timeline.heardInto(manager.sentenceIndex, of: $0, played: played) } ?? 0
        Log.warning(message)
        let wanted = manager.state == .reading
        perform(manager.outputLost(wanted ? Self.noOutputPrefix + message : message))
        if wanted { playWhenBack = true }
        if manager.needsRestart, let u = manager.current {
            timeline.keep(utterance: u.id, sentence: manager.sentenceIndex, offset: offset)
            onChange?()
        }
    }
}
