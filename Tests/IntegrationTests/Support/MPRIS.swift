import CGio
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
        "Shuffle": ("b", "readwrite"), "Metadata": ("a{sv}", "read"), "Volume": ("d", "readwrite"),
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
    ]
}

/// A GVariant held by the tests (one reference, released on deinit), read through Swift accessors.
final class GV: @unchecked Sendable, CustomStringConvertible {
    let raw: OpaquePointer

    /// Takes ownership of a non-floating reference.
    init(owning raw: OpaquePointer) { self.raw = raw }

    /// Wraps a newly made (floating) value.
    init(new raw: OpaquePointer) { self.raw = g_variant_ref_sink(raw) }

    /// Parses GLib's text format with type annotations (`gdbus call` and `gdbus monitor` print it).
    convenience init?(parsing text: String) {
        var error: UnsafeMutablePointer<GError>?
        guard let v = g_variant_parse(nil, text, nil, nil, &error) else {
            if let error { g_error_free(error) }
            return nil
        }
        self.init(owning: v)
    }

    deinit { g_variant_unref(raw) }

    static func double(_ d: Double) -> GV { GV(new: g_variant_new_double(d)) }
    static func string(_ s: String) -> GV { GV(new: g_variant_new_string(s)) }
    static func int64(_ x: Int64) -> GV { GV(new: g_variant_new_int64(gint64(x))) }
    static func objectPath(_ p: String) -> GV { GV(new: g_variant_new_object_path(p)) }
    static func boxed(_ v: GV) -> GV { GV(new: g_variant_new_variant(v.raw)) }
    static func tuple(_ items: [GV]) -> GV {
        var children: [OpaquePointer?] = items.map { $0.raw }
        return GV(new: children.withUnsafeMutableBufferPointer { g_variant_new_tuple($0.baseAddress, gsize($0.count)) })
    }

    /// The type string, e.g. `a{sv}`.
    var type: String { String(cString: g_variant_get_type_string(raw)) }
    /// The value inside a variant (`v`), else itself.
    var unboxed: GV { type == "v" ? GV(owning: g_variant_get_variant(raw)).unboxed : self }
    var count: Int { g_variant_is_container(raw) != 0 ? Int(g_variant_n_children(raw)) : 0 }
    subscript(index: Int) -> GV { GV(owning: g_variant_get_child_value(raw, gsize(index))) }

    var string: String? {
        let t = unboxed
        guard ["s", "o", "g"].contains(t.type) else { return nil }
        return String(cString: g_variant_get_string(t.raw, nil))
    }
    var bool: Bool? { let t = unboxed; return t.type == "b" ? g_variant_get_boolean(t.raw) != 0 : nil }
    var double: Double? { let t = unboxed; return t.type == "d" ? g_variant_get_double(t.raw) : nil }
    var int64: Int64? { let t = unboxed; return t.type == "x" ? Int64(g_variant_get_int64(t.raw)) : nil }
    var strings: [String]? {
        let t = unboxed
        guard t.type == "as" else { return nil }
        return (0..<t.count).compactMap { t[$0].string }
    }
    /// An `a{sv}` (or `a{s*}`) as a dictionary of its values, unboxed.
    var dictionary: [String: GV]? {
        let t = unboxed
        guard t.type.hasPrefix("a{s") else { return nil }
        var d: [String: GV] = [:]
        for i in 0..<t.count {
            let entry = t[i]
            if let key = entry[0].string { d[key] = entry[1].unboxed }
        }
        return d
    }

    var description: String {
        let p = g_variant_print(raw, 1)
        defer { g_free(p) }
        return p.map { String(cString: $0) } ?? "?"
    }
}

/// A D-Bus error reply: its name (e.g. `org.freedesktop.DBus.Error.InvalidArgs`) and message.
struct DBusCallError: Error, CustomStringConvertible {
    let name: String
    let message: String
    var description: String { "\(name): \(message)" }
}

/// A connection of the test process to the private session bus, for direct, synchronous calls
/// (typed arguments that `gdbus call` cannot spell, such as NaN, and bursts of calls from one process).
final class TestBus: @unchecked Sendable {
    private let connection: OpaquePointer
    /// The bus name calls go to unless told otherwise.
    let destination: String

    init(address: String, destination: String = MPRIS.busName) throws {
        self.destination = destination
        connection = try openBus(address)
    }

    deinit {
        closeBus(connection)
    }

    /// Calls `method` and returns the reply tuple.
    /// - Throws: `DBusCallError` with the error's D-Bus name.
    @discardableResult
    func call(
        _ destination: String? = nil, path: String = MPRIS.path, interface: String, _ method: String,
        _ arguments: [GV] = [], timeoutMs: Int32 = 10_000
    ) throws -> GV {
        var error: UnsafeMutablePointer<GError>?
        let parameters = arguments.isEmpty ? nil : GV.tuple(arguments)
        let reply = g_dbus_connection_call_sync(
            connection, destination ?? self.destination, path, interface, method, parameters?.raw, nil, G_DBUS_CALL_FLAGS_NO_AUTO_START,
            timeoutMs, nil, &error)
        guard let reply else {
            let (name, message) = takeDBusError(&error)
            throw DBusCallError(name: name, message: message)
        }
        return GV(owning: reply)
    }

    /// Calls a method of the Player interface.
    func player(_ method: String, _ arguments: [GV] = []) throws {
        try call(interface: MPRIS.player, method, arguments)
    }

    /// One property, unboxed.
    func get(_ name: String, interface: String = MPRIS.player) throws -> GV {
        try call(interface: "org.freedesktop.DBus.Properties", "Get", [.string(interface), .string(name)])[0].unboxed
    }

    /// Every property of `interface`, unboxed.
    func getAll(_ interface: String) throws -> [String: GV] {
        let reply = try call(interface: "org.freedesktop.DBus.Properties", "GetAll", [.string(interface)])
        return reply[0].dictionary ?? [:]
    }

    /// Sets a property (the value is boxed in a variant here).
    func set(_ name: String, _ value: GV, interface: String = MPRIS.player) throws {
        try call(interface: "org.freedesktop.DBus.Properties", "Set", [.string(interface), .string(name), .boxed(value)])
    }

    var status: String { (try? get("PlaybackStatus").string) ?? "?" }
    var position: Int64 { (try? get("Position").int64) ?? -1 }
    var metadata: [String: GV] { (try? get("Metadata").dictionary) ?? [:] }

    /// Polls PlaybackStatus until it is `status` (or `timeout` seconds pass); returns the last one seen.
    @discardableResult
    func waitForStatus(_ status: String, timeout: Double = 5) async -> String {
        await poll(timeout: timeout, every: .milliseconds(20), { self.status }, until: { $0 == status })
    }
}

/// The signals one bus name sends, as `gdbus monitor --dest NAME` prints them (one line each, GVariant text
/// with type annotations), recorded to a file and parsed on demand.
final class SignalMonitor: @unchecked Sendable {
    struct Signal: CustomStringConvertible {
        let path: String
        let interface: String
        let member: String
        let arguments: GV
        let line: String
        var description: String { line }

        /// For PropertiesChanged: the interface and the changed properties (unboxed).
        var changedInterface: String? { member == "PropertiesChanged" ? arguments[0].string : nil }
        var changed: [String: GV] { member == "PropertiesChanged" ? arguments[1].dictionary ?? [:] : [:] }
    }

    private let process: BackgroundProcess

    /// Starts monitoring `name` (which must be owned) and waits until the monitor follows its owner.
    init(session: PrivateSession, name: String = MPRIS.busName, tag: String = "monitor-\(UUID().uuidString.prefix(8))") async throws {
        process = try session.spawn("gdbus", ["monitor", "--session", "--dest", name], tag: tag)
        let process = process
        let following = await eventually(timeout: 10, every: .milliseconds(20)) {
            process.stdout.contains("is owned by") || !process.isRunning
        }
        guard following && process.stdout.contains("is owned by") else {
            throw HarnessError("gdbus monitor did not start: \(process.stdout) \(process.stderr)")
        }
        // The match rule is added with the owner lookup and gdbus shows no sign when the bus has installed it.
        try await Task.sleep(for: .milliseconds(100))
    }

    /// Every signal seen so far, in order.
    var signals: [Signal] {
        process.stdout.split(separator: "\n").compactMap { line -> Signal? in
            // "/org/mpris/MediaPlayer2: org.freedesktop.DBus.Properties.PropertiesChanged ('…', {…}, @as [])"
            guard let colon = line.range(of: ": "), let open = line.range(of: " (", range: colon.upperBound..<line.endIndex)
            else { return nil }
            let name = line[colon.upperBound..<open.lowerBound]
            guard let dot = name.lastIndex(of: "."), let args = GV(parsing: String(line[line.index(after: open.lowerBound)...]))
            else { return nil }
            return Signal(
                path: String(line[..<colon.lowerBound]), interface: String(name[..<dot]),
                member: String(name[name.index(after: dot)...]), arguments: args, line: String(line))
        }
    }

    /// The number of signals seen so far (a mark for `signals(after:)`).
    func mark() -> Int { signals.count }

    func signals(after mark: Int) -> [Signal] { Array(signals.dropFirst(mark)) }

    /// Waits up to `timeout` seconds for a signal after `mark` that matches; returns it.
    func wait(after mark: Int, timeout: Double = 3, where matches: (Signal) -> Bool) async -> Signal? {
        await poll(timeout: timeout, every: .milliseconds(20), { signals(after: mark).first(where: matches) },
                   until: { $0 != nil })
    }

    func stop() async { await process.stop(grace: 1) }
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
