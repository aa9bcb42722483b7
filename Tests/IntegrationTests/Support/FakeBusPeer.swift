import CGio
import Foundation

/// A D-Bus peer for tests: owns a well-known name on a private bus and serves one object there, answering each
/// method call (also `org.freedesktop.DBus.Properties` Get/GetAll/Set, which GDBus hands to the object since it
/// has no property handlers) as `respond` decides — or never, as a hung program would. It runs its own GLib main
/// context on a thread of its own, away from everything else in the test process.
final class FakeBusPeer: @unchecked Sendable {
    /// One method call as received.
    struct Call: Equatable {
        var interface: String
        var method: String
        /// The arguments as GVariant text, e.g. `('org.mpris.MediaPlayer2.Player', 'PlaybackStatus')`.
        var arguments: String
    }

    /// What the peer does with a call.
    enum Answer {
        /// Replies with this tuple in GVariant text, e.g. `(<'Playing'>,)` or `()`.
        case value(String)
        /// Replies with this D-Bus error.
        case error(name: String, message: String)
        /// Replies with this tuple after `milliseconds`, as a slow program would.
        case later(milliseconds: UInt32, String)
        /// Never replies (the invocation is kept until `stop()`, and GDBus sends nothing for it).
        case never
    }

    /// A reply to send later, for the timeout callback.
    private final class Delayed {
        let peer: FakeBusPeer
        let invocation: OpaquePointer
        let text: String
        init(_ peer: FakeBusPeer, _ invocation: OpaquePointer, _ text: String) {
            self.peer = peer
            self.invocation = invocation
            self.text = text
        }
    }

    let name: String
    private let path: String
    private let introspection: String
    private let respond: @Sendable (Call) -> Answer
    private let lock = NSLock()
    private var recorded: [Call] = []
    private var unanswered: [OpaquePointer] = []
    private var loop: OpaquePointer?
    private var failure: String?
    private let started = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// Every call so far, in order.
    var calls: [Call] { lock.withLock { recorded } }

    /// Connects to the bus at `busAddress`, exports the first interface of `introspection` at `path`, owns
    /// `name` and serves until `stop()`.
    /// - Throws: `HarnessError` when the bus cannot be reached, the XML does not parse or the name is taken.
    init(busAddress: String, name: String, path: String, introspection: String,
         respond: @escaping @Sendable (Call) -> Answer) throws {
        self.name = name
        self.path = path
        self.introspection = introspection
        self.respond = respond
        let thread = Thread { [unowned self] in self.serve(busAddress) }
        thread.start()
        started.wait()
        if let failure { throw HarnessError("fake peer \(name): \(failure)") }
    }

    /// Ends the peer: its connection closes and the name goes away. Safe to call twice.
    func stop() {
        let running = lock.withLock { () -> Bool in
            guard let loop else { return false }
            g_main_loop_quit(loop)
            return true
        }
        if running { finished.wait() }
    }

    private func received(_ call: Call, _ invocation: OpaquePointer) {
        lock.withLock { recorded.append(call) }
        reply(respond(call), to: invocation)
    }

    private func reply(_ answer: Answer, to invocation: OpaquePointer) {
        switch answer {
        case .later(let milliseconds, let text):
            let source = g_timeout_source_new(milliseconds)!
            g_source_set_callback(source, { pointer in
                let delayed = Unmanaged<Delayed>.fromOpaque(pointer!).takeUnretainedValue()
                delayed.peer.reply(.value(delayed.text), to: delayed.invocation)
                return 0
            }, Unmanaged.passRetained(Delayed(self, invocation, text)).toOpaque(), { pointer in
                Unmanaged<Delayed>.fromOpaque(pointer!).release()
            })
            g_source_attach(source, g_main_context_get_thread_default())
            g_source_unref(source)
        case .value(let text):
            var error: UnsafeMutablePointer<GError>?
            guard let value = g_variant_parse(nil, text, nil, nil, &error) else {
                let message = takeDBusError(&error).message
                g_dbus_method_invocation_return_dbus_error(invocation, "org.lector.Test.Error.Parse", message)
                return
            }
            g_dbus_method_invocation_return_value(invocation, value)
        case .error(let name, let message):
            g_dbus_method_invocation_return_dbus_error(invocation, name, message)
        case .never:
            // The handler owns the invocation (transfer full): keeping it is what leaves the call unanswered.
            lock.withLock { unanswered.append(invocation) }
        }
    }

    private func serve(_ address: String) {
        let ctx = g_main_context_new()
        g_main_context_push_thread_default(ctx)
        let mainLoop = g_main_loop_new(ctx, 0)
        defer {
            lock.withLock { loop = nil }
            g_main_loop_unref(mainLoop)
            g_main_context_pop_thread_default(ctx)
            g_main_context_unref(ctx)
            finished.signal()
        }
        var error: UnsafeMutablePointer<GError>?
        let connection: OpaquePointer
        do { connection = try openBus(address) } catch {
            failure = "\(error)"
            started.signal()
            return
        }
        defer {
            closeBus(connection)
            for invocation in lock.withLock({ unanswered }) { g_object_unref(UnsafeMutableRawPointer(invocation)) }
        }
        guard let node = g_dbus_node_info_new_for_xml(introspection, &error), let info = node.pointee.interfaces[0] else {
            failure = "bad introspection: \(takeDBusError(&error).message)"
            started.signal()
            return
        }
        defer { g_dbus_node_info_unref(node) }
        let vtable = UnsafeMutablePointer<GDBusInterfaceVTable>.allocate(capacity: 1)
        vtable.initialize(to: GDBusInterfaceVTable())
        defer { vtable.deallocate() }
        vtable.pointee.method_call = { _, _, _, interface, method, parameters, invocation, userData in
            let peer = Unmanaged<FakeBusPeer>.fromOpaque(userData!).takeUnretainedValue()
            let printed = parameters.map { g_variant_print($0, 0) } ?? nil
            defer { g_free(printed) }
            let call = Call(interface: String(cString: interface!), method: String(cString: method!),
                            arguments: printed.map { String(cString: $0) } ?? "()")
            peer.received(call, invocation!)
        }
        let registration = g_dbus_connection_register_object(
            connection, path, info, vtable, Unmanaged.passUnretained(self).toOpaque(), nil, &error)
        guard registration != 0 else {
            failure = "cannot register: \(takeDBusError(&error).message)"
            started.signal()
            return
        }
        defer { g_dbus_connection_unregister_object(connection, registration) }
        // RequestName with DO_NOT_QUEUE (4): 1 means we are the primary owner.
        var items: [OpaquePointer?] = [g_variant_new_string(name), g_variant_new_uint32(4)]
        let request = g_dbus_connection_call_sync(
            connection, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "RequestName",
            g_variant_new_tuple(&items, 2), nil, G_DBUS_CALL_FLAGS_NONE, 5_000, nil, &error)
        var owned = false
        if let request {
            let child = g_variant_get_child_value(request, 0)!
            owned = g_variant_get_uint32(child) == 1
            g_variant_unref(child)
            g_variant_unref(request)
        } else {
            _ = takeDBusError(&error)
        }
        guard owned else {
            failure = "cannot own \(name)"
            started.signal()
            return
        }
        lock.withLock { loop = mainLoop }
        started.signal()
        g_main_loop_run(mainLoop)
    }
}

/// An MPRIS player for tests (MPRIS D-Bus Interface Specification 2.2, org.mpris.MediaPlayer2.Player: Pause,
/// Play and PlaybackStatus), served by a `FakeBusPeer` at `/org/mpris/MediaPlayer2` as
/// `org.mpris.MediaPlayer2.<name>`. Pause and Play change its PlaybackStatus when it answers them.
final class FakePlayer: @unchecked Sendable {
    /// Which calls the player answers.
    enum Behaviour {
        /// Every call, at once.
        case answersAll
        /// Properties (PlaybackStatus) at once, never Pause or Play.
        case ignoresControls
        /// Properties and Pause at once, never Play.
        case ignoresPlay
        /// Nothing at all.
        case answersNothing
    }

    private static let introspection = """
        <node><interface name="org.mpris.MediaPlayer2.Player">
          <method name="Pause"/><method name="Play"/><method name="PlayPause"/><method name="Stop"/>
          <property name="PlaybackStatus" type="s" access="read"/>
        </interface></node>
        """

    private let lock = NSLock()
    private var current: String
    private var peer: FakeBusPeer!

    /// Owns `org.mpris.MediaPlayer2.<name>` on the bus at `busAddress` with PlaybackStatus `status`.
    /// - Throws: `HarnessError` as `FakeBusPeer` does.
    init(busAddress: String, name: String, status: String, behaviour: Behaviour) throws {
        current = status
        peer = try FakeBusPeer(busAddress: busAddress, name: "org.mpris.MediaPlayer2." + name,
                               path: "/org/mpris/MediaPlayer2", introspection: Self.introspection) { [unowned self] call in
            self.answer(call, behaviour)
        }
    }

    /// Its PlaybackStatus now.
    var status: String { lock.withLock { current } }

    /// The Player methods called on it so far, in order (property reads left out).
    var controls: [String] {
        peer.calls.filter { $0.interface == "org.mpris.MediaPlayer2.Player" }.map(\.method)
    }

    /// Ends the player (its name goes away).
    func stop() { peer.stop() }

    private func answer(_ call: FakeBusPeer.Call, _ behaviour: Behaviour) -> FakeBusPeer.Answer {
        if behaviour == .answersNothing { return .never }
        switch (call.interface, call.method) {
        case ("org.freedesktop.DBus.Properties", "Get"):
            return .value("(<'\(status)'>,)")
        case ("org.freedesktop.DBus.Properties", "GetAll"):
            return .value("({'PlaybackStatus': <'\(status)'>},)")
        case ("org.mpris.MediaPlayer2.Player", let method):
            if behaviour == .ignoresControls || (behaviour == .ignoresPlay && method == "Play") { return .never }
            lock.withLock {
                switch method {
                case "Pause": if current == "Playing" { current = "Paused" }
                case "Play": current = "Playing"
                case "Stop": current = "Stopped"
                default: current = current == "Playing" ? "Paused" : "Playing"
                }
            }
            return .value("()")
        default:
            return .error(name: "org.freedesktop.DBus.Error.UnknownMethod", message: "unknown")
        }
    }
}
