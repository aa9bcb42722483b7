@preconcurrency import Glibc
import GLibKit
import LectorCommon
import SpeechCore

/// The MPRIS2 adaptor: `org.mpris.MediaPlayer2` and `org.mpris.MediaPlayer2.Player` at `/org/mpris/MediaPlayer2`
/// (Media Player Remote Interfacing Specification 2.2), so media keys, playerctl and the GNOME/KDE widgets
/// control the speech.
///
/// Mapping: PlaybackStatus Playing/Paused/Stopped = reading/paused/stopped; Next/Previous move by sentence;
/// Rate 1.0 = the default speaking rate (175 wpm); Volume = stream volume; Position = audio heard (µs).
final class MPRISService: DBusDeferringObject {
    static let path = MPRIS.path
    static let rootInterface = MPRIS.rootInterface
    static let playerInterface = MPRIS.playerInterface
    /// The object path `mpris:trackid` takes when nothing is loaded (MPRIS2 2.2).
    static let noTrack = MPRIS.noTrack

    private let reader: Reader
    private let quit: () -> Void
    /// The connections it is exported on, weakly: the one that owns the MPRIS name (for every client, sandboxed
    /// players' clients included; Lector's own connection does not export the player).
    private var exportedOn: [() -> DBusConnection?] = []
    private var connection: DBusConnection? { exportedOn.lazy.compactMap { $0() }.first }
    private var announced: [String: [String: Variant]] = [:]
    private let artURL: String?
    /// Who may open which file by OpenUri (`OpenPolicy`), and the facts it judges.
    private lazy var openGate = OpenUriGate { [weak self] sender, done in
        guard let connection = self?.connection else { return done(.failure(.failed("no connection to the bus"))) }
        Self.credentials(of: sender, on: connection, done)
    }

    /// Whether Raise can show the reader window (`lector-window` is there).
    private let canRaise = WindowRaiser.isAvailable
    private let windowRaiser = WindowRaiser()

    init(reader: Reader, quit: @escaping () -> Void) {
        self.reader = reader
        self.quit = quit
        artURL = Self.findIcon().flatMap(pathToFileURI)
    }

    /// Exports both interfaces on `connection` (before the MPRIS name is owned). The daemon calls it once, for
    /// the connection of the MPRIS name; were it called for several, signals would go out on each.
    func export(on connection: DBusConnection) throws(GLibError) {
        exportedOn.append { [weak connection] in connection }
        _ = try connection.register(self, path: Self.path, interface: Self.rootInterface, introspectionXML: Introspection.mpris)
        _ = try connection.register(self, path: Self.path, interface: Self.playerInterface, introspectionXML: Introspection.mpris)
        announced = [Self.rootInterface: rootProperties(), Self.playerInterface: playerProperties()]
    }

    // MARK: DBusObject

    func call(method: String, interface: String, arguments: [Variant], sender: String) throws(DBusError) -> [Variant] {
        let loaded = reader.current != nil
        switch (interface, method) {
        case (Self.rootInterface, MPRIS.RootMethod.raise.rawValue):
            if let connection { windowRaiser.raise(on: connection) } // the reader window (CanRaise when it is built)
        case (Self.rootInterface, MPRIS.RootMethod.quit.rawValue):
            Log.message("ending: MPRIS Quit from \(sender)")
            quit()
        case (Self.playerInterface, MPRIS.PlayerMethod.play.rawValue):
            guard loaded else { break } // spec: no effect when there is nothing to play
            try failing { () throws(SpeechError) in try reader.play() }
        case (Self.playerInterface, MPRIS.PlayerMethod.pause.rawValue): reader.pause()
        case (Self.playerInterface, MPRIS.PlayerMethod.playPause.rawValue):
            guard loaded else { break }
            try failing { () throws(SpeechError) in try reader.toggle() }
        case (Self.playerInterface, MPRIS.PlayerMethod.stop.rawValue): reader.stop()
        case (Self.playerInterface, MPRIS.PlayerMethod.next.rawValue):
            if try failing({ () throws(SpeechError) in try reader.next() }) { seeked() }
        case (Self.playerInterface, MPRIS.PlayerMethod.previous.rawValue):
            guard loaded else { break }
            try jump(to: max(0, reader.sentenceIndex - 1))
        case (Self.playerInterface, MPRIS.PlayerMethod.seek.rawValue):
            guard let offset = arguments.first?.int64 else { throw .invalidArgs("Seek takes (x offset)") }
            guard loaded else { break }
            let (target, overflow) = reader.position.addingReportingOverflow(offset)
            try seek(to: overflow ? (offset > 0 ? Int64.max : 0) : target)
        case (Self.playerInterface, MPRIS.PlayerMethod.setPosition.rawValue):
            guard arguments.count == 2, case .objectPath(let track) = arguments[0], let position = arguments[1].int64 else {
                throw .invalidArgs("SetPosition takes (o track, x position)")
            }
            // Spec: ignored for a track that is not the current one, and for a position outside [0, length].
            guard track == trackID, position >= 0, position <= reader.length else { break }
            try seek(to: position)
        default:
            throw .unknownMethod("no method \(method) in \(interface)")
        }
        return []
    }

    func property(_ name: String, interface: String) throws(DBusError) -> Variant {
        if interface == Self.playerInterface && name == MPRIS.PlayerProperty.position.rawValue { return .int64(reader.position) }
        // Metadata (the sentence, the text's first characters) is built only when it is asked for: a client
        // polling PlaybackStatus while reading costs a few µs instead of building it each time.
        let all = interface == Self.rootInterface ? rootProperties()
            : playerProperties(metadata: name == MPRIS.PlayerProperty.metadata.rawValue)
        guard let value = all[name] else { throw .unknownProperty("no property \(name) in \(interface)") }
        return value
    }

    func setProperty(_ name: String, interface: String, value: Variant) throws(DBusError) {
        switch (interface, name) {
        case (Self.playerInterface, MPRIS.PlayerProperty.volume.rawValue):
            guard let v = value.unboxed.double, !v.isNaN else { throw .invalidArgs("Volume is a number (d) from 0.0 to 1.0") }
            reader.setVolume(v)
        case (Self.playerInterface, MPRIS.PlayerProperty.rate.rawValue):
            guard let v = value.unboxed.double, !v.isNaN else { throw .invalidArgs("Rate is a number (d)") }
            if v == 0 { reader.pause(); return } // spec: a rate of 0.0 acts as Pause
            let wpm = Int((min(Self.maximumRate, max(Self.minimumRate, v)) * Double(SpeakOptions.defaultRate)).rounded())
            let before = reader.current?.rate
            reader.setRate(wpm)
            // The position does not move, but widgets extrapolate it from Rate: Seeked gives them a new start.
            if reader.state != .stopped, before != reader.current?.rate { seeked() }
        case (Self.playerInterface, MPRIS.PlayerProperty.loopStatus.rawValue):
            guard let text = value.unboxed.string, let status = MPRIS.LoopStatus(rawValue: text) else {
                throw .invalidArgs("LoopStatus is \"None\", \"Track\" or \"Playlist\"")
            }
            reader.setLoop(Self.loopMode(status))
        case (Self.rootInterface, MPRIS.RootProperty.fullscreen.rawValue):
            break // not supported: the value stays false
        default:
            throw .propertyReadOnly("\(name) cannot be set")
        }
    }

    /// The MPRIS name of a loop mode: Track is the sentence, Playlist the text and the queue.
    static func loopStatus(_ mode: LoopMode) -> MPRIS.LoopStatus {
        switch mode {
        case .none: .none
        case .sentence: .track
        case .all: .playlist
        }
    }

    /// The loop mode an MPRIS LoopStatus asks for.
    static func loopMode(_ status: MPRIS.LoopStatus) -> LoopMode {
        switch status {
        case .none: .none
        case .track: .sentence
        case .playlist: .all
        }
    }

    // MARK: methods

    /// Runs `body`; a `SpeechError` is a Failed error with its description.
    @discardableResult
    private func failing<T>(_ body: () throws(SpeechError) -> T) throws(DBusError) -> T {
        do { return try body() } catch { throw .failed(error.description) }
    }

    private func jump(to sentence: Int) throws(DBusError) {
        try failing { () throws(SpeechError) in try reader.jump(to: sentence) }
        seeked()
    }

    private func seek(to position: Int64) throws(DBusError) {
        let moved: Bool
        moved = try failing { () throws(SpeechError) in try reader.seek(to: position) }
        if moved { seeked() }
    }

    private func seeked() {
        for connection in exportedOn.compactMap({ $0() }) {
            connection.emitSignal(path: Self.path, interface: Self.playerInterface, name: MPRIS.PlayerSignal.seeked.rawValue,
                                  arguments: [.int64(reader.position)])
        }
    }

    // MARK: OpenUri, answered once the caller is known

    func answersLater(method: String, interface: String) -> Bool {
        interface == Self.playerInterface && method == MPRIS.PlayerMethod.openUri.rawValue
    }

    /// OpenUri: the URI is checked at once; then the caller's credentials are asked of the bus (without
    /// blocking), and `OpenPolicy` decides whether the caller may name files, then whether this file is read.
    func call(method: String, interface: String, arguments: [Variant], sender: String, reply: DBusPendingReply) {
        guard let uri = arguments.first?.string else { return reply.fail(.invalidArgs("OpenUri takes (s uri)")) }
        guard uri.lowercased().hasPrefix("file:"), let path = fileURIToPath(uri) else {
            return reply.fail(.notSupported("only file: URIs can be opened (got '\(uri.prefix(200))')"))
        }
        // A file URI of another host names a file there (RFC 8089 §2): the local file of that path is not it.
        if let host = fileURIHost(uri), host.lowercased() != "localhost" {
            return reply.fail(.notSupported("OpenUri refused: \(uri.prefix(200)) names a file on another host "
                                            + "(\(host.prefix(100))); only local files (file:///… or file://localhost/…) are opened"))
        }
        openGate.identify(sender) { [weak self] caller in
            guard let self else { return reply.fail(.failed("the player is gone")) }
            if case .refused(let why) = OpenPolicy.decide(caller: caller) {
                Log.message("\(why) (OpenUri from \(sender))")
                return reply.fail(OpenUriGate.denied(why))
            }
            do throws(DBusError) {
                try self.open(uri, path: path, reply: reply)
            } catch {
                if error.name == "org.freedesktop.DBus.Error.AccessDenied" { Log.message("\(error.message) (OpenUri from \(sender))") }
                reply.fail(error)
            }
        }
    }

    /// The credentials of `sender` (`org.freedesktop.DBus.GetConnectionCredentials`), asked without blocking.
    private static func credentials(of sender: String, on connection: DBusConnection,
                                    _ done: @escaping (Result<[Variant], DBusError>) -> Void) {
        connection.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                        interface: "org.freedesktop.DBus", method: "GetConnectionCredentials",
                        arguments: [.string(sender)], reply: done)
    }

    /// Reads the file at `path` (named by `uri`) if the policy allows it (`OpenUriGate.open`): a document in
    /// the document worker (answered once it is read), a text at once.
    private func open(_ uri: String, path: String, reply: DBusPendingReply) throws(DBusError) {
        let file: Input.OpenFile
        switch OpenUriGate.open(path: path) {
        case .success(let opened): file = opened
        case .failure(let error): throw error
        }
        var options = SpeakOptions()
        options.title = file.title
        options.url = uri
        if let format = try Reader.documentFormat(options: options, name: file.title, head: file.head(OpenPolicy.sniffedBytes)) {
            let fd = fcntl(file.descriptor, F_DUPFD_CLOEXEC, 3)
            guard fd >= 0 else { throw .failed("cannot hand \(path) to the document reader") }
            return reader.speakDocument(descriptor: fd, format: format, options: options) { result in
                switch result {
                case .success: reply.succeed()
                case .failure(let error): reply.fail(error)
                }
            }
        }
        let input: Input.Text
        switch Input.read(file, what: path) {
        case .success(let text): input = text
        case .failure(let failure): throw .failed(failure.message)
        }
        options.ssml = input.ssml
        _ = try reader.speak(input.text, options: options)
        reply.succeed()
    }

    // MARK: properties

    static let minimumRate = Double(SpeakOptions.rates.lowerBound) / Double(SpeakOptions.defaultRate)
    static let maximumRate = Double(SpeakOptions.rates.upperBound) / Double(SpeakOptions.defaultRate)

    private var trackID: String {
        guard let u = reader.current else { return Self.noTrack }
        return "/org/lector/Lector/utterance/\(u.id)"
    }

    private func rootProperties() -> [String: Variant] {
        let all: [MPRIS.RootProperty: Variant] = [
            .canQuit: .bool(true),
            .fullscreen: .bool(false),
            .canSetFullscreen: .bool(false),
            .canRaise: .bool(canRaise),
            .hasTrackList: .bool(false),
            .identity: .string("Lector"),
            .desktopEntry: .string(Names.applicationID),
            .supportedUriSchemes: .strings(["file"]),
            .supportedMimeTypes: .strings(DocumentFormat.allContentTypes + ["application/ssml+xml"]),
        ]
        return all.wireNamed
    }

    /// The player interface's properties but Position; with `metadata` false, Metadata is left out.
    private func playerProperties(metadata withMetadata: Bool = true) -> [String: Variant] {
        let loaded = reader.current != nil
        let status: MPRIS.PlaybackStatus
        switch reader.state {
        case .reading: status = .playing
        case .paused: status = .paused
        case .stopped: status = .stopped
        }
        let rate = Double(reader.current?.rate ?? SpeakOptions.defaultRate) / Double(SpeakOptions.defaultRate)
        var properties: [MPRIS.PlayerProperty: Variant] = [
            .playbackStatus: .string(status.rawValue),
            .loopStatus: .string(Self.loopStatus(reader.loop).rawValue),
            .rate: .double(rate),
            .volume: .double(reader.volume),
            .minimumRate: .double(Self.minimumRate),
            .maximumRate: .double(Self.maximumRate),
            .canGoNext: .bool(reader.current.map { reader.sentenceIndex + 1 < $0.sentences.count || !$0.isComplete } ?? false),
            .canGoPrevious: .bool(loaded),
            .canPlay: .bool(loaded),
            .canPause: .bool(loaded),
            .canSeek: .bool(loaded),
            .canControl: .bool(true),
        ]
        if withMetadata { properties[.metadata] = metadata() }
        return properties.wireNamed
    }

    private func metadata() -> Variant {
        guard let u = reader.current else {
            return .vardict([MPRIS.MetadataKey.trackID.rawValue: .objectPath(Self.noTrack)])
        }
        let sentence = u.sentences[min(reader.sentenceIndex, u.sentences.count - 1)].text
        let voice = u.voice(ofSentence: reader.sentenceIndex) // a text may change language per paragraph
        // Every client on the bus may read Metadata, sandboxed apps allowed to talk to media players included:
        // it carries of the text only what a widget shows, the sentence being read (README, "Who may open what").
        let title = sentence.split(whereSeparator: \.isNewline).joined(separator: " ")
        let described = ReadingDescription(u, sentenceIndex: reader.sentenceIndex)
        var d: [MPRIS.MetadataKey: Variant] = [
            .trackID: .objectPath(trackID),
            .length: .int64(reader.length),
            .title: .string(title),
            .album: .string(described.album),
            .asText: .string(title),
            .language: .string(voice.language),
            .artist: .strings(described.artists),
            .voice: .string(voice.name),
        ]
        if let chapter = described.chapter { d[.chapter] = .string(chapter) }
        if let url = u.url { d[.url] = .string(url) }
        if let artURL { d[.artURL] = .string(artURL) }
        // Not an MPRIS key (the specification allows others in their own namespace): when the sleep timer pauses.
        if let sleep = reader.sleepTimer.description { d[.sleepTimer] = .string(sleep) }
        return .vardict(d.wireNamed)
    }

    /// Announces what changed since the last announcement, one PropertiesChanged per interface (Position never).
    func announceChanges() {
        for (interface, now) in [(Self.rootInterface, rootProperties()), (Self.playerInterface, playerProperties())] {
            let before = announced[interface] ?? [:]
            let changed = now.filter { before[$0.key] != $0.value }
            guard !changed.isEmpty else { continue }
            announced[interface] = now
            for connection in exportedOn.compactMap({ $0() }) {
                connection.emitPropertiesChanged(path: Self.path, interface: interface, changed: changed)
            }
        }
    }

    /// Lector's icon: installed beside the binary's prefix, or in the source tree when run from a build.
    private static func findIcon() -> String? {
        var dir = executableDirectory()
        let relative = "icons/hicolor/scalable/apps/\(Names.applicationID).svg"
        for _ in 0..<4 {
            for candidate in [dir + "/share/" + relative, dir + "/data/" + relative] where fileTest(candidate, .isRegular) {
                return candidate
            }
            guard let slash = dir.lastIndex(of: "/") else { break }
            dir = String(dir[..<slash])
        }
        return nil
    }
}
