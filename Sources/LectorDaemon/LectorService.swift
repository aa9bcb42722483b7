import GLibKit
import LectorCommon
import SpeechCore
import Synthesis

/// Lector's own D-Bus interface, `org.lector.Lector1` at `/org/lector/Lector` (data/org.lector.Lector1.xml):
/// methods onto the engine, events as signals, properties with PropertiesChanged coalesced on the main loop.
final class LectorService: DBusObject {
    private let engine: ReadingEngine
    private let preparer: UtterancePreparer
    private weak var connection: DBusConnection?
    private var announced: [Lector1.Property: Variant] = [:]
    /// The utterance whose `Text` clients were last told of (Text is announced as invalidated, not sent).
    /// The text last announced: its utterance's id and its length in UTF-8 bytes (a file read in two steps
    /// keeps its id while its text grows).
    private var announcedText = (id: UInt64(0), bytes: 0)
    /// The rest of a long text, cut into sentences while its start is read.
    private let pending: PendingSentences
    /// The sleep timer behind SleepAfter, SleepAtParagraphEnd, CancelSleep and the SleepTimer property.
    var sleepTimer: SleepTimer?
    /// Where files were left off, for Speak with a `url`.
    var bookmarks: Bookmarks?

    init(engine: ReadingEngine, preparer: UtterancePreparer) {
        self.engine = engine
        self.preparer = preparer
        let pending = PendingSentences(engine: engine)
        self.pending = pending
        engine.prepareRest = { [unowned pending] in pending.finish() }
    }

    /// Exports the object on `connection` (before the bus name is owned).
    func export(on connection: DBusConnection) throws(GLibError) {
        self.connection = connection
        _ = try connection.register(self, path: Names.path, interface: Names.interface, introspectionXML: Introspection.lector)
        announced = properties(text: false)
        announcedText = Self.textKey(engine.manager.current)
    }

    // MARK: DBusObject

    func call(method: String, interface: String, arguments: [Variant], fileDescriptors: DBusFileDescriptors,
              sender: String) throws(DBusError) -> [Variant] {
        guard let member = Lector1.Method(rawValue: method) else { throw .unknownMethod("no method \(method) in \(interface)") }
        switch member {
        case .speak:
            guard arguments.count == 2, let text = arguments[0].string, let options = arguments[1].dictionary else {
                throw .invalidArgs("Speak takes (s text, a{sv} options)")
            }
            let id = try speak(text, options: try Self.speakOptions(options))
            return [.uint64(id)]
        case .speakFile:
            guard arguments.count == 2, case .handle(let index) = arguments[0], let options = arguments[1].dictionary else {
                throw .invalidArgs("SpeakFile takes (h file, a{sv} options)")
            }
            let parsed = try Self.speakOptions(options)
            let read = try fileDescriptors.withDescriptor(index) { fd in
                Input.readStart(fd, what: parsed.title ?? "the file", limit: Self.fileStartBytes)
            }
            switch read {
            case .success(let start): return [.uint64(try speak(start.text, options: parsed, rest: start.rest))]
            case .failure(let failure): throw Self.refused(failure)
            }
        case .pause: try transition { m in m.pause() }
        case .resume: try transition { m in m.resume() }
        case .stop: try transition { m in m.stop() }
        case .toggle: try transition { m throws(SpeechError) in try m.toggle() }
        case .sleepAfter:
            guard arguments.count == 1, case .int64(let microseconds) = arguments[0] else {
                throw .invalidArgs("SleepAfter takes (x microseconds)")
            }
            try sleepTimer?.pause(after: microseconds)
        case .sleepAtParagraphEnd: try sleepTimer?.pauseAtParagraphEnd()
        case .cancelSleep: sleepTimer?.cancel()
        case .setRate:
            guard let wpm = arguments.first?.int64.flatMap({ Int(exactly: $0) }) else { throw .invalidArgs("SetRate takes (i wpm)") }
            do { try SpeakOptions.checkRate(wpm) } catch { throw .invalidArgs(error.description) }
            try transition { m in m.changeRate(wpm) }
        case .setPitch:
            guard let pitch = arguments.first?.int64.flatMap({ Int(exactly: $0) }) else { throw .invalidArgs("SetPitch takes (i pitch)") }
            do { try SpeakOptions.checkPitch(pitch) } catch { throw .invalidArgs(error.description) }
            try transition { m in m.changePitch(pitch) }
        case .setVoice:
            guard let name = arguments.first?.string else { throw .invalidArgs("SetVoice takes (s voice)") }
            try setVoice(name)
        case .listVoices:
            let voices = preparer.voices.map { v in
                Variant.tuple([.string(v.name), .string(v.identifier), .strings(v.languages), .string(v.gender.dbusName)])
            }
            return [.array(elementType: "(ssass)", voices)]
        }
        return []
    }

    func property(_ name: String, interface: String) throws(DBusError) -> Variant {
        let property = Lector1.Property(rawValue: name)
        if property == .position { return .int64(engine.position) }
        guard let property, let value = properties()[property] else { throw .unknownProperty("no property \(name) in \(interface)") }
        return value
    }

    func setProperty(_ name: String, interface: String, value: Variant) throws(DBusError) {
        throw .propertyReadOnly("\(name) is read-only")
    }

    // MARK: methods

    /// SpeakFile reads this much of a longer file before it is heard (16 KiB: ~15 minutes of speech, read in
    /// ~0.02 ms); the whole file is read once its first sentence is on its way (see `complete`).
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
    func speak(_ text: String, options: SpeakOptions, rest: Input.FileRest? = nil) throws(DBusError) -> UInt64 {
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
            || (!options.fromStart && options.url.map { bookmarks?.hasBookmark(uri: $0) ?? false } == true) {
            switch file.readWhole() {
            case .success(let whole): text = whole
            case .failure(let failure): throw Self.refused(failure)
            }
            rest = nil
        }
        // The first request after the daemon started: the worker loads eSpeak NG while the text is prepared
        // (which lists the voices and opens ICU and CLD2 on first use).
        engine.startSynthesis()
        let prepared: (Utterance, SentenceCutter?)
        do {
            if atOnce {
                prepared = try preparer.prepareStart(text, options: options, firstSlice: PendingSentences.firstSliceLength)
            } else {
                prepared = (try preparer.prepare(text, options: options), nil)
            }
        } catch {
            Log.message("refused a text: \(error.message)")
            throw DBusError(name: error.name, message: error.message)
        }
        var utterance = prepared.0
        let cutter = prepared.1
        if let rest { utterance.pendingText += rest.remainingBytes }  // about that many scalars
        // The text read until now is freed once this one is on its way: freeing the ~10,000 sentences of a
        // 1 MB text takes ~0.35 ms, which fell between this request and its first sound.
        let replaced = engine.manager.current
        try transition { m throws(SpeechError) in try m.speak(utterance, queue: options.queue) }
        Self.freeLater(replaced)
        if engine.manager.current?.id == utterance.id {
            let start = utterance
            pending.begin(cutter, utterance: utterance.id, completion: rest.map { file in
                { [unowned self] in self.complete(start, cutter: cutter, file: file, options: options) }
            })
        }
        // A file read before continues where it was left off (the sentences up to there are cut first).
        if !options.queue, !options.fromStart, let index = bookmarks?.resumePoint(for: utterance) {
            if index >= utterance.sentences.count { pending.finish() }
            if let u = engine.manager.current, u.id == utterance.id { utterance = u }
            Log.message("continuing \(utterance.url ?? "") at sentence \(index + 1) of \(utterance.sentences.count)")
            try? engine.apply { m throws(SpeechError) in try m.jump(toSentence: index) }
        }
        return utterance.id
    }

    /// SetVoice: `name` is a voice's name or identifier, else a BCP 47 tag matched to a voice.
    private func setVoice(_ name: String) throws(DBusError) {
        let voice: Voice
        let language: String
        if let v = preparer.matcher.voice(named: name) {
            voice = v
            language = v.languages.first ?? "und"
        } else if let m = try? preparer.matcher.match(name) {
            voice = m.voice
            language = m.tag
        } else {
            throw DBusError(name: Lector1.ErrorName.unknownVoice.rawValue, message: "unknown voice '\(name)'; `lector voices` lists them")
        }
        try transition { m in m.changeVoice(engineVoice: voice.identifier, name: voice.name, language: language) }
    }

    private func transition(_ body: (inout SpeechManager) throws(SpeechError) -> [SpeechAction]) throws(DBusError) {
        do { try engine.apply(body) } catch { throw Self.dbusError(error) }
    }

    /// The D-Bus error for `error` (names in data/org.lector.Lector1.xml).
    private static func dbusError(_ error: SpeechError) -> DBusError {
        let name: String
        switch error {
        case .nothingToPlay: name = Lector1.ErrorName.nothingToPlay.rawValue
        case .queueFull: name = Lector1.ErrorName.queueFull.rawValue
        case .noSuchSentence: name = "org.freedesktop.DBus.Error.InvalidArgs"
        }
        return DBusError(name: name, message: error.description)
    }

    /// Keeps `utterance` until 100 ms from now, so that freeing it does not delay what the main loop does next.
    private static func freeLater(_ utterance: Utterance?) {
        guard let utterance else { return }
        MainContext.timeout(milliseconds: 100) { withExtendedLifetime(utterance) {}; return false }
    }

    /// A file SpeakFile cannot read: logged in one line, and the D-Bus error that says why.
    private static func refused(_ failure: Input.Failure) -> DBusError {
        Log.message("refused a file: \(failure.message)")
        return .invalidArgs(failure.message)
    }

    /// Reads the whole text of a file of which only the start was read (see `speak`) and puts it in place of
    /// the start in utterance `start.id`. Returns the cutter for the rest of the text. When the file cannot
    /// be read any more, the start is all that is read (one line says why), with `cutter`. When the whole text
    /// does not begin as the start did (the file changed in between), it is read from its beginning as a new
    /// text.
    private func complete(_ start: Utterance, cutter: SentenceCutter?, file: Input.FileRest,
                          options: SpeakOptions) -> SentenceCutter? {
        let whole: Utterance, rest: SentenceCutter?
        do throws(PrepareError) {
            let text: String
            switch file.readWhole() {
            case .success(let read): text = read
            case .failure(let failure): throw PrepareError.invalid(failure.message)
            }
            (whole, rest) = try preparer.prepareStart(text, options: options, firstSlice: PendingSentences.firstSliceLength,
                                                      id: start.id)
        } catch {
            Log.warning("read only the first \(start.text.utf8.count) bytes: \(error.message)")
            return cutter
        }
        guard whole.sentences == start.sentences, whole.voices == start.voices,
              whole.text.utf8.starts(with: start.text.utf8) else {
            Log.message("\(options.title ?? "the file") changed while it was read: reading it again from its beginning")
            _ = MainContext.idle { [weak self] in _ = try? self?.speak(whole.text, options: options) }
            return nil
        }
        engine.complete(utterance: start.id, text: whole.text, pendingText: whole.pendingText)
        announceChanges()  // Text grew: invalidated
        return rest
    }

    /// Speak's and SpeakFile's options (`SpeakOptions.init(dbusOptions:)`); a bad one is InvalidArgs.
    static func speakOptions(_ d: [String: Variant]) throws(DBusError) -> SpeakOptions {
        do { return try SpeakOptions(dbusOptions: d) } catch { throw .invalidArgs(error.description) }
    }

    // MARK: events and properties

    /// Sends `event` as its signal, at once (events are ordered and timed by the engine).
    func emit(_ event: SpeechEvent, position: Int64) {
        var language = ""
        if case .sentence(_, let index, _) = event {
            language = engine.manager.current.flatMap { $0.id == event.utterance ? $0.voice(ofSentence: index).language : nil } ?? ""
        }
        let (signal, args) = Self.signal(for: event, position: position, language: language)
        connection?.emitSignal(path: Names.path, interface: Names.interface, name: signal.rawValue, arguments: args)
    }

    /// The signal that tells `event` and its arguments (of `signal.signature`): `position` (µs) for Paused and
    /// Resumed, `language` (BCP 47) for Sentence.
    static func signal(for event: SpeechEvent, position: Int64, language: String) -> (Lector1.Signal, [Variant]) {
        let id = Variant.uint64(event.utterance)
        switch event {
        case .started: return (.started, [id])
        case .sentence(_, let index, let range):
            return (.sentence, [id, .uint32(UInt32(index)), .uint32(UInt32(range.lowerBound)), .uint32(UInt32(range.count)),
                                .string(language)])
        case .word(_, let range): return (.word, [id, .uint32(UInt32(range.lowerBound)), .uint32(UInt32(range.count))])
        case .paused: return (.paused, [id, .int64(position)])
        case .resumed: return (.resumed, [id, .int64(position)])
        case .stopped: return (.stopped, [id])
        case .finished: return (.finished, [id])
        case .error(_, let message, let fatal): return (.error, [id, .string(message), .bool(fatal)])
        }
    }

    /// Announces the properties that changed since the last announcement (one PropertiesChanged, or none).
    ///
    /// `Text` travels in `invalidated_properties` only (its introspection says
    /// `org.freedesktop.DBus.Property.EmitsChangedSignal` "invalidates"): a whole book would otherwise be sent
    /// to every listener with each new text; clients that want it Get it.
    func announceChanges() {
        let now = properties(text: false)
        let changed = now.filter { announced[$0.key] != $0.value }
        let text = Self.textKey(engine.manager.current)
        let invalidated = text != announcedText ? [Lector1.Property.text.rawValue] : []
        guard !changed.isEmpty || !invalidated.isEmpty else { return }
        announced = now
        announcedText = text
        connection?.emitPropertiesChanged(path: Names.path, interface: Names.interface, changed: changed.wireNamed,
                                          invalidated: invalidated)
    }

    private static func textKey(_ u: Utterance?) -> (id: UInt64, bytes: Int) {
        (u?.id ?? 0, u?.text.utf8.count ?? 0)
    }

    /// Every property but Position; `Text` only with `text` (see `announceChanges`).
    private func properties(text: Bool = true) -> [Lector1.Property: Variant] {
        let m = engine.manager
        let u = m.current
        let sentence = u.map { $0.sentences[min(m.sentenceIndex, $0.sentences.count - 1)].range } ?? 0..<0
        var all: [Lector1.Property: Variant] = [
            .state: .string(m.state.rawValue),
            .utterance: .uint64(u?.id ?? 0),
            .language: .string(u?.voice(ofSentence: m.sentenceIndex).language ?? ""),
            .voice: .string(u?.voice(ofSentence: m.sentenceIndex).name ?? ""),
            .sentence: .tuple([.uint32(UInt32(m.sentenceIndex)), .uint32(UInt32(sentence.lowerBound)), .uint32(UInt32(sentence.count))]),
            .length: .int64(engine.length),
            .sleepTimer: sleepTimer?.dbusValue ?? .tuple([.string("off"), .int64(0)]),
        ]
        if text { all[.text] = .string(u?.text ?? "") }
        return all
    }
}

extension Voice.Gender {
    /// "male", "female" or "" as Lector's D-Bus interface spells it.
    var dbusName: String {
        switch self {
        case .male: return "male"
        case .female: return "female"
        default: return ""
        }
    }
}
