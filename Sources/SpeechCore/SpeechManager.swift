/// The state machine of speech: `reading`, `paused`, `stopped`, the current utterance, and a queue.
///
/// Pure logic: every input is one method that updates the state and returns the actions its owner must carry
/// out, in order (start a stream, cork, uncork, discard, emit events). Nothing here touches audio, D-Bus or time,
/// so every transition is unit-tested. Semantics (see docs/ARCHITECTURE.md, "The state machine"):
/// - `speak` replaces what is being read at once; with `queue: true` it appends instead, within the queue's
///   limits (`maximumQueuedTexts`, `maximumQueuedBytes`; `checkQueue` asks before a text is prepared).
/// - `pause` only from `reading`, `resume` only from `paused`; both idempotent.
/// - `toggle`: reading → paused, paused → reading, stopped → the last text again from its beginning.
/// - the end of the text → `stopped`, text kept for a replay; `stop` → `stopped`, position 0, audio discarded.
public struct SpeechManager: Sendable {
    /// The current state.
    public private(set) var state: SpeechState = .stopped
    /// The utterance being read, paused, or last read (kept after stop and after the end for a replay).
    public private(set) var current: Utterance?
    /// What is read again when it ends (MPRIS `LoopStatus`): nothing, the sentence being read, or the whole text
    /// and queue. Changing it has no immediate effect; it is looked at when a sentence or a text ends.
    public var loop: LoopMode = .none

    /// Utterances waiting their turn (`speak(_:queue: true)`), first next.
    public private(set) var queue: [Utterance] = [] {
        didSet { queuedBytes = queue.reduce(0) { $0 + $1.text.utf8.count } }
    }
    /// The UTF-8 bytes of the texts in `queue`.
    public private(set) var queuedBytes = 0
    /// At most this many texts wait in the queue (256): a client that queues more is refused
    /// (`SpeechError.queueFull`) until the queue is read or stopped.
    public static let maximumQueuedTexts = 256
    /// At most this many bytes of text (UTF-8) wait in the queue, all texts together (32 MiB, as much as the
    /// largest file Lector reads, `Input.maximumBytes`): a queued text is prepared whole, at a few times its
    /// size in memory.
    public static let maximumQueuedBytes = 32 << 20
    /// Index of the sentence being heard (or paused in, or to be read next after a jump); 0 when stopped.
    public private(set) var sentenceIndex: Int = 0
    /// True when the audio of the current utterance was lost while paused (the sound server went away):
    /// resuming must start a new stream at `sentenceIndex` instead of uncorking.
    public private(set) var needsRestart = false
    /// Set by `restore` (a daemon started again after a crash or a logout): `stopped` with the text loaded, and
    /// `resume`, `play` and `toggle` go on from this sentence (also `sentenceIndex` meanwhile) instead of from
    /// the beginning. Anything else that starts or stops reading clears it.
    public private(set) var resumeSentence: Int?
    /// The utterance `changeVoice` gave one voice for the whole text (0: none): `extend` keeps that voice.
    private var oneVoice: UInt64 = 0

    /// A manager with nothing loaded, `stopped`.
    public init() {}

    /// Reads `utterance` with `queue`: appends it when something is being read or paused, else (`stopped`,
    /// or without `queue`) starts it at once like `speak(_:)`.
    /// - Throws: `SpeechError.queueFull` when it would be appended to a full queue (see `checkQueue`); nothing
    ///   changes then.
    public mutating func speak(_ utterance: Utterance, queue: Bool) throws(SpeechError) -> [SpeechAction] {
        guard queue && state != .stopped else { return speak(utterance) }
        try checkQueue(bytes: utterance.text.utf8.count)
        self.queue.append(utterance)
        return []
    }

    /// Reads `utterance`: replaces the current one at once (and empties the queue).
    public mutating func speak(_ utterance: Utterance) -> [SpeechAction] {
        var actions: [SpeechAction] = []
        if state != .stopped, let old = current {
            actions.append(.discard)
            actions.append(.emit(.stopped(utterance: old.id)))
        }
        actions += dropQueue()
        return actions + begin(utterance)
    }

    /// Whether a text of `bytes` bytes (UTF-8) given to `speak(_:queue: true)` now would be accepted: it
    /// would start at once (`stopped`), or the queue has room for one more text and for its bytes. Changes
    /// nothing; the daemon asks before it prepares a text.
    /// - Throws: `SpeechError.queueFull` when the queue already holds `maximumQueuedTexts` texts, or when its
    ///   bytes and `bytes` together pass `maximumQueuedBytes`.
    public func checkQueue(bytes: Int) throws(SpeechError) {
        guard state != .stopped else { return }
        if queue.count >= Self.maximumQueuedTexts || bytes > Self.maximumQueuedBytes - queuedBytes {
            throw .queueFull(texts: queue.count, bytes: queuedBytes, adding: bytes)
        }
    }

    /// reading → paused (cork). No effect in any other state.
    public mutating func pause() -> [SpeechAction] {
        guard state == .reading, let u = current else { return [] }
        state = .paused
        return [.cork, .emit(.paused(utterance: u.id))]
    }

    /// Loads `utterance` as the text of a reading that was going on before the daemon restarted: → `stopped`,
    /// nothing plays; with `sentence`, the next `resume`, `play` or `toggle` starts there (clamped to the text).
    /// Emits nothing.
    public mutating func restore(_ utterance: Utterance, resumeAt sentence: Int?) -> [SpeechAction] {
        current = utterance
        state = .stopped
        queue = []
        needsRestart = false
        resumeSentence = sentence.map { min(max(0, $0), utterance.sentences.count - 1) }
        sentenceIndex = resumeSentence ?? 0
        return []
    }

    /// paused → reading (uncork, or a new stream at the kept sentence after a lost server); after `restore`,
    /// stopped → reading from the restored sentence. No effect otherwise.
    public mutating func resume() -> [SpeechAction] {
        if state == .stopped, let sentence = resumeSentence, let u = current {
            resumeSentence = nil
            state = .reading
            sentenceIndex = sentence
            return [.start(u, sentence: sentence, corked: false), .emit(.started(utterance: u.id))]
        }
        guard state == .paused, let u = current else { return [] }
        state = .reading
        if needsRestart {
            needsRestart = false
            return [.start(u, sentence: sentenceIndex, corked: false), .emit(.resumed(utterance: u.id))]
        }
        return [.uncork, .emit(.resumed(utterance: u.id))]
    }

    /// MPRIS `Play`: resume when paused, read the last text from its beginning when stopped, nothing when reading.
    /// - Throws: `SpeechError.nothingToPlay` when stopped and no text was ever given.
    public mutating func play() throws(SpeechError) -> [SpeechAction] {
        switch state {
        case .reading: return []
        case .paused: return resume()
        case .stopped:
            guard let u = current else { throw .nothingToPlay }
            if resumeSentence != nil { return resume() }
            return begin(u)
        }
    }

    /// reading → paused, paused → reading, stopped → the last text from its beginning.
    /// - Throws: `SpeechError.nothingToPlay` when stopped and no text was ever given.
    public mutating func toggle() throws(SpeechError) -> [SpeechAction] {
        switch state {
        case .reading: return pause()
        case .paused, .stopped: return try play()
        }
    }

    /// → stopped, position 0; queued audio and queued texts discarded at once (each queued text gets `stopped`).
    /// The text is kept for a replay.
    public mutating func stop() -> [SpeechAction] {
        if resumeSentence != nil {
            resumeSentence = nil
            sentenceIndex = 0
        }
        guard state != .stopped, let u = current else { return [] }
        state = .stopped
        sentenceIndex = 0
        needsRestart = false
        return [.discard, .emit(.stopped(utterance: u.id))] + dropQueue()
    }

    /// Moves to sentence `index` of the current utterance, keeping the state (paused stays paused).
    /// From `stopped` it starts reading there. Used by Next, Previous, Seek and SetPosition.
    /// - Throws: `SpeechError.noSuchSentence` for an index outside the text, `.nothingToPlay` with no text.
    public mutating func jump(toSentence index: Int) throws(SpeechError) -> [SpeechAction] {
        guard let u = current else { throw .nothingToPlay }
        guard u.sentences.indices.contains(index) else { throw .noSuchSentence(index) }
        sentenceIndex = index
        needsRestart = false
        resumeSentence = nil
        switch state {
        case .reading, .paused:
            return [.start(u, sentence: index, corked: state == .paused)]
        case .stopped:
            state = .reading
            return [.start(u, sentence: index, corked: false), .emit(.started(utterance: u.id))]
        }
    }

    /// Changes the speaking rate (words per minute) of the current utterance and of what is queued. While
    /// reading or paused, the change is heard from the next word on: `.changeProsody` (the sentence is not
    /// started again; paused stays paused). After a lost output (nothing left to keep) the current sentence
    /// starts again on a new, corked stream.
    public mutating func changeRate(_ rate: Int) -> [SpeechAction] {
        for i in queue.indices { queue[i].rate = rate }
        guard var u = current, u.rate != rate else { return [] }
        u.rate = rate
        return changed(u)
    }

    /// Changes the base pitch (0...99) of the current utterance and of what is queued, like `changeRate`.
    public mutating func changePitch(_ pitch: Int) -> [SpeechAction] {
        for i in queue.indices { queue[i].pitch = pitch }
        guard var u = current, u.pitch != pitch else { return [] }
        u.pitch = pitch
        return changed(u)
    }

    /// Changes the voice of the current utterance (not of queued texts, which may be in other languages), like
    /// `changeRate`: heard from the next word. `engineVoice` is what the synthesizer selects it by, `name` the
    /// voice's human-readable name, `language` its BCP 47 tag.
    public mutating func changeVoice(engineVoice: String, name: String, language: String) -> [SpeechAction] {
        guard var u = current, u.voices.count > 1 || u.engineVoice != engineVoice else { return [] }
        // One voice for the whole text from now on, also where it mixed languages.
        u.voices = [UtteranceVoice(language: language, name: name, engineVoice: engineVoice)]
        oneVoice = u.id
        for i in u.sentences.indices { u.sentences[i].voice = 0 }
        return changed(u)
    }

    /// More sentences of utterance `id`, whose text is still being prepared (`Utterance.pendingText` > 0),
    /// in order, following those it has; `pendingText` is what is left of its text after them (0: the last
    /// ones). They are appended when `id` is the current utterance, whatever the state, and `.extend` carries
    /// the utterance with them; for any other id (a text replaced meanwhile) nothing happens. Each sentence's
    /// `voice` indexes the voices the utterance was prepared with followed by `voices` (those found for the
    /// new sentences, appended to the utterance's); after `changeVoice` (one voice for the whole text) they
    /// are read with that voice, and `voices` is ignored.
    public mutating func extend(utterance id: UInt64, with sentences: [Sentence], voices: [UtteranceVoice] = [],
                                pendingText: Int) -> [SpeechAction] {
        guard var u = current, u.id == id, !u.isComplete else { return [] }
        // Released first: appending copies no sentence when no one else holds the utterance.
        current = nil
        let single = oneVoice == id
        if !single { u.voices += voices }
        for var s in sentences {
            if single || !u.voices.indices.contains(s.voice) { s.voice = 0 }
            u.sentences.append(s)
        }
        u.pendingText = max(0, pendingText)
        current = u
        return [.extend(u)]
    }

    /// The whole text of utterance `id`, whose sentences so far were cut from its start (a long file is read
    /// in two steps: its start, then all of it). `text` begins with the utterance's text, and its sentences so
    /// far are the same; `pendingText` is what is left of `text` after them. Like `extend`, it applies to the
    /// current utterance only (nothing happens for another id) and returns `.extend` with it. A document's
    /// `structure`, known once the whole is read, replaces the utterance's.
    public mutating func complete(utterance id: UInt64, text: String, pendingText: Int,
                                  structure: TextStructure? = nil) -> [SpeechAction] {
        guard var u = current, u.id == id else { return [] }
        current = nil
        u.text = text
        u.pendingText = max(0, pendingText)
        if let structure { u.structure = structure }
        current = u
        return [.extend(u)]
    }

    /// The current utterance's prosody changed to `u`'s.
    private mutating func changed(_ u: Utterance) -> [SpeechAction] {
        current = u
        guard state != .stopped else { return [] }
        if needsRestart {
            needsRestart = false
            return [.start(u, sentence: sentenceIndex, corked: state == .paused)]
        }
        return [.changeProsody(u)]
    }

    /// The start of sentence `index` was heard. With `loop == .sentence`, the start of the next sentence (after
    /// the one being read) means that one ended: it starts again instead.
    public mutating func sentenceHeard(_ index: Int) -> [SpeechAction] {
        guard state != .stopped, let u = current, u.sentences.indices.contains(index) else { return [] }
        if loop == .sentence, state == .reading, index == sentenceIndex + 1 {
            return [.start(u, sentence: sentenceIndex, corked: false)]
        }
        sentenceIndex = index
        return [.emit(.sentence(utterance: u.id, index: index, range: u.sentences[index].range))]
    }

    /// A word was heard; `range` in scalars of the utterance text.
    public mutating func wordHeard(_ range: Range<Int>) -> [SpeechAction] {
        guard state != .stopped, let u = current else { return [] }
        return [.emit(.word(utterance: u.id, range: range))]
    }

    /// The synthesizer could not read sentence `index` (it crashed or refused); reading goes on with the next one.
    public mutating func sentenceFailed(_ index: Int, message: String) -> [SpeechAction] {
        guard state != .stopped, let u = current else { return [] }
        return [.emit(.error(utterance: u.id, message: message, fatal: false))]
    }

    /// The last sample of the current utterance was heard: the next queued one starts, or → stopped. With
    /// `loop == .sentence` its last sentence starts again; with `loop == .all` the text goes to the end of the
    /// queue (a text read alone starts again).
    public mutating func reachedEnd() -> [SpeechAction] {
        guard state == .reading, let u = current else { return [] }
        if loop == .sentence, u.isComplete, !u.sentences.isEmpty {
            sentenceIndex = u.sentences.count - 1
            return [.start(u, sentence: sentenceIndex, corked: false)]
        }
        var actions: [SpeechAction] = [.emit(.finished(utterance: u.id))]
        if loop == .all, u.isComplete { queue.append(u) }
        if !queue.isEmpty {
            actions += begin(queue.removeFirst())
        } else {
            state = .stopped
            sentenceIndex = 0
        }
        return actions
    }

    /// Reading cannot go on (e.g. the synthesizer cannot be started): → stopped, text kept.
    public mutating func failed(_ message: String) -> [SpeechAction] {
        guard let u = current, state != .stopped else { return [] }
        state = .stopped
        sentenceIndex = 0
        needsRestart = false
        return [.discard, .emit(.error(utterance: u.id, message: message, fatal: true))] + dropQueue()
    }

    /// The sound server went away: reading → paused with the position (sentence) kept; the audio is gone, so
    /// the next resume starts a new stream at the current sentence.
    public mutating func outputLost(_ message: String) -> [SpeechAction] {
        guard state != .stopped, let u = current else { return [] }
        needsRestart = true
        var actions: [SpeechAction] = [.discard, .emit(.error(utterance: u.id, message: message, fatal: false))]
        if state == .reading {
            state = .paused
            actions.append(.emit(.paused(utterance: u.id)))
        }
        return actions
    }

    /// Empties the queue; each dropped utterance gets its terminal `stopped` event, so that a client waiting
    /// for it learns that it will not be read.
    private mutating func dropQueue() -> [SpeechAction] {
        defer { queue.removeAll() }
        return queue.map { .emit(.stopped(utterance: $0.id)) }
    }

    private mutating func begin(_ u: Utterance) -> [SpeechAction] {
        current = u
        state = .reading
        sentenceIndex = 0
        needsRestart = false
        resumeSentence = nil
        return [.start(u, sentence: 0, corked: false), .emit(.started(utterance: u.id))]
    }
}

/// What `SpeechManager` reads again when it ends (MPRIS `LoopStatus`: None, Track, Playlist).
public enum LoopMode: String, CaseIterable, Sendable {
    /// Nothing: reading stops after the last text (MPRIS "None").
    case none
    /// The sentence being read, again and again (MPRIS "Track").
    case sentence
    /// The whole text and the queue after it, from the first again (MPRIS "Playlist").
    case all
}
