import Audio
import GLibKit
import SpeechCore
import Synthesis

/// Carries out what `SpeechManager` decides: synthesis in the worker, playback on a PulseAudio stream,
/// events at the moment they are heard, position from what the server has played.
///
/// All of it runs on the GLib main loop. One `Run` is one stream playing one utterance from one sentence on;
/// starting, seeking and stopping end the run (the stream is closed: queued audio is discarded at once).
final class ReadingEngine {
    /// eSpeak NG 1.51 renders 22,050 Hz mono.
    static let sampleRate = 22_050
    /// How far synthesis may run ahead of playback, in samples (10 s).
    static let lookahead = 10 * sampleRate

    private(set) var manager = SpeechManager()
    /// Stream volume, linear 0...1, applied to every stream.
    private(set) var volume: Double = 1

    /// An event, at the moment it is heard, with the position heard then (µs).
    var onEvent: ((SpeechEvent, Int64) -> Void)?
    /// Something clients may show changed (state, utterance, sentence, length, volume): announce it, coalesced.
    var onChange: (() -> Void)?
    /// Cuts the rest of the current utterance into sentences now, when it is still being cut in slices
    /// (`Utterance.pendingText` > 0; see `PendingSentences`). Called before anything that needs every sentence.
    var prepareRest: (() -> Void)?

    private let server: SoundServer
    private let synthesis: SynthesisClient
    private var run: Run?
    private var tick: Source?
    /// Per utterance id: the synthesized length of each sentence in samples, once known, as heard (a sentence
    /// whose rate changed while it was read counts its old-rate start and its new-rate rest).
    private var durations: (utterance: UInt64, samples: [Int?])?
    /// Where the words of the most recently synthesized sentences (at most 32) start, in samples from the
    /// sentence's start, from the same synthesis as their `durations`: a run that starts inside one of them
    /// finds its place by word (`SeekAnchor`).
    private var wordStarts: [Int: [Int64]] = [:]
    /// Where the sound server was lost: utterance, sentence, and samples heard into that sentence; the run
    /// that resumes there skips them.
    private var kept: (utterance: UInt64, sentence: Int, offset: Int64)?
    /// The sound server was lost and has not come back yet (for the one log line when it does).
    private var serverLost = false
    /// Closes the stream after a long pause.
    private var release: Source?

    init(server: SoundServer, synthesis: SynthesisClient) {
        self.server = server
        self.synthesis = synthesis
        synthesis.onFrame = { [unowned self] frame in self.received(frame) }
        synthesis.onLost = { [unowned self] tag, reason in self.lost(tag, reason) }
        synthesis.onUnavailable = { [unowned self] reason in
            Log.warning(reason)
            self.perform(self.manager.failed(reason))
        }
        server.onStateChange = { [unowned self] state in self.serverChanged(state) }
    }

    // MARK: inputs

    /// Applies one transition of the state machine: `body` gets the manager, returns its actions, which are
    /// carried out in order. Errors from the manager are rethrown before anything happened.
    func apply(_ body: (inout SpeechManager) throws(SpeechError) -> [SpeechAction]) throws(SpeechError) {
        let actions = try body(&manager)
        perform(actions)
    }

    /// Starts the synthesis worker if it does not run yet (see `SynthesisClient.startEarly`).
    func startSynthesis() { synthesis.startEarly() }

    /// Replaces the start of utterance `id`'s text with the whole text (`SpeechManager.complete`).
    func complete(utterance id: UInt64, text: String, pendingText: Int) {
        perform(manager.complete(utterance: id, text: text, pendingText: pendingText))
    }

    /// Appends sentences cut from the rest of utterance `id`, and the voices found for them
    /// (`SpeechManager.extend`; see `PendingSentences`).
    func extend(utterance id: UInt64, with sentences: [Sentence], voices: [UtteranceVoice] = [], pendingText: Int) {
        // The run's copy of the utterance is about to be replaced by the extended one: dropping its sentences
        // first lets the manager append without copying all of them (a 1 MB text has ~10,000).
        if let run, run.utterance.id == id, let u = manager.current, u.id == id, !u.isComplete {
            run.utterance.sentences = []
        }
        perform(manager.extend(utterance: id, with: sentences, voices: voices, pendingText: pendingText))
    }

    /// Sets the stream volume (linear, clamped to 0...1).
    func setVolume(_ value: Double) {
        volume = min(1, max(0, value))
        run?.stream.setVolume(volume * fade)
        onChange?()
    }

    /// A gain on top of `volume` (linear, 0...1) for fades such as the sleep timer's; not a volume clients
    /// see or announce.
    private(set) var fade: Double = 1

    /// Sets `fade` (clamped to 0...1) and applies it to the stream at once.
    func setFade(_ value: Double) {
        fade = min(1, max(0, value))
        run?.stream.setVolume(volume * fade)
    }

    // MARK: what clients see

    /// Position heard in the current utterance, µs: frozen while paused, 0 when stopped, never past `length`.
    var position: Int64 {
        guard manager.state != .stopped else { return 0 }
        guard let run else {
            let samples = startSample(of: manager.sentenceIndex) + keptOffset(at: manager.sentenceIndex)
            return min(length, samples * 1_000_000 / Int64(Self.sampleRate))
        }
        // Never past what was synthesized, but a seek's target counts as heard before its audio arrives.
        let samples = startSample(of: run.firstSentence) + max(run.skip, min(run.heard, run.timeline)) - run.shift
        return min(length, samples * 1_000_000 / Int64(Self.sampleRate))
    }

    /// Length of the current utterance as published, µs (MPRIS `mpris:length`, Lector's `Length`).
    ///
    /// The sum of synthesized sentence lengths, estimated from the text (and the rate) for sentences not
    /// synthesized yet. Synthesis refines it while a sentence plays; the refined value is taken only with
    /// a change that is announced anyway (a sentence heard, a state change, a jump, a new text), so that
    /// steady reading sends no PropertiesChanged.
    private(set) var length: Int64 = 0

    /// The length as known now (see `length`), µs.
    private var currentLength: Int64 {
        guard let u = manager.current else { return 0 }
        return (startSample(of: u.sentences.count) + pendingEstimate(u)) * 1_000_000 / Int64(Self.sampleRate)
    }

    /// The text not cut into sentences yet, estimated in samples like the sentences before it (their mean
    /// length in scalars tells how many sentence pauses it holds).
    private func pendingEstimate(_ u: Utterance) -> Int64 {
        guard u.pendingText > 0, let last = u.sentences.last else { return 0 }
        let perSentence = max(1, last.range.upperBound / u.sentences.count)
        let sentences = (u.pendingText + perSentence - 1) / perSentence
        let seconds = Double(u.pendingText) / 6 / Double(max(u.rate, 1)) * 60 + 0.3 * Double(sentences)
        return Int64(seconds * Double(Self.sampleRate))
    }

    /// Moves to `target` µs of the current utterance (below 0 → 0): to the sentence that holds it, skipping
    /// the samples before the target; past the end, to the next sentence (MPRIS2 Seek: "act as though Next
    /// was called"; nothing in the last sentence). The state is kept (paused stays paused).
    /// - Returns: whether it moved (false past the end of the last sentence).
    /// - Throws: `SpeechError.nothingToPlay` with no text.
    @discardableResult
    func seek(to target: Int64) throws(SpeechError) -> Bool {
        if manager.current?.isComplete == false { prepareRest?() }
        guard let u = manager.current else { throw .nothingToPlay }
        // µs → samples without overflow: Seek(Int64.max) is a valid call (it acts as Next).
        let (scaled, overflow) = max(0, target).multipliedReportingOverflow(by: Int64(Self.sampleRate))
        let t = overflow ? Int64.max : scaled / 1_000_000
        if t >= startSample(of: u.sentences.count) {
            guard manager.sentenceIndex + 1 < u.sentences.count else { return false }
            try apply { m throws(SpeechError) in try m.jump(toSentence: m.sentenceIndex + 1) }
            return true
        }
        var index = 0
        while index + 1 < u.sentences.count && startSample(of: index + 1) <= t { index += 1 }
        let skip = t - startSample(of: index)
        try apply { m throws(SpeechError) in try m.jump(toSentence: index) }
        if let run { startInside(run, skip: skip) }
        return true
    }

    /// Where sentence `index` starts in the utterance's audio, in samples (exact where synthesized, else estimated).
    func startSample(of index: Int) -> Int64 {
        guard let u = manager.current else { return 0 }
        let known = durations?.utterance == u.id ? durations!.samples : []
        var total: Int64 = 0
        for i in 0..<min(index, u.sentences.count) {
            if i < known.count, let n = known[i] { total += Int64(n) } else { total += estimate(u.sentences[i], rate: u.rate) }
        }
        return total
    }

    private func estimate(_ s: Sentence, rate: Int) -> Int64 {
        estimate(scalars: s.range.count, rate: rate)
    }

    /// Samples to read `scalars` scalars of a sentence's text (to its end) at `rate` wpm.
    private func estimate(scalars: Int, rate: Int) -> Int64 {
        // About 6 characters a word (with its space) plus a sentence pause of ~0.3 s.
        let seconds = Double(scalars) / 6 / Double(max(rate, 1)) * 60 + 0.3
        return Int64(seconds * Double(Self.sampleRate))
    }

    // MARK: actions

    private func perform(_ actions: [SpeechAction]) {
        // A word heard changes nothing clients see, nor do more sentences cut from the text (their length is
        // taken with the next change); anything else is announced, and the length with it.
        let announced = actions.contains {
            switch $0 {
            case .emit(.word), .extend: return false
            default: return true
            }
        }
        if announced { length = currentLength }
        for action in actions {
            switch action {
            case .start(let u, let sentence, let corked): start(u, at: sentence, corked: corked)
            case .changeProsody(let u): changeProsody(u)
            case .extend(let u): extend(u)
            case .cork:
                run?.stream.setCorked(true)
                stopTicking()
                scheduleRelease()
            case .uncork:
                release?.cancel()
                release = nil
                if run == nil, let u = manager.current, let kept, kept.utterance == u.id {
                    start(u, at: kept.sentence, corked: false) // the paused stream was released
                } else {
                    run?.stream.setCorked(false)
                    scheduleTick()
                }
            case .discard:
                endRun()
                kept = nil
            case .emit(let event): onEvent?(event, position)
            }
        }
        if announced { length = currentLength }
        // Words alone change nothing to announce, save or duck: no `onChange` for them (comparing every
        // property for a PropertiesChanged cost more than the Word signal itself, several times a second).
        // More sentences alone change nothing clients see until the text is complete (CanGoNext may turn false).
        let quiet = !actions.isEmpty && actions.allSatisfy {
            switch $0 {
            case .emit(.word): return true
            case .extend(let u): return !u.isComplete
            default: return false
            }
        }
        if !quiet { onChange?() }
    }

    private func start(_ u: Utterance, at sentence: Int, corked: Bool) {
        endRun()
        if durations?.utterance != u.id {
            durations = (u.id, Array(repeating: nil, count: u.sentences.count))
            wordStarts = [:]
        }
        if case .failed = server.state { server.connect() }
        let stream = PlaybackStream(server: server, name: u.title, sampleRate: Self.sampleRate, properties: [
            "media.role": "a11y",
            "media.name": u.title,
            "media.language": u.voice(ofSentence: sentence).language,
        ], corked: corked)
        stream.setVolume(volume * fade)
        let run = Run(utterance: u, firstSentence: sentence, stream: stream)
        run.streamLanguage = u.voice(ofSentence: sentence).language
        self.run = run
        startInside(run, skip: keptOffset(at: sentence, of: u))
        kept = nil
        stream.onWritable = { [unowned self, unowned run] _ in if self.run === run { self.feed() } }
        stream.onDrained = { [unowned self, unowned run] in if self.run === run { self.drained() } }
        stream.onFailed = { [unowned self, unowned run] reason in
            guard self.run === run else { return }
            self.outputLost("playback failed: \(reason)")
        }
        requestMore()
        if !corked { scheduleTick() }
    }

    /// Starts `run` `skip` samples into its first sentence, as measured in that sentence's last synthesis: the
    /// run synthesizes it again, so the place is taken by word where its words are known (`SeekAnchor`), and
    /// nothing is written to the stream until the new synthesis has placed that word.
    private func startInside(_ run: Run, skip: Int64) {
        run.skip = skip
        run.anchor = skip > 0 ? wordStarts[run.firstSentence].map { SeekAnchor(offset: skip, wordStarts: $0) } : nil
    }

    // MARK: a long pause costs nothing

    /// After this long paused, the corked stream is closed (libpulse keeps asking the server for timing about
    /// every 1.5 s while a stream is corked): the position is kept to the sample and resuming re-synthesizes
    /// the sentence and starts it there, as after a lost sound server. ms.
    static let releaseAfterPausedMilliseconds: UInt32 = 3000

    private func scheduleRelease() {
        release?.cancel()
        release = MainContext.timeout(milliseconds: Self.releaseAfterPausedMilliseconds) { [unowned self] in
            self.release = nil
            guard self.manager.state == .paused, let run = self.run, let u = self.manager.current else { return false }
            let offset = self.heardIntoSentence(run)
            self.endRun()
            self.kept = (u.id, self.manager.sentenceIndex, offset)
            return false
        }
    }

    /// Samples heard into the current sentence by `run`.
    private func heardIntoSentence(_ run: Run) -> Int64 {
        let heard = startSample(of: run.firstSentence) + min(run.heard, run.timeline)
        return max(0, heard - startSample(of: manager.sentenceIndex))
    }

    // MARK: sound server lost and back

    private func serverChanged(_ state: SoundServer.State) {
        switch state {
        case .failed(let reason):
            serverLost = true
            if run != nil { outputLost("sound server lost: \(reason)") }
        case .disconnected:
            if run != nil { outputLost("disconnected from the sound server") }
        case .ready:
            if serverLost { Log.message("reconnected to the sound server") }
            serverLost = false
        case .connecting:
            break
        }
    }

    /// The audio is gone (server lost, stream failed): one log line; reading → paused with the position kept,
    /// to the sample, so that Play re-synthesizes the sentence and starts it where it was heard last.
    private func outputLost(_ message: String) {
        let offset = run.map(heardIntoSentence) ?? 0
        Log.warning(message)
        perform(manager.outputLost(message))
        if manager.needsRestart, let u = manager.current {
            kept = (u.id, manager.sentenceIndex, offset)
            onChange?()
        }
    }

    /// Samples heard into `sentence` before the sound server was lost (0 unless resuming there).
    private func keptOffset(at sentence: Int, of u: Utterance? = nil) -> Int64 {
        guard let kept, kept.sentence == sentence, kept.utterance == (u ?? manager.current)?.id else { return 0 }
        return kept.offset
    }

    private func endRun() {
        stopTicking()
        release?.cancel()
        release = nil
        if let run {
            synthesis.cancel(run.inFlight.map(\.tag))
            run.stream.close()
        }
        run = nil
        synthesis.holding = false
    }

    /// The rate or pitch of the utterance being read changed (`SpeechAction.changeProsody`): the audio up to
    /// the first word not yet handed to the stream is kept, the rest is discarded, and synthesis goes on from
    /// that word with the new settings. What the stream holds already (its ~50 ms buffer) plays out, so the
    /// change is heard at the next word, and the position only ever moves forward.
    private func changeProsody(_ u: Utterance) {
        guard let run, run.utterance.id == u.id else { return }
        run.anchor = nil // the first sentence's request may be dropped: its place stays the plain sample offset
        let old = run.utterance
        run.utterance = u
        // Sentences before this run keep the lengths they had (estimated at the old rate where not synthesized),
        // so the position, counted from them, does not jump.
        if durations?.utterance == u.id {
            for i in 0..<min(run.firstSentence, durations!.samples.count) where durations!.samples[i] == nil {
                durations!.samples[i] = Int(estimate(old.sentences[i], rate: old.rate))
            }
        }
        guard !run.draining else { return } // everything is in the stream already
        // The first sample of the timeline not yet written to the stream (nor skipped by a seek).
        let written = max(run.timeline - Int64(run.pcm.count - run.pcmStart), run.skip)
        // Cut at the first word not yet written, in a plain-text sentence (a word inside SSML markup cannot be
        // cut out of its document), else at the first sentence boundary not yet written.
        let cut = run.events.firstIndex { e in
            guard e.sample >= written else { return false }
            switch e.kind {
            case .sentence: return true
            case .word(_, let index): return u.sentences[index].markup == nil && e.sample > (run.sentenceAt[index] ?? -1)
            }
        }
        guard let cut else {
            // No boundary known past what is written: the sentence being synthesized (if any) is kept whole at
            // the old settings, and the change is heard from the next sentence on.
            if let current = run.inFlight.first(where: { run.sentenceStart[$0.tag] != nil }) {
                synthesis.cancel(run.inFlight.lazy.filter { $0.tag != current.tag }.map(\.tag))
                run.inFlight = [current]
                run.nextToRequest = current.index + 1
            } else if let first = run.inFlight.first {
                synthesis.cancel(run.inFlight.map(\.tag))
                run.inFlight = []
                run.nextToRequest = first.index
            }
            forgetSyntheses(from: run.nextToRequest, of: u)
            requestMore()
            return
        }
        let event = run.events[cut]
        let sample = event.sample
        // Discard the audio and events from the cut on; requests in flight are dropped (stale frames are ignored).
        let keep = run.pcmStart + Int(sample - (run.timeline - Int64(run.pcm.count - run.pcmStart)))
        if keep < run.pcm.count { run.pcm.removeSubrange(max(keep, run.pcmStart)..<run.pcm.count) }
        run.timeline = sample
        run.events.removeSubrange(cut...)
        synthesis.cancel(run.inFlight.map(\.tag))
        run.inFlight = []
        switch event.kind {
        case .sentence(let index):
            run.nextToRequest = index
            forgetSyntheses(from: index, of: u)
        case .word(let range, let index):
            forgetSyntheses(from: index + 1, of: u)
            let sentence = u.sentences[index]
            let offset = range.lowerBound - sentence.range.lowerBound
            let rest = String(String.UnicodeScalarView(sentence.text.unicodeScalars.dropFirst(offset)))
            synthesis.configure(voice: u.voice(ofSentence: index).engineVoice, rate: u.rate, pitch: u.pitch)
            let tag = synthesis.synthesize(rest)
            let prefix = sample - (run.sentenceAt[index] ?? sample)
            run.inFlight.append(.init(tag: tag, index: index, textOffset: offset, prefix: prefix))
            // The sentence's old synthesized length no longer holds: until its rest is synthesized, it is the
            // part kept at the old rate plus the rest estimated at the new one.
            if durations?.utterance == u.id, index < durations!.samples.count {
                durations!.samples[index] = Int(prefix + estimate(scalars: sentence.range.count - offset, rate: u.rate))
            }
            run.nextToRequest = index + 1
        }
        requestMore()
        feed()
    }

    /// Sentences from `index` on are synthesized again at `u`'s new settings: what was measured of their old
    /// synthesis no longer holds, so their lengths are estimated at the new rate until they are synthesized
    /// (`mpris:length` follows a rate change at once) and their word starts are forgotten.
    private func forgetSyntheses(from index: Int, of u: Utterance) {
        guard durations?.utterance == u.id, index < durations!.samples.count else { return }
        for i in index..<durations!.samples.count { durations!.samples[i] = nil }
        wordStarts = wordStarts.filter { $0.key < index }
    }

    /// More sentences of the current utterance were cut (`SpeechAction.extend`): the run goes on into them.
    private func extend(_ u: Utterance) {
        if durations?.utterance == u.id, durations!.samples.count < u.sentences.count {
            durations!.samples += Array(repeating: nil, count: u.sentences.count - durations!.samples.count)
        }
        guard let run, run.utterance.id == u.id else { return }
        run.utterance = u
        requestMore()
        feed()
    }

    // MARK: synthesis

    /// Holds the worker's output back while the run has more than `lookahead` samples synthesized ahead of
    /// what is heard: a sentence (an SSML unit) of any size costs no more memory than `lookahead`.
    private func holdSynthesisIfAhead(_ run: Run) {
        synthesis.holding = run.timeline - run.heard > Int64(Self.lookahead)
    }

    /// Keeps synthesis ahead of playback by up to `lookahead` samples, with at most two requests in flight.
    private func requestMore() {
        guard let run else { return }
        holdSynthesisIfAhead(run)
        while run.nextToRequest < run.utterance.sentences.count,
              run.inFlight.count < 2,
              run.timeline - run.heard < Int64(Self.lookahead) {
            let index = run.nextToRequest
            let u = run.utterance
            let sentence = u.sentences[index]
            synthesis.configure(voice: u.voice(ofSentence: index).engineVoice, rate: u.rate, pitch: u.pitch)
            let tag = synthesis.synthesize(sentence.markup ?? sentence.text, ssml: sentence.markup != nil)
            run.inFlight.append(.init(tag: tag, index: index))
            run.nextToRequest += 1
        }
    }

    private func received(_ frame: WorkerFrame) {
        guard let run else { return }
        switch frame {
        case .ready: break
        case .audio(let tag, let samples):
            guard let index = run.begin(tag) else { return }
            _ = index
            run.pcm.append(contentsOf: samples)
            run.timeline += Int64(samples.count)
            holdSynthesisIfAhead(run)
            feed()
        case .word(let tag, let start, let length, let sample):
            guard let index = run.begin(tag), let base = run.sentenceStart[tag],
                  let entry = run.inFlight.first(where: { $0.tag == tag }) else { return }
            let offset = run.utterance.sentences[index].range.lowerBound + entry.textOffset
            run.events.append(.init(sample: base + Int64(sample),
                                    kind: .word(offset + start..<offset + start + length, sentence: index)))
            guard entry.textOffset == 0 else { return }
            run.words[tag, default: []].append(Int64(sample))
            if let anchor = run.anchor, index == run.firstSentence, base == 0,
               let skip = anchor.skip(newWordStarts: run.words[tag]!) {
                let asked = run.skip - run.shift
                run.skip = max(run.skipped, skip) // word frames come before the audio that holds them
                run.shift = run.skip - asked
                feed()
            }
        case .end(let tag, let samples):
            guard let index = run.begin(tag), let entry = run.inFlight.first(where: { $0.tag == tag }) else { return }
            if durations?.utterance == run.utterance.id, index < durations!.samples.count {
                durations!.samples[index] = Int(entry.prefix) + samples
                wordStarts[index] = entry.textOffset == 0 ? run.words[tag] ?? [] : nil
                if wordStarts.count > 32, let far = wordStarts.keys.max(by: { abs($0 - index) < abs($1 - index) }) {
                    wordStarts[far] = nil
                }
            }
            run.consecutiveLosses = 0
            finish(tag)
        case .failed(let tag, let message):
            guard let index = run.begin(tag) else { return }
            Log.warning("sentence \(index + 1) not read: \(message)")
            perform(manager.sentenceFailed(index, message: message))
            finish(tag)
        }
    }

    /// After this many sentences in a row lost to the engine (crashed or hung, see `SynthesisClient`), reading
    /// stops with an error instead of skipping through the text.
    static let maximumConsecutiveLosses = 3

    private func lost(_ tag: UInt32, _ reason: String) {
        guard let run, let index = run.begin(tag) else { return }
        let sentence = run.utterance.sentences[index].text.split(whereSeparator: \.isNewline).joined(separator: " ")
        let excerpt = sentence.count > 60 ? String(sentence.prefix(57)) + "..." : sentence
        Log.warning("\(reason) on sentence \(index + 1) (\"\(excerpt)\"); skipped it")
        run.consecutiveLosses += 1
        if run.consecutiveLosses >= Self.maximumConsecutiveLosses {
            let message = "the speech engine failed on \(run.consecutiveLosses) sentences in a row (\(reason)); reading stopped"
            Log.warning(message)
            perform(manager.failed(message))
            return
        }
        perform(manager.sentenceFailed(index, message: "\(reason) on sentence \(index + 1); skipped it"))
        finish(tag)
    }

    private func finish(_ tag: UInt32) {
        guard let run else { return }
        if run.sentenceStart[tag] == 0 { run.anchor = nil } // its words are all known: the skip is final
        run.words[tag] = nil
        run.inFlight.removeAll { $0.tag == tag }
        requestMore()
        feed()
    }

    // MARK: playback

    /// Writes what the stream asks for; drains once everything of the utterance is written.
    private func feed() {
        guard let run else { return }
        if let anchor = run.anchor, anchor.skip(newWordStarts: run.firstWords) == nil { return } // not placed yet
        if run.skipped < run.skip { // a seek inside a sentence: drop the audio before the target
            let drop = Int(min(run.skip - run.skipped, Int64(run.pcm.count - run.pcmStart)))
            run.pcmStart += drop
            run.skipped += Int64(drop)
            if run.skipped < run.skip { return }
        }
        let want = run.stream.writableSamples
        if want > 0 && run.pcmStart < run.pcm.count {
            let n = min(want, run.pcm.count - run.pcmStart)
            run.stream.write(run.pcm[run.pcmStart..<run.pcmStart + n])
            run.pcmStart += n
            if run.pcmStart > 262_144 { run.pcm.removeFirst(run.pcmStart); run.pcmStart = 0 }
        }
        if run.synthesisDone && run.pcmStart == run.pcm.count && !run.draining {
            run.draining = true
            run.stream.drain()
        }
    }

    private func drained() {
        guard let run else { return }
        fireEvents(upTo: Int64.max)
        _ = run
        endRun()
        perform(manager.reachedEnd())
    }

    // MARK: events at the moment they are heard

    private func scheduleTick(after milliseconds: UInt32 = 0) {
        stopTicking()
        tick = MainContext.timeout(milliseconds: milliseconds) { [unowned self] in
            self.tick = nil
            self.onTick()
            return false
        }
    }

    private func stopTicking() {
        tick?.cancel()
        tick = nil
    }

    private func onTick() {
        guard let run, manager.state == .reading else { return }
        let played = run.heard
        fireEvents(upTo: played)
        requestMore()
        feed()
        guard self.run === run, manager.state == .reading else { return }
        // Wake for the next event, or at least every 250 ms to keep synthesis ahead.
        var delay: Int64 = 250
        if let next = run.events.first {
            delay = min(delay, max(2, (next.sample - played) * 1000 / Int64(Self.sampleRate)))
        }
        scheduleTick(after: UInt32(delay))
    }

    private func fireEvents(upTo played: Int64) {
        guard let run else { return }
        while let e = run.events.first, e.sample <= played {
            run.events.removeFirst()
            switch e.kind {
            case .sentence(let index):
                // The stream tells the desktop the language being heard (one stream per run, so per sentence).
                let language = run.utterance.voice(ofSentence: index).language
                if language != run.streamLanguage {
                    run.streamLanguage = language
                    run.stream.updateProperties(["media.language": language])
                }
                perform(manager.sentenceHeard(index))
            case .word(let range, _):
                if e.sample >= run.skip { perform(manager.wordHeard(range)) } // words seeked over are not heard
            }
            guard self.run === run else { return }
        }
    }
}

/// One stream playing one utterance from one sentence on.
private final class Run {
    struct Event { var sample: Int64; var kind: Kind; enum Kind { case sentence(Int), word(Range<Int>, sentence: Int) } }
    /// A request in flight. `textOffset` > 0: the rest of sentence `index` from that scalar on (after a prosody
    /// change), whose audio follows `prefix` samples of the same sentence already in the timeline.
    struct Request { var tag: UInt32; var index: Int; var textOffset = 0; var prefix: Int64 = 0 }

    /// The utterance, with the rate and pitch now in force.
    var utterance: Utterance
    let firstSentence: Int
    let stream: PlaybackStream
    /// Next sentence to ask the worker for.
    var nextToRequest: Int
    /// Requests in flight: worker tag and sentence index, in order.
    var inFlight: [Request] = []
    /// Where each sentence's audio starts in this run's timeline (samples).
    var sentenceAt: [Int: Int64] = [:]
    /// Where each request's audio starts in this run's timeline (samples), set at its first frame.
    var sentenceStart: [UInt32: Int64] = [:]
    /// Synthesized audio not yet written to the stream: `pcm[pcmStart...]`.
    var pcm: [Int16] = []
    var pcmStart = 0
    /// Samples synthesized for this run so far (the run's timeline).
    var timeline: Int64 = 0
    /// Events not yet heard, by sample in the run's timeline, in order.
    var events: [Event] = []
    var draining = false
    /// Sentences lost to the engine since one was last synthesized whole.
    var consecutiveLosses = 0
    /// The stream's `media.language`: the language of the sentence being heard.
    var streamLanguage = ""
    /// Samples of this run's timeline not to be played (a seek inside its first sentence), and how many of
    /// them have been dropped so far.
    var skip: Int64 = 0
    var skipped: Int64 = 0
    /// Where in its first sentence this run starts, by word, until that sentence's synthesis has ended.
    var anchor: SeekAnchor?
    /// `skip` as placed by the anchor minus `skip` as asked: the position is reported as asked (the target a
    /// seek was given), not in the new synthesis's samples. 0 without an anchor.
    var shift: Int64 = 0
    /// Word starts of each plain request in flight, in samples from its start (`WorkerFrame.word`).
    var words: [UInt32: [Int64]] = [:]
    /// Word starts so far of the request whose audio starts this run's timeline.
    var firstWords: [Int64] { sentenceStart.first { $0.value == 0 }.flatMap { words[$0.key] } ?? [] }

    /// The point of this run's timeline being heard now, in samples.
    var heard: Int64 { skip + stream.playedSamples }

    init(utterance: Utterance, firstSentence: Int, stream: PlaybackStream) {
        self.utterance = utterance
        self.firstSentence = firstSentence
        self.stream = stream
        self.nextToRequest = firstSentence
    }

    /// All sentences of the utterance have been synthesized (or skipped), and none is left to be cut.
    var synthesisDone: Bool { nextToRequest >= utterance.sentences.count && inFlight.isEmpty && utterance.isComplete }

    /// The sentence index for `tag` if it belongs to this run; on its first frame, marks where its audio starts
    /// and queues its sentence event there.
    func begin(_ tag: UInt32) -> Int? {
        guard let entry = inFlight.first(where: { $0.tag == tag }) else { return nil }
        if sentenceStart[tag] == nil {
            sentenceStart[tag] = timeline
            if entry.textOffset == 0 { // a continuation goes on in a sentence already announced
                sentenceAt[entry.index] = timeline
                events.append(.init(sample: timeline, kind: .sentence(entry.index)))
            }
        }
        return entry.index
    }
}
