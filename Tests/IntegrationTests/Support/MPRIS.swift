import GLibKit
import Foundation

/// The MPRIS2 contract (Media Player Remote Interfacing Specification 2.2) as the end-to-end tests check it.
enum MPRIS {
    static let busName = "org.mpris.MediaPlayer2.lector"
    static let path = "/org/mpris/MediaPlayer2"
    static let root = "org.mpris.MediaPlayer2"
    static let player = "org.mpris.MediaPlayer2.Player"
    static let noTrack = "/org/mpris/MediaPlayer2/TrackList/NoTrack"

    /// Every property of `org.mpris.MediaPlayer2` with its D-Bus type and access, as the spec defines them.
    static let rootProperties: [String: (type: String, access: String)] = [
        "CanQuit": ("b", "read"), "Fullscreen": ("b", "readwrite"), "CanSetFullscreen": ("b", "read"),
        "CanRaise": ("b", "read"), "HasTrackList": ("b", "read"), "Identity": ("s", "read"),
        "DesktopEntry": ("s", "read"), "SupportedUriSchemes": ("as", "read"), "SupportedMimeTypes": ("as", "read"),
    ]
    /// Every property of `org.mpris.MediaPlayer2.Player` with its D-Bus type and access.
    static let playerProperties: [String: (type: String, access: String)] = [
        "PlaybackStatus": ("s", "read"), "LoopStatus": ("s", "readwrite"), "Rate": ("d", "readwrite"),
"Metadata": ("a{sv}", "read"), "Volume": ("d", "readwrite"),
        "Position": ("x", "read"), "MinimumRate": ("d", "read"), "MaximumRate": ("d", "read"),
        "CanGoNext": ("b", "read"), "CanGoPrevious": ("b", "read"), "CanPlay": ("b", "read"),
        "CanPause": ("b", "read"), "CanSeek": ("b", "read"), "CanControl": ("b", "read"),
    ]
    /// Methods with their input signatures.
    static let rootMethods: [String: String] = ["Raise": "", "Quit": ""]
    static let playerMethods: [String: String] = [
        "Next": "", "Previous": "", "Pause": "", "PlayPause": "", "Stop": "", "Play": "", "Seek": "x",
        "SetPosition": "ox", "OpenUri": "s",
    ]
    /// The types of the metadata keys Lector sets (MPRIS v2 metadata guidelines).
    static let metadataTypes: [String: String] = [
        "mpris:trackid": "o", "mpris:length": "x", "mpris:artUrl": "s", "xesam:title": "s", "xesam:album": "s",
        "xesam:asText": "s", "xesam:language": "s", "xesam:artist": "as", "xesam:url": "s",
        "lector:voice": "s", "lector:chapter": "s", "lector:sleepTimer": "s",
    ]
}

/// A connection of the test process to the private session bus, for direct, synchronous calls
/// (typed arguments that `gdbus call` cannot spell, such as NaN, and bursts of calls from one process).
/// A GDBus connection is thread-safe (GIO Reference Manual, "GDBusConnection"), hence `@unchecked Sendable`.
final class TestBus: @unchecked Sendable {
    private let connection: DBusConnection
    /// The bus name calls go to unless told otherwise.
    let destination: String

    init(address: String, destination: String = MPRIS.busName) throws {
        self.destination = destination
        connection = try DBusConnection.connect(address: address)
    }

    /// Calls `method` and returns the reply's values.
    /// - Throws: `DBusError` with the error's D-Bus name.
    @discardableResult
    func call(
        _ destination: String? = nil, path: String = MPRIS.path, interface: String, _ method: String,
        _ arguments: [Variant] = [], timeoutMs: Int32 = 10_000
    ) throws -> [Variant] {
        try connection.call(destination: destination ?? self.destination, path: path, interface: interface,
                            method: method, arguments: arguments, timeoutMilliseconds: timeoutMs, autoStart: false)
    }

    /// Calls a method of the Player interface.
    func player(_ method: String, _ arguments: [Variant] = []) throws {
        try call(interface: MPRIS.player, method, arguments)
    }

    /// One property, unboxed.
    func get(_ name: String, interface: String = MPRIS.player) throws -> Variant {
        try call(interface: "org.freedesktop.DBus.Properties", "Get", [.string(interface), .string(name)])[0].unboxed
    }

    /// Every property of `interface`, unboxed.
    func getAll(_ interface: String) throws -> [String: Variant] {
        let reply = try call(interface: "org.freedesktop.DBus.Properties", "GetAll", [.string(interface)])
        return reply[0].entries ?? [:]
    }

    /// Sets a property (the value is boxed in a variant here).
    func set(_ name: String, _ value: Variant, interface: String = MPRIS.player) throws {
        try call(interface: "org.freedesktop.DBus.Properties", "Set", [.string(interface), .string(name), .variant(value)])
    }

    var status: String { (try? get("PlaybackStatus").string) ?? "?" }
    var position: Int64 { (try? get("Position").int64) ?? -1 }
    var metadata: [String: Variant] { (try? get("Metadata").entries) ?? [:] }

    /// Polls PlaybackStatus until it is `status` (or `timeout` seconds pass); returns the last one seen.
    @discardableResult
    func waitForStatus(_ status: String, timeout: Double = 5) async -> String {
        await poll(timeout: timeout, every: .milliseconds(20), { self.status }, until: { $0 == status })
    }
}

extension Variant {
    /// The entries of a string-keyed dictionary (`a{sv}`, `a{s*}`), their values unboxed.
    var entries: [String: Variant]? { dictionary?.mapValues(\.unboxed) }

    /// The strings of an `as`, or nil for any other type.
    var strings: [String]? {
        guard case .array(elementType: "s", let items) = unboxed else { return nil }
        return items.compactMap(\.string)
    }
}

/// The signals one bus name sends (any path, interface and member), received on a connection of its own and
/// a `ThreadMainLoop` on a thread of its own, kept in order of arrival.
final class SignalMonitor: @unchecked Sendable {
    struct Signal: CustomStringConvertible {
        let path: String
        let interface: String
        let member: String
        /// The signal's arguments, in order.
        let arguments: [Variant]
        /// `PATH: INTERFACE.MEMBER ARGUMENTS`, the arguments in GVariant text, as `gdbus monitor` prints a signal.
        var line: String { "\(path): \(interface).\(member) \(Variant.tuple(arguments).text)" }
        var description: String { line }

        /// For PropertiesChanged: the interface and the changed properties (unboxed).
        var changedInterface: String? {
            member == "PropertiesChanged" && arguments.count == 3 ? arguments[0].string : nil
        }
        var changed: [String: Variant] {
            member == "PropertiesChanged" && arguments.count == 3 ? arguments[1].entries ?? [:] : [:]
        }
    }

    private let loop = ThreadMainLoop()
    private let lock = NSLock()
    private var received: [Signal] = []
    private var ended = false

    /// Starts monitoring `name` and returns once the bus has its match rule: every signal the name's owner
    /// sends from then on is seen.
    /// - Throws: `HarnessError` when the bus cannot be reached.
    init(session: PrivateSession, name: String = MPRIS.busName) async throws {
        let address = session.busAddress
        let failure = await withCheckedContinuation { (ready: CheckedContinuation<String?, Never>) in
            Thread { [self] in serve(address, name, ready) }.start()
        }
        if let failure { throw HarnessError("signal monitor: \(failure)") }
    }

    /// Runs on the monitor's thread: subscribes, makes sure the bus has the match rule, then receives until
    /// `stop()`.
    private func serve(_ address: String, _ name: String, _ ready: CheckedContinuation<String?, Never>) {
        var connection: DBusConnection?
        var subscription: Subscription?
        loop.run {
            do {
                let opened = try DBusConnection.connect(address: address)
                subscription = opened.subscribe(sender: name, path: nil, interface: nil, member: nil) { [self] message in
                    let signal = Signal(path: message.path, interface: message.interface, member: message.member,
                                        arguments: message.arguments)
                    lock.withLock { received.append(signal) }
                }
                // The bus handles a connection's messages in order: once it answers this, it has the rule.
                _ = try opened.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                    interface: "org.freedesktop.DBus", method: "GetId", timeoutMilliseconds: 5_000)
                connection = opened
                ready.resume(returning: nil)
                return true
            } catch {
                ready.resume(returning: "\(error)")
                return false
            }
        }
        subscription?.cancel()
        withExtendedLifetime(connection) {}
        lock.withLock { ended = true }
    }

    /// Every signal seen so far, in order.
    var signals: [Signal] { lock.withLock { received } }

    /// The number of signals seen so far (a mark for `signals(after:)`).
    func mark() -> Int { signals.count }

    func signals(after mark: Int) -> [Signal] { Array(signals.dropFirst(mark)) }

    /// Waits up to `timeout` seconds for a signal after `mark` that matches; returns it.
    func wait(after mark: Int, timeout: Double = 3, where matches: (Signal) -> Bool) async -> Signal? {
        await poll(timeout: timeout, every: .milliseconds(20), { signals(after: mark).first(where: matches) },
                   until: { $0 != nil })
    }

    /// Stops receiving and waits until the monitor's thread has ended.
    func stop() async {
        loop.quit()
        _ = await eventually(timeout: 5, every: .milliseconds(10)) { lock.withLock { ended } }
    }
}

extension PrivateSession {
    /// A direct connection to this session's bus.
    func bus(_ destination: String = MPRIS.busName) throws -> TestBus { try TestBus(address: busAddress, destination: destination) }

    /// Runs `playerctl --player=lector ARGS`.
    func playerctl(_ arguments: [String], player: String = "lector") async throws -> ProcessResult {
        try await run("playerctl", ["--player=\(player)"] + arguments, timeout: 15)
    }

    /// The number of PulseAudio sink inputs (playback streams) now.
    func sinkInputCount() async throws -> Int {
        let result = try await run("pactl", ["list", "short", "sink-inputs"], timeout: 10)
        return result.stdout.split(separator: "\n").filter { !$0.isEmpty }.count
    }

    /// Makes sure a daemon runs and owns the MPRIS name too (it takes it after Lector's own name).
    func ensureMPRIS() async throws {
        try await ensureDaemon()
        guard await eventually(timeout: 5, every: .milliseconds(20), { await nameOwner(MPRIS.busName) != nil }) else {
            throw HarnessError("nobody owns \(MPRIS.busName)")
        }
    }
}
