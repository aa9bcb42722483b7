import GLibKit
import LectorCommon
import SpeechCore
import Synthesis

/// The front door of the reading: what every adapter (Lector1, MPRIS) asks of it, and everything that belongs
/// to a reading from request to end: preparing the text, cutting the rest of a long one
/// (`PendingSentences`), reading a file whole once its start is heard, bookmarks, the sleep timer.
///
/// Adapters translate D-Bus to these calls and read the snapshot (`state`, `current`, `position`, …); they
/// never touch the state machine (`SpeechManager`) or the engine, nor each other. Every call runs on the GLib
/// main loop.
final class Reader {
    let engine: ReadingEngine
    private let preparer: UtterancePreparer
    /// The rest of a long text, cut into sentences while its start is read.
    let pending: PendingSentences
    /// Pauses the reading at a time or at the end of a paragraph.
    let sleepTimer: SleepTimer
    /// Where files were left off, for texts read with a `url`.
    let bookmarks: Bookmarks
    /// Reads documents (EPUB, PDF, HTML, …) in a child process each, the next one's kept waiting.
    let documents = DocumentReader(keepsWorkersWaiting: true)
    /// Counts the texts asked for (each `speak`, each document): a document that comes back from its worker
    /// after a newer text was asked for is not read over it.
    var textRequests: UInt64 = 0
    /// The start of a document being read while its worker extracts the rest (`completeDocument`).
    var documentStart: (utterance: Utterance, cutter: SentenceCutter?, options: SpeakOptions)?

    /// An event, at the moment it is heard, with the position heard then (µs).
    var onEvent: ((SpeechEvent, Int64) -> Void)?
    /// Something clients may show changed: announce it, coalesced.
    var onChange: (() -> Void)?

    init(engine: ReadingEngine, preparer: UtterancePreparer) {
        self.engine = engine
        self.preparer = preparer
        let pending = PendingSentences(engine: engine)
        self.pending = pending
        sleepTimer = SleepTimer(engine: engine)
        bookmarks = Bookmarks(engine: engine)
        engine.prepareRest = { [unowned pending] in pending.finish() }
        engine.onEvent = { [unowned self] event, position in
            self.sleepTimer.observe(event)
            self.bookmarks.observe(event)
            self.onEvent?(event, position)
        }
        engine.onChange = { [unowned self] in self.onChange?() }
        sleepTimer.onChange = { [unowned self] in self.onChange?() }
    }

    // MARK: what clients see

    /// reading, paused or stopped.
    var state: SpeechState { engine.manager.state }
    /// The text being read (or last read), if any.
    var current: Utterance? { engine.manager.current }
    /// The sentence being read (0 when stopped).
    var sentenceIndex: Int { engine.manager.sentenceIndex }
    /// Position heard in the current text, µs.
    var position: Int64 { engine.position }
    /// Length of the current text as published, µs.
    var length: Int64 { engine.length }
    /// Stream volume, linear 0...1.
    var volume: Double { engine.playback.volume }
    /// The installed voices, Piper's found again if their folders changed (`UtterancePreparer.voices`).
    var voices: [Voice] {
        preparer.refreshPiperVoices()
        return preparer.voices
    }

    // MARK: reading

    /// SpeakFile reads this much of a longer file before it is heard (16 KiB: about a quarter of an hour of
    /// speech); the whole file is read once its first sentence is on its way (see `complete`).
    static let fileStartBytes = 16_384

    /// Reads `text` with `options`; returns the utterance id.
    ///
    /// A text that is read at once is prepared only up to its first paragraph break after a few KB, so that
    /// the first sound does not wait for the rest; the rest is cut in idle slices (`PendingSentences`). A
    /// queued text is prepared whole.
    ///
    /// With `rest`, `text` is the start of a file: the whole file is read later, in the first step of
    /// `PendingSentences`, unless its start is not enough (SSML is parsed whole, a queued text is prepared
    /// whole, and a bookmark is found by the whole text's hash), in which case it is read now.
    /// - Throws: `DBusError` with Lector's error names (data/org.lector.Lector1.xml): a full queue, a text or
    ///   file that cannot be read, a bad language, voice, rate or pitch.
    /// A document's `structure` (title, authors, chapters) goes with its text into the utterance.
    ///
    /// With `awaitingWhole`, `text` is the start of a document whose whole text comes later
    /// (`completeDocument`): its rest is not cut until then, and reading does not end before it.
    func speak(_ text: String, options: SpeakOptions, rest: Input.FileRest? = nil,
               structure: TextStructure? = nil, awaitingWhole: Bool = false) throws(DBusError) -> UInt64 {
        textRequests &+= 1
        let atOnce = !options.queue || engine.manager.state == .stopped
        if !atOnce {
            // Refused before the text is read whole or prepared: a full queue costs the caller nothing here.
            do { try engine.manager.checkQueue(bytes: text.utf8.count + (rest?.remainingBytes ?? 0)) } catch {
                Log.message("refused a queued text: \(error.description)")
                throw Self.dbusError(error)
            }
        }
        var text = text
        var rest = rest
        if let file = rest, options.ssml || !atOnce
            || (!options.fromStart && options.url.map { bookmarks.hasBookmark(uri: $0) } == true) {
            switch file.readWhole() {
            case .success(let whole): text = whole
            case .failure(let failure): throw Self.refused(failure)
            }
            rest = nil
        }
        // The first request after the daemon started: the worker loads eSpeak NG while the text is prepared
        // (which lists the voices and opens ICU and CLD2 on first use).
        engine.startSynthesis()
        var (utterance, cutter) = try prepare(text, options: options, atOnce: atOnce, marks: structure)
        if let structure { utterance.structure = structure }
        if let rest { utterance.pendingText += rest.remainingBytes }  // about that many scalars
        if awaitingWhole { utterance.pendingText += text.utf8.count }  // unknown: at least as much again
        // The text read until now is freed once this one is on its way: freeing the sentences of a long text
        // would otherwise come between this request and its first sound.
        let replaced = engine.manager.current
        try transition { m throws(SpeechError) in try m.speak(utterance, queue: options.queue) }
        Self.freeLater(replaced)
        if awaitingWhole, engine.manager.current?.id == utterance.id {
            documentStart = (utterance, cutter, options)
        } else if engine.manager.current?.id == utterance.id {
            let start = utterance
            pending.begin(cutter, utterance: utterance.id, completion: rest.map { file in
                { [unowned self] in self.complete(start, cutter: cutter, options: options, whole: file.readWhole) }
            })
        }
        continueFromBookmark(&utterance, options: options)
        return utterance.id
    }

    private func prepare(_ text: String, options: SpeakOptions, atOnce: Bool,
                         marks: TextStructure?) throws(DBusError) -> (Utterance, SentenceCutter?) {
        do {
            if atOnce {
                return try preparer.prepareStart(text, options: options, firstSlice: PendingSentences.firstSliceLength,
                                                 declared: marks)
            }
            return (try preparer.prepare(text, options: options, declared: marks), nil)
        } catch {
            Log.message("refused a text: \(error.message)")
            throw DBusError(name: error.name, message: error.message)
        }
    }

    /// A file read before continues where it was left off (the sentences up to there are cut first).
    private func continueFromBookmark(_ utterance: inout Utterance, options: SpeakOptions) {
        guard !options.queue, !options.fromStart, let index = bookmarks.resumePoint(for: utterance) else { return }
        if index >= utterance.sentences.count { pending.finish() }
        if let u = engine.manager.current, u.id == utterance.id { utterance = u }
        Log.message("continuing \(utterance.url ?? "") at sentence \(index + 1) of \(utterance.sentences.count)")
        try? engine.apply { m throws(SpeechError) in try m.jump(toSentence: index) }
    }

    /// Reads the whole text of a file of which only the start was read (see `speak`) and puts it in place of
    /// the start in utterance `start.id`. Returns the cutter for the rest of the text. When the file cannot
    /// be read any more, the start is all that is read (one line says why), with `cutter`. When the whole text
    /// does not begin as the start did (the file changed in between), it is read from its beginning as a new
    /// text.
    func complete(_ start: Utterance, cutter: SentenceCutter?, options: SpeakOptions, structure: TextStructure? = nil,
                  whole readWhole: () -> Result<String, Input.Failure>) -> SentenceCutter? {
        let whole: Utterance, rest: SentenceCutter?
        do throws(PrepareError) {
            let text: String
            switch readWhole() {
            case .success(let read): text = read
            case .failure(let failure): throw PrepareError.invalid(failure.message)
            }
            (whole, rest) = try preparer.prepareStart(text, options: options, firstSlice: PendingSentences.firstSliceLength,
                                                      id: start.id, declared: structure)
        } catch {
            Log.warning("read only the first \(start.text.utf8.count) bytes: \(error.message)")
            return cutter
        }
        guard whole.sentences == start.sentences, whole.voices == start.voices,
              whole.text.utf8.starts(with: start.text.utf8) else {
            Log.message("\(options.title ?? "the file") changed while it was read: reading it again from its beginning")
            _ = MainContext.idle { [weak self] in _ = try? self?.speak(whole.text, options: options, structure: structure) }
            return nil
        }
        engine.complete(utterance: start.id, text: whole.text, pendingText: whole.pendingText, structure: structure)
        onChange?()  // Text grew
        return rest
    }

    /// Keeps `utterance` until 100 ms from now, so that freeing it does not delay what the main loop does next.
    private static func freeLater(_ utterance: Utterance?) {
        guard let utterance else { return }
        MainContext.timeout(milliseconds: 100) { withExtendedLifetime(utterance) {}; return false }
    }

    /// A file that cannot be read: logged in one line, and the D-Bus error that says why.
    static func refused(_ failure: Input.Failure) -> DBusError {
        Log.message("refused a file: \(failure.message)")
        return .invalidArgs(failure.message)
    }

    // MARK: control

    /// reading → paused (`SpeechManager.pause`).
    func pause() {
        engine.forgetPlayWhenBack()
        try? engine.apply { m in m.pause() }
    }
    /// paused → reading.
    func resume() { try? engine.apply { m in m.resume() } }
    /// → stopped, the text kept.
    func stop() { try? engine.apply { m in m.stop() } }
    /// Pauses or resumes; from stopped, reads the last text again. - Throws: `SpeechError.nothingToPlay`.
    func toggle() throws(SpeechError) { try engine.apply { m throws(SpeechError) in try m.toggle() } }
    /// Resumes, or reads the last text again. - Throws: `SpeechError.nothingToPlay`.
    func play() throws(SpeechError) { try engine.apply { m throws(SpeechError) in try m.play() } }
    /// Moves to sentence `index`, keeping the state. - Throws: `SpeechError`.
    func jump(to index: Int) throws(SpeechError) { try engine.apply { m throws(SpeechError) in try m.jump(toSentence: index) } }

    /// The next sentence, cutting the rest of the text first when needed; false at the last one.
    func next() throws(SpeechError) -> Bool {
        if let u = current, !u.isComplete, sentenceIndex + 1 >= u.sentences.count { pending.finish() }
        guard let u = current, sentenceIndex + 1 < u.sentences.count else { return false }
        try jump(to: sentenceIndex + 1)
        return true
    }

    /// Reads from the word that holds text offset `offset` (Unicode scalars into the current text) when its
    /// sentence was synthesized before (its words are known), else from the start of that sentence (an
    /// offset between sentences belongs to the sentence before it), cutting the rest of a long text first
    /// when the offset lies beyond what is cut. Reading starts there whatever the state (paused resumes).
    /// - Throws: `SpeechError.nothingToPlay` with no text, `.noSuchSentence` for an offset past the text.
    func read(fromOffset offset: Int) throws(SpeechError) {
        if let u = current, !u.isComplete, offset >= (u.sentences.last?.range.upperBound ?? 0) { pending.finish() }
        guard let u = current, !u.sentences.isEmpty else { throw .nothingToPlay }
        guard offset >= 0, offset < u.text.unicodeScalars.count else { throw .noSuchSentence(.max) }
        let index = Self.sentence(holding: offset, in: u.sentences)
        try engine.jump(toSentence: index, textOffset: offset - u.sentences[index].range.lowerBound)
        if state == .paused { resume() }
    }

    /// The index of the last sentence that starts at or before `offset` (0 when none does); `sentences` are in
    /// text order.
    static func sentence(holding offset: Int, in sentences: [Sentence]) -> Int {
        var low = 0, high = sentences.count
        while low < high {
            let mid = (low + high) / 2
            if sentences[mid].range.lowerBound <= offset { low = mid + 1 } else { high = mid }
        }
        return max(low - 1, 0)
    }

    /// Moves to `target` µs (`ReadingEngine.seek`); false past the end of the last sentence.
    func seek(to target: Int64) throws(SpeechError) -> Bool { try engine.seek(to: target) }

    /// The rate in words per minute, heard from the next word (`SpeechManager.changeRate`).
    func setRate(_ wpm: Int) { try? engine.apply { m in m.changeRate(wpm) } }
    /// What is read again when it ends (`SpeechManager.loop`); clients are told of the change.
    var loop: LoopMode { engine.manager.loop }
    /// Sets `loop`: from the end of the sentence or text being read.
    func setLoop(_ mode: LoopMode) {
        try? engine.apply { m in
            m.loop = mode
            return []
        }
        onChange?()
    }
    /// The pitch 0–99, heard from the next word.
    func setPitch(_ pitch: Int) { try? engine.apply { m in m.changePitch(pitch) } }
    /// The stream volume (linear, clamped to 0...1).
    func setVolume(_ value: Double) {
        engine.playback.setVolume(value)
        onChange?()
    }

    /// Another voice from the next word: `name` is a voice's name or identifier, else a BCP 47 tag matched to
    /// a voice. - Throws: `DBusError` UnknownVoice.
    func setVoice(_ name: String) throws(DBusError) {
        let voice: Voice
        let language: String
        if let v = preparer.voice(named: name) {
            voice = v
            language = v.languages.first ?? "und"
        } else if let m = preparer.voiceTag(name) {
            voice = m.voice
            language = m.tag
        } else {
            throw DBusError(name: Lector1.ErrorName.unknownVoice.rawValue, message: "unknown voice '\(name)'; `lector voices` lists them")
        }
        try? engine.apply { m in m.changeVoice(engineVoice: voice.identifier, name: voice.name, language: language) }
    }

    private func transition(_ body: (inout SpeechManager) throws(SpeechError) -> [SpeechAction]) throws(DBusError) {
        do { try engine.apply(body) } catch { throw Self.dbusError(error) }
    }

    /// The D-Bus error for `error` (names in data/org.lector.Lector1.xml).
    static func dbusError(_ error: SpeechError) -> DBusError {
        let name: String
        switch error {
        case .nothingToPlay: name = Lector1.ErrorName.nothingToPlay.rawValue
        case .queueFull: name = Lector1.ErrorName.queueFull.rawValue
        case .noSuchSentence: name = "org.freedesktop.DBus.Error.InvalidArgs"
        }
        return DBusError(name: name, message: error.description)
    }
}
