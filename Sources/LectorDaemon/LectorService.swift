@preconcurrency import Glibc
import GLibKit
import LectorCommon
import SpeechCore
import Synthesis

/// Lector's own D-Bus interface, `org.lector.Lector1` at `/org/lector/Lector` (data/org.lector.Lector1.xml):
/// methods onto the reading's front door (`Reader`), events as signals, properties with PropertiesChanged
/// coalesced on the main loop.
final class LectorService: DBusDeferringObject {
    private let reader: Reader
    private weak var connection: DBusConnection?
    private var announced: [Lector1.Property: Variant] = [:]
    /// The text last announced: its utterance's id and its length in UTF-8 bytes (a file read in two steps
    /// keeps its id while its text grows). `Text` is announced as invalidated, not sent.
    private var announcedText = (id: UInt64(0), bytes: 0)
    /// The clients (unique bus names) that asked for Word signals (WatchWords), each watched so that it is
    /// forgotten when it leaves the bus.
    private var wordWatchers: [String: NameWatch] = [:]
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
        case .speak, .speakFile:
            throw .failed("\(method) is answered later")  // see answersLater
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
        case .readFrom:
            guard arguments.count == 1, case .uint32(let offset) = arguments[0] else { throw .invalidArgs("ReadFrom takes (u offset)") }
            do { try reader.read(fromOffset: Int(offset)) } catch { throw Reader.dbusError(error) }
        case .watchWords:
            guard arguments.count == 1, let watch = arguments[0].bool else { throw .invalidArgs("WatchWords takes (b watch)") }
            watchWords(watch, for: sender)
        case .jumpToChapter:
            guard let index = arguments.first?.int64.flatMap({ Int(exactly: $0) }) else { throw .invalidArgs("JumpToChapter takes (u index)") }
            try reader.jump(toChapter: index)
        case .move:
            guard arguments.count == 2, let unit = arguments[0].string, let count = arguments[1].int64.flatMap({ Int(exactly: $0) }) else {
                throw .invalidArgs("Move takes (s unit, i count)")
            }
            return [.bool(try reader.move(count, by: unit))]
        case .sentences:
            guard arguments.count == 2, let first = arguments[0].int64, let count = arguments[1].int64 else {
                throw .invalidArgs("Sentences takes (u first, u count)")
            }
            let listed = reader.sentences(from: Int(first), count: Int(count)).map { s in
                Variant.tuple([.uint32(UInt32(s.range.lowerBound)), .uint32(UInt32(s.range.count)), .string(s.heard)])
            }
            return [.array(elementType: "(uus)", listed)]
        case .listVoices:
            let voices = reader.voices.map { v in
                Variant.tuple([.string(v.name), .string(v.identifier), .strings(v.languages), .string(v.gender.dbusName)])
            }
            return [.array(elementType: "(ssass)", voices)]
        }
        return []
    }

    // MARK: Speak and SpeakFile, answered once a document is read

    func answersLater(method: String, interface: String) -> Bool {
        method == Lector1.Method.speak.rawValue || method == Lector1.Method.speakFile.rawValue
    }

    /// Speak and SpeakFile: a plain text, SSML or a text file is answered at once; a document (by its
    /// `format` option, or a file's content type) once the document worker has read it.
    func call(method: String, interface: String, arguments: [Variant], sender: String, reply: DBusPendingReply) {
        do throws(DBusError) {
            let answer: (Result<UInt64, DBusError>) -> Void = { result in
                switch result {
                case .success(let id): reply.succeed([.uint64(id)])
                case .failure(let error): reply.fail(error)
                }
            }
            if method == Lector1.Method.speak.rawValue {
                try speak(arguments, answer)
            } else {
                try speakFile(arguments, fileDescriptors: reply.fileDescriptors, answer)
            }
        } catch {
            reply.fail(error)
        }
    }

    private func speak(_ arguments: [Variant], _ answer: @escaping (Result<UInt64, DBusError>) -> Void) throws(DBusError) {
        guard arguments.count == 2, let text = arguments[0].string, let options = arguments[1].dictionary else {
            throw .invalidArgs("Speak takes (s text, a{sv} options)")
        }
        let parsed = try Self.speakOptions(options)
        guard let format = try Reader.documentFormat(options: parsed, name: nil, head: []) else {
            return answer(.success(try reader.speak(text, options: parsed)))
        }
        // A document sent as text (`curl … | lector read --format html`): the worker reads it from a temporary
        // file, unlinked at once, that only this daemon and the worker hold.
        var template = Array(((getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp") + "/lector-document-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        if fd >= 0 {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = template.withUnsafeBufferPointer { unlink($0.baseAddress!) }
        }
        guard fd >= 0 else { throw .failed("cannot hand the document to its reader: \(String(cString: strerror(errno)))") }
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { close(fd); throw .failed("cannot hand the document to its reader") }
            bytes = bytes.dropFirst(n)
        }
        lseek(fd, 0, SEEK_SET)
        reader.speakDocument(descriptor: fd, format: format, options: parsed, done: answer)
    }

    private func speakFile(_ arguments: [Variant], fileDescriptors: DBusFileDescriptors,
                           _ answer: @escaping (Result<UInt64, DBusError>) -> Void) throws(DBusError) {
        guard arguments.count == 2, case .handle(let index) = arguments[0], let options = arguments[1].dictionary else {
            throw .invalidArgs("SpeakFile takes (h file, a{sv} options)")
        }
        let parsed = try Self.speakOptions(options)
        // The descriptor is checked (a regular file) before anything is read from it; a document goes to its
        // worker before the start of a text would be read and decoded.
        let what = parsed.title ?? "the file"
        typealias Opened = (text: Result<Input.FileStart, Input.Failure>?, document: (Int32, String)?)
        let (read, document) = try fileDescriptors.withDescriptor(index) { fd throws(DBusError) -> Opened in
            // Not a regular file (or too large): readStart refuses it without reading.
            guard Input.unreadable(fd) == nil else { return (Input.readStart(fd, what: what, limit: 0), nil) }
            var head = [UInt8](repeating: 0, count: OpenPolicy.sniffedBytes)
            let n = head.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
            head.removeSubrange(max(0, n)...)
            if let format = try Reader.documentFormat(options: parsed, name: parsed.title, head: head) {
                return (nil, (fcntl(fd, F_DUPFD_CLOEXEC, 3), format))
            }
            return (Input.readStart(fd, what: what, limit: Reader.fileStartBytes), nil)
        }
        if let (fd, format) = document {
            guard fd >= 0 else { throw .failed("cannot hand the document to its reader") }
            lseek(fd, 0, SEEK_SET)
            return reader.speakDocument(descriptor: fd, format: format, options: parsed, done: answer)
        }
        switch read {
        case .success(let start)?: answer(.success(try reader.speak(start.text, options: parsed, rest: start.rest)))
        case .failure(let failure)?: throw Reader.refused(failure)
        case nil: throw .failed("cannot read \(what)")
        }
    }

    func property(_ name: String, interface: String) throws(DBusError) -> Variant {
        let property = Lector1.Property(rawValue: name)
        guard let property else { throw .unknownProperty("no property \(name) in \(interface)") }
        return value(of: property)
    }

    func setProperty(_ name: String, interface: String, value: Variant) throws(DBusError) {
        throw .propertyReadOnly("\(name) is read-only")
    }

    /// Adds `sender` to the clients sent Word signals, or removes it.
    private func watchWords(_ watch: Bool, for sender: String) {
        guard watch else {
            wordWatchers.removeValue(forKey: sender)?.cancel()
            return
        }
        guard wordWatchers[sender] == nil, let connection else { return }
        wordWatchers[sender] = connection.watchName(sender, appeared: { _ in }, vanished: { [weak self] in
            self?.wordWatchers.removeValue(forKey: sender)?.cancel()
        })
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
        if signal == .word {
            // Only to the clients that asked (WatchWords): nothing at all while none did.
            for watcher in wordWatchers.keys {
                connection?.emitSignal(path: Names.path, interface: Names.interface, name: signal.rawValue, arguments: args,
                                       destination: watcher)
            }
            return
        }
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
        let invalidated = text != announcedText ? [Lector1.Property.text.rawValue, Lector1.Property.chapters.rawValue,
                                                       Lector1.Property.chapterOffsets.rawValue] : []
        guard !changed.isEmpty || !invalidated.isEmpty else { return }
        announced = now
        announcedText = text
        connection?.emitPropertiesChanged(path: Names.path, interface: Names.interface, changed: changed.wireNamed,
                                          invalidated: invalidated)
    }

    private static func textKey(_ u: Utterance?) -> (id: UInt64, bytes: Int) {
        (u?.id ?? 0, u?.text.utf8.count ?? 0)
    }

    /// The properties announced (all but Text, Chapters, ChapterOffsets and Position: `text` adds the first
    /// three), each computed as `value(of:)` does.
    private func properties(text: Bool = true) -> [Lector1.Property: Variant] {
        var names: [Lector1.Property] = [.state, .utterance, .language, .voice, .sentence, .length, .sleepTimer]
        if text { names += [.text, .chapters, .chapterOffsets] }
        return Dictionary(uniqueKeysWithValues: names.map { ($0, value(of: $0)) })
    }

    /// `property`'s value now, computed alone: a Get costs what that property holds (Chapters: one pass over
    /// the sentences, `ChapterNavigation.chapterStarts`), never what the others do.
    private func value(of property: Lector1.Property) -> Variant {
        let u = reader.current, index = reader.sentenceIndex
        switch property {
        case .state: return .string(reader.state.rawValue)
        case .utterance: return .uint64(u?.id ?? 0)
        case .language: return .string(u?.voice(ofSentence: index).language ?? "")
        case .voice: return .string(u?.voice(ofSentence: index).name ?? "")
        case .sentence:
            let sentence = u.map { $0.sentences[min(index, $0.sentences.count - 1)].range } ?? 0..<0
            return .tuple([.uint32(UInt32(index)), .uint32(UInt32(sentence.lowerBound)), .uint32(UInt32(sentence.count))])
        case .position: return .int64(reader.position)
        case .length: return .int64(reader.length)
        case .sleepTimer: return reader.sleepTimer.dbusValue
        case .text: return .string(Self.sendable(u?.text ?? ""))
        case .chapters:
            // Start times are refined as sentences are synthesized: announced as invalidated with Text, not sent.
            return .array(elementType: "(sxu)", reader.chapterStarts.map { c in
                .tuple([.string(c.title), .int64(c.start), .uint32(UInt32(clamping: c.level))])
            })
        case .chapterOffsets:
            return .array(elementType: "u", (u?.structure.chapters ?? []).map { .uint32(UInt32(clamping: $0.start)) })
        }
    }

    /// `text`, or its first `Lector1.maximumTextReplyBytes` (at a character boundary) when longer: a reply
    /// over the bus's message limit (dbus-daemon's default, 32 MiB) would make the bus disconnect the daemon.
    static func sendable(_ text: String) -> String {
        let limit = Lector1.maximumTextReplyBytes
        guard text.utf8.count > limit else { return text }
        let utf8 = text.utf8
        var end = utf8.index(utf8.startIndex, offsetBy: limit)
        while end > utf8.startIndex && utf8[end] & 0xC0 == 0x80 { utf8.formIndex(before: &end) }  // not inside a character
        return String(decoding: utf8[..<end], as: UTF8.self)
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
