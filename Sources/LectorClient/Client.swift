@preconcurrency import Glibc
import GLibKit
import LectorCommon

/// The command-line side: talks to the daemon over the session bus, starting it when asked to.
final class Client {
    enum ConnectError: Error, CustomStringConvertible {
        case noBus(String)
        case notRunning
        case cannotStart(String)
        var description: String {
            switch self {
            case .noBus(let m): return "cannot reach the session bus: \(m)"
            case .notRunning: return "Lector is not running"
            case .cannotStart(let m): return "cannot start Lector's daemon: \(m)"
            }
        }
    }

    let connection: DBusConnection

    private init(connection: DBusConnection) {
        self.connection = connection
    }

    /// Connects to the session bus and makes sure a daemon owns `org.lector.Lector`, starting one when
    /// `startingDaemon` (see `startDaemon()`); else throws `.notRunning`.
    static func connect(startingDaemon: Bool) throws(ConnectError) -> Client {
        let client = try connect()
        if client.connection.nameHasOwner(Names.bus) { return client }
        guard startingDaemon else { throw .notRunning }
        try client.startDaemon()
        return client
    }

    /// Connects to the session bus only: whether a daemon runs is left to the first call (see `speak`).
    static func connect() throws(ConnectError) -> Client {
        do { return Client(connection: try DBusConnection.session()) } catch { throw .noBus(error.message) }
    }

    /// Starts a daemon that will own `org.lector.Lector`: by D-Bus activation when Lector is installed, else
    /// by starting `lector-daemon daemon` detached (its log then goes to `$XDG_STATE_HOME/lector/daemon.log`),
    /// then waits up to 10 s for the name, and up to 1 s more for the player's (`MPRIS.lectorBusName`).
    private func startDaemon() throws(ConnectError) {
        let activated = (try? connection.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                              interface: "org.freedesktop.DBus", method: "StartServiceByName",
                                              arguments: [.string(Names.bus), .uint32(0)], timeoutMilliseconds: 10_000)) != nil
        if !activated { try Self.spawnDaemon() }
        let deadline = MainContext.monotonicMicroseconds + 10_000_000
        while !connection.nameHasOwner(Names.bus) {
            if MainContext.monotonicMicroseconds > deadline {
                throw .cannotStart("it did not appear on the session bus within 10 s; see \(Self.logPath())")
            }
            usleep(5_000)
        }
        // The daemon asks for its player's name once it has Lector's: commands that go on with MPRIS calls
        // (repeat, open) find it too. Another program may hold that name, so this wait is short.
        let playerDeadline = MainContext.monotonicMicroseconds + 1_000_000
        while !connection.nameHasOwner(MPRIS.lectorBusName) && MainContext.monotonicMicroseconds < playerDeadline {
            usleep(5_000)
        }
    }

    /// Where a daemon started by the command line logs.
    static func logPath() -> String { SavedReading.directory + "/daemon.log" }

    /// glibc's POSIX_SPAWN_SETSID (spawn.h, behind _GNU_SOURCE, so not visible to Swift).
    private static let posixSpawnSetsid: Int16 = 0x80

    static func spawnDaemon() throws(ConnectError) {
        let dir = SavedReading.directory
        _ = mkdir(UserDirs.state, 0o700)
        _ = mkdir(dir, 0o700)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logPath(), O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Self.posixSpawnSetsid) // a session of its own: it outlives the terminal
        guard let daemon = DaemonExecutable.path else {
            throw .cannotStart("lector-daemon was not found (looked for \(DaemonExecutable.candidates.joined(separator: " and ")))")
        }
        let argv = [daemon, "daemon"]
        var cArgs = argv.map { strdup($0) } + [nil]
        defer { for p in cArgs { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, argv[0], &actions, &attributes, &cArgs, environ)
        guard rc == 0 else { throw .cannotStart(String(cString: strerror(rc))) }
    }

    private func lector(_ method: Lector1.Method, _ arguments: [Variant] = [], fileDescriptors: [Int32] = [],
                        autoStart: Bool = false) throws(DBusError) -> [Variant] {
        try daemonCall(destination: Names.bus, path: Names.path, interface: Names.interface, method: method.rawValue,
                            arguments: arguments, fileDescriptors: fileDescriptors, autoStart: autoStart)
    }

    /// A call to the daemon (`org.lector.Lector` or its MPRIS player), made once more when the daemon that
    /// got it was exiting (`Lector1.ErrorName.exiting`: it had released its names) or ended without replying
    /// (the bus's NoReply, not a time-out here): a daemon is started first (`startDaemon`), so every request
    /// is served by this daemon or by the next. Otherwise as `DBusConnection.call`.
    /// - Throws: `DBusError`: the call's, or Failed when no daemon could be started for the second call.
    func daemonCall(destination: String, path: String, interface: String, method: String, arguments: [Variant] = [],
                    fileDescriptors: [Int32] = [], autoStart: Bool = false) throws(DBusError) -> [Variant] {
        let attempt = { () throws(DBusError) -> [Variant] in
            try self.connection.call(destination: destination, path: path, interface: interface, method: method,
                                     arguments: arguments, fileDescriptors: fileDescriptors, autoStart: autoStart)
        }
        do { return try attempt() } catch where Self.departed(error) {
            do { try startDaemon() } catch let failure { throw .failed(failure.description) }
            return try attempt()
        }
    }

    /// Whether a call's daemon left the bus without serving it: it refused it while exiting, or the bus says
    /// it disconnected without replying (D-Bus Specification, "Message Bus Messages": NoReply).
    static func departed(_ error: DBusError) -> Bool {
        error.name == Lector1.ErrorName.exiting.rawValue || (error.name == "org.freedesktop.DBus.Error.NoReply" && !error.isLocal)
    }

    /// Whether a call failed because no daemon owns `org.lector.Lector` and the bus could not start one
    /// (D-Bus Specification, "Message Bus Starting Services": ServiceUnknown without a `.service` file,
    /// `Spawn.*` when activation failed; NameHasNoOwner without auto-start).
    private static func noDaemon(_ error: DBusError) -> Bool {
        error.name == "org.freedesktop.DBus.Error.ServiceUnknown" || error.name == "org.freedesktop.DBus.Error.NameHasNoOwner"
            || error.name.hasPrefix("org.freedesktop.DBus.Error.Spawn.")
    }

    /// Calls a method of Lector's interface (Pause, Resume, Stop, Toggle, SetRate, SetPitch, SleepAfter, …). Returns the exit status.
    func call(_ method: Lector1.Method, _ arguments: [Variant] = []) -> Int32 {
        do { _ = try lector(method, arguments) } catch {
            printError(error.description)
            return 1
        }
        return 0
    }

    /// What `speak` hands the daemon: a text (Speak), or an open regular file it reads itself (SpeakFile).
    enum Content {
        case text(String)
        case file(Input.OpenFile)
    }

    /// Speak or SpeakFile; with `wait`, runs until the utterance's Finished, Stopped or fatal Error signal (or
    /// the daemon vanishing). Returns the exit status: 0 read or stopped, 1 refused or failed.
    func speak(_ content: Content, options: SpeakOptions, wait: Bool) -> Int32 {
        let dict = options.dbusOptions

        // Subscribe before asking, so that no event can be missed.
        var ended: [UInt64: Int32] = [:]
        var vanished = false
        let loop = MainLoop()
        var waitingFor: UInt64 = 0
        var subscription: Subscription?
        var watch: NameWatch?
        if wait {
            subscription = connection.subscribe(sender: Names.bus, path: Names.path, interface: Names.interface, member: nil) { message in
                guard let id = message.arguments.first?.uint64 else { return }
                switch Lector1.Signal(rawValue: message.member) {
                case .finished, .stopped: ended[id] = 0
                case .error where message.arguments.count == 3 && message.arguments[2].bool == true:
                    printError(message.arguments[1].string ?? "reading failed")
                    ended[id] = 1
                case .error:
                    printError("warning: " + (message.arguments[1].string ?? ""))
                default: return
                }
                if id == waitingFor { loop.quit() }
            }
        }
        defer { subscription?.cancel(); watch?.cancel() }

        let (method, arguments, descriptors): (Lector1.Method, [Variant], [Int32]) = switch content {
        case .text(let text): (.speak, [.string(text), .vardict(dict)], [])
        case .file(let file): (.speakFile, [.handle(0), .vardict(dict)], [file.descriptor])
        }
        guard let id = request(method, arguments, fileDescriptors: descriptors) else { return 1 }
        guard wait else { return 0 }
        // Watched only now that a daemon owns the name: a watch set before would report it vanished.
        watch = connection.watchName(Names.bus, appeared: { _ in }, vanished: {
            vanished = true
            loop.quit()
        })
        waitingFor = id
        while ended[id] == nil && !vanished {
            // Events that came while Speak was being answered are dispatched here first.
            while MainContext.iterate(mayBlock: false) {}
            if ended[id] != nil || vanished { break }
            loop.run()
        }
        if let status = ended[id] { return status }
        printError("Lector's daemon exited while reading")
        return 1
    }

    /// Calls Speak or SpeakFile, starting a daemon when none runs. Returns the utterance id, or nil when the
    /// call failed (one line printed).
    private func request(_ method: Lector1.Method, _ arguments: [Variant], fileDescriptors: [Int32]) -> UInt64? {
        do {
            // No NameHasOwner first (one round trip less before the first sound): the call itself finds out
            // whether a daemon runs, and is made again once one is started.
            let reply: [Variant]
            do { reply = try lector(method, arguments, fileDescriptors: fileDescriptors, autoStart: true) } catch where Self.noDaemon(error) {
                do { try startDaemon() } catch let failure {
                    printError(failure.description)
                    return nil
                }
                reply = try lector(method, arguments, fileDescriptors: fileDescriptors, autoStart: true)
            }
            guard let value = reply.first?.uint64 else { printError("unexpected reply from the daemon"); return nil }
            return value
        } catch {
            printError(error.description)
            return nil
        }
    }

    /// Calls a method of MPRIS's Player interface on the daemon. Returns the exit status.
    func player(_ method: MPRIS.PlayerMethod, _ arguments: [Variant] = []) -> Int32 {
        do {
            _ = try daemonCall(destination: MPRIS.lectorBusName, path: MPRIS.path, interface: MPRIS.playerInterface,
                                    method: method.rawValue, arguments: arguments, autoStart: false)
        } catch {
            printError(error.description)
            return 1
        }
        return 0
    }

    /// MPRIS SetPosition on the current track (µs).
    func setPosition(_ microseconds: Int64) -> Int32 {
        guard let metadata = try? mprisProperty(.metadata).dictionary,
              case .objectPath(let track)? = metadata[MPRIS.MetadataKey.trackID.rawValue]?.unboxed, track != MPRIS.noTrack else {
            printError("nothing to move in: no text is loaded")
            return 1
        }
        let length = (try? mprisProperty(.metadata).dictionary?[MPRIS.MetadataKey.length.rawValue]?.int64) ?? nil
        if let length, microseconds > length {
            printError("position \(seconds(microseconds)) is past the end (\(seconds(length)) s)")
            return 1
        }
        return player(.setPosition, [.objectPath(track), .int64(microseconds)])
    }

    /// Prints the position heard, in seconds.
    func printPosition() -> Int32 {
        do {
            print(seconds(try mprisProperty(.position).int64 ?? 0))
            return 0
        } catch {
            printError(error.description)
            return 1
        }
    }

    /// One property of MPRIS's Player interface (unboxed).
    func mprisProperty(_ name: MPRIS.PlayerProperty) throws(DBusError) -> Variant {
        let reply = try daemonCall(destination: MPRIS.lectorBusName, path: MPRIS.path, interface: "org.freedesktop.DBus.Properties",
                                        method: "Get", arguments: [.string(MPRIS.playerInterface), .string(name.rawValue)], autoStart: false)
        return reply.first?.unboxed ?? .string("")
    }

    /// What `lector repeat` and `lector status` call each MPRIS LoopStatus.
    static func repeatName(_ status: MPRIS.LoopStatus) -> String {
        switch status {
        case .none: "off"
        case .track: "sentence"
        case .playlist: "all"
        }
    }

    /// Sets MPRIS LoopStatus on the daemon. Returns the exit status.
    func setLoopStatus(_ status: MPRIS.LoopStatus) -> Int32 {
        do {
            _ = try daemonCall(destination: MPRIS.lectorBusName, path: MPRIS.path, interface: "org.freedesktop.DBus.Properties",
                                    method: "Set", arguments: [.string(MPRIS.playerInterface),
                                                               .string(MPRIS.PlayerProperty.loopStatus.rawValue),
                                                               .variant(.string(status.rawValue))], autoStart: false)
            return 0
        } catch {
            printError(error.description)
            return 1
        }
    }

    /// The daemon's LoopStatus as `lector repeat` names it ("off", "sentence", "all"); nil on error.
    func repeatMode() -> String? {
        guard let text = try? mprisProperty(.loopStatus).string, let status = MPRIS.LoopStatus(rawValue: text) else { return nil }
        return Self.repeatName(status)
    }

    /// Prints "sleep: off", "sleep: until 23:40:05" or "sleep: at the end of this paragraph".
    func printSleepTimer() -> Int32 {
        do {
            let reply = try daemonCall(destination: Names.bus, path: Names.path, interface: "org.freedesktop.DBus.Properties",
                                            method: "Get", arguments: [.string(Names.interface), .string(Lector1.Property.sleepTimer.rawValue)],
                                            autoStart: false)
            guard case .tuple(let t)? = reply.first?.unboxed, t.count == 2, let mode = t[0].string, let at = t[1].int64 else {
                printError("unexpected reply from the daemon")
                return 1
            }
            print("sleep: \(SleepTimerText.describe(mode: mode, wallClock: at))")
            return 0
        } catch {
            printError(error.description)
            return 1
        }
    }

    /// Prints `key: value` lines (see `lector status --help`).
    func printStatus() -> Int32 {
        let all: [Lector1.Property: Variant]
        let position: Int64
        do {
            let reply = try daemonCall(destination: Names.bus, path: Names.path, interface: "org.freedesktop.DBus.Properties",
                                            method: "GetAll", arguments: [.string(Names.interface)], autoStart: false)
            guard let d = reply.first?.dictionary else { printError("unexpected reply from the daemon"); return 1 }
            all = d.named(Lector1.Property.self).mapValues { $0.unboxed }
            let p = try daemonCall(destination: Names.bus, path: Names.path, interface: "org.freedesktop.DBus.Properties",
                                        method: "Get", arguments: [.string(Names.interface), .string(Lector1.Property.position.rawValue)],
                                        autoStart: false)
            position = p.first?.unboxed.int64 ?? 0
        } catch {
            printError(error.description)
            return 1
        }
        let text = all[.text]?.string ?? ""
        var sentence = ""
        if case .tuple(let t)? = all[.sentence], t.count == 3, let start = t[1].uint32, let length = t[2].uint32 {
            let scalars = Array(text.unicodeScalars)
            let lo = min(Int(start), scalars.count), hi = min(lo + Int(length), scalars.count)
            sentence = String(String.UnicodeScalarView(scalars[lo..<hi])).split(whereSeparator: \.isNewline).joined(separator: " ")
        }
        print("state: \(all[.state]?.string ?? "")")
        print("utterance: \(all[.utterance]?.uint64 ?? 0)")
        print("language: \(all[.language]?.string ?? "")")
        print("voice: \(all[.voice]?.string ?? "")")
        print("position: \(seconds(position))")
        print("length: \(seconds(all[.length]?.int64 ?? 0))")
        print("sentence: \(sentence)")
        if case .tuple(let t)? = all[.sleepTimer], t.count == 2, let mode = t[0].string, let at = t[1].int64 {
            print("sleep: \(SleepTimerText.describe(mode: mode, wallClock: at))")
        }
        if let mode = repeatMode() { print("repeat: \(mode)") }
        return 0
    }
}

/// µs as seconds with three decimals: 1234567 → "1.234".
func seconds(_ microseconds: Int64) -> String {
    let ms = max(0, microseconds) / 1000
    let frac = String(ms % 1000)
    return "\(ms / 1000)." + String(repeating: "0", count: 3 - frac.count) + frac
}
