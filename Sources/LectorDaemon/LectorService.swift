import GLibKit
import LectorCommon
import SpeechCore
import Synthesis

/// Lector's own D-Bus interface, `org.lector.Lector1` at `/org/lector/Lector` (data/org.lector.Lector1.xml):
/// methods onto the reading's front door (`Reader`), events as signals, properties with PropertiesChanged
/// coalesced on the main loop.
final class LectorService: DBusObject {
    private let reader: Reader
    private weak var connection: DBusConnection?
    private var announced: [Lector1.Property: Variant] = [:]
    /// The text last announced: its utterance's id and its length in UTF-8 bytes (a file read in two steps
    /// keeps its id while its text grows). `Text` is announced as invalidated, not sent.
    private var announcedText = (id: UInt64(0), bytes: 0)
    /// Which SSML marks of the utterance being read were announced.
    private var markCursor = MarkCursor()

    init(reader: Reader) {
        self.reader = reader
    }

    /// Exports the object on `connection` (before the bus name is owned).
    func export(on connection: DBusConnection) throws(GLibError) {
        self.connection = connection
        _ = try connection.register(self, path: Names.path, interface: Names.interface, introspectionXML: Introspection.lector)
        announced = properties(text: false)
        announcedText = Self.textKey(reader.current)
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
            let id = try reader.speak(text, options: try Self.speakOptions(options))
            return [.uint64(id)]
        case .speakFile:
            guard arguments.count == 2, case .handle(let index) = arguments[0], let options = arguments[1].dictionary else {
                throw .invalidArgs("SpeakFile takes (h file, a{sv} options)")
            }
            let parsed = try Self.speakOptions(options)
            let read = try fileDescriptors.withDescriptor(index) { fd in
                Input.readStart(fd, what: parsed.title ?? "the file", limit: Reader.fileStartBytes)
            }
            switch read {
            case .success(let start): return [.uint64(try reader.speak(start.text, options: parsed, rest: start.rest))]
            case .failure(let failure): throw Reader.refused(failure)
            }
        case .pause: reader.pause()
        case .resume: reader.resume()
        case .stop: reader.stop()
        case .toggle: do { try reader.toggle() } catch { throw Reader.dbusError(error) }
        case .sleepAfter:
            guard arguments.count == 1, case .int64(let microseconds) = arguments[0] else {
                throw .invalidArgs("SleepAfter takes (x microseconds)")
            }
            try reader.sleepTimer.pause(after: microseconds)
        case .sleepAtParagraphEnd: try reader.sleepTimer.pauseAtParagraphEnd()
        case .cancelSleep: reader.sleepTimer.cancel()
        case .setRate:
            guard let wpm = arguments.first?.int64.flatMap({ Int(exactly: $0) }) else { throw .invalidArgs("SetRate takes (i wpm)") }
            do { try SpeakOptions.checkRate(wpm) } catch { throw .invalidArgs(error.description) }
            reader.setRate(wpm)
        case .setPitch:
            guard let pitch = arguments.first?.int64.flatMap({ Int(exactly: $0) }) else { throw .invalidArgs("SetPitch takes (i pitch)") }
            do { try SpeakOptions.checkPitch(pitch) } catch { throw .invalidArgs(error.description) }
            reader.setPitch(pitch)
        case .setVoice:
            guard let name = arguments.first?.string else { throw .invalidArgs("SetVoice takes (s voice)") }
            try reader.setVoice(name)
        case .listVoices:
            let voices = reader.voices.map { v in
                Variant.tuple([.string(v.name), .string(v.identifier), .strings(v.languages), .string(v.gender.dbusName)])
            }
            return [.array(elementType: "(ssass)", voices)]
        }
        return []
    }

    func property(_ name: String, interface: String) throws(DBusError) -> Variant {
        let property = Lector1.Property(rawValue: name)
        if property == .position { return .int64(reader.position) }
        guard let property, let value = properties()[property] else { throw .unknownProperty("no property \(name) in \(interface)") }
        return value
    }

    func setProperty(_ name: String, interface: String, value: Variant) throws(DBusError) {
        throw .propertyReadOnly("\(name) is read-only")
    }

    /// Speak's and SpeakFile's options (`SpeakOptions.init(dbusOptions:)`); a bad one is InvalidArgs.
    static func speakOptions(_ d: [String: Variant]) throws(DBusError) -> SpeakOptions {
        do { return try SpeakOptions(dbusOptions: d) } catch { throw .invalidArgs(error.description) }
    }

    // MARK: events and properties

    /// Sends `event` as its signal, at once (events are ordered and timed by the engine).
    func emit(_ event: SpeechEvent, position: Int64) {
        let current = reader.current.flatMap { $0.id == event.utterance ? $0 : nil }
        for mark in markCursor.reached(by: event, marks: current?.marks ?? []) {
            connection?.emitSignal(path: Names.path, interface: Names.interface, name: Lector1.Signal.mark.rawValue,
                                   arguments: [.uint64(event.utterance), .string(mark.name)])
        }
        var language = ""
        if case .sentence(_, let index, _) = event {
            language = reader.current.flatMap { $0.id == event.utterance ? $0.voice(ofSentence: index).language : nil } ?? ""
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
        let text = Self.textKey(reader.current)
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
        let u = reader.current, index = reader.sentenceIndex
        let sentence = u.map { $0.sentences[min(index, $0.sentences.count - 1)].range } ?? 0..<0
        var all: [Lector1.Property: Variant] = [
            .state: .string(reader.state.rawValue),
            .utterance: .uint64(u?.id ?? 0),
            .language: .string(u?.voice(ofSentence: index).language ?? ""),
            .voice: .string(u?.voice(ofSentence: index).name ?? ""),
            .sentence: .tuple([.uint32(UInt32(index)), .uint32(UInt32(sentence.lowerBound)), .uint32(UInt32(sentence.count))]),
            .length: .int64(reader.length),
            .sleepTimer: reader.sleepTimer.dbusValue,
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
