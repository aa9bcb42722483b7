import CGio
import Foundation

/// A notification server for tests: owns `org.freedesktop.Notifications` on a private bus and records every
/// `Notify` call (Desktop Notifications Specification 1.2), answering with increasing ids. It runs its own GLib
/// main context on a thread of its own, away from everything else in the test process.
final class FakeNotificationServer: @unchecked Sendable {
    struct Notification: Equatable {
        var appName: String
        var replacesID: UInt32
        var summary: String
        var body: String
    }

    private let lock = NSLock()
    private var recorded: [Notification] = []
    private var context: OpaquePointer?
    private var loop: OpaquePointer?
    private var failure: String?
    private let started = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// Every `Notify` call so far, in order.
    var notifications: [Notification] { lock.withLock { recorded } }

    /// Connects to the bus at `address`, owns the name and serves until `stop()`.
    /// - Throws: `HarnessError` when the bus cannot be reached or the name is taken.
    init(busAddress: String) throws {
        let thread = Thread { [unowned self] in self.serve(busAddress) }
        thread.start()
        started.wait()
        if let failure { throw HarnessError("fake notification server: \(failure)") }
    }

    /// Ends the server (its connection closes, the name goes away).
    func stop() {
        lock.withLock { if let loop { g_main_loop_quit(loop) } }
        finished.wait()
    }

    fileprivate func record(_ notification: Notification) -> UInt32 {
        lock.withLock {
            recorded.append(notification)
            return UInt32(recorded.count)
        }
    }

    private static let introspection = """
        <node><interface name="org.freedesktop.Notifications">
          <method name="Notify">
            <arg type="s" direction="in"/><arg type="u" direction="in"/><arg type="s" direction="in"/>
            <arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="as" direction="in"/>
            <arg type="a{sv}" direction="in"/><arg type="i" direction="in"/><arg type="u" direction="out"/>
          </method>
        </interface></node>
        """

    private func serve(_ address: String) {
        let ctx = g_main_context_new()
        g_main_context_push_thread_default(ctx)
        let mainLoop = g_main_loop_new(ctx, 0)
        lock.withLock {
            context = ctx
            loop = mainLoop
        }
        defer {
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
        defer { closeBus(connection) }
        guard let node = g_dbus_node_info_new_for_xml(Self.introspection, &error), let info = node.pointee.interfaces[0] else {
            failure = "bad introspection"
            started.signal()
            return
        }
        defer { g_dbus_node_info_unref(node) }
        let vtable = UnsafeMutablePointer<GDBusInterfaceVTable>.allocate(capacity: 1)
        vtable.initialize(to: GDBusInterfaceVTable())
        defer { vtable.deallocate() }
        vtable.pointee.method_call = { _, _, _, _, method, parameters, invocation, userData in
            let server = Unmanaged<FakeNotificationServer>.fromOpaque(userData!).takeUnretainedValue()
            guard String(cString: method!) == "Notify", let parameters else {
                g_dbus_method_invocation_return_dbus_error(invocation, "org.freedesktop.DBus.Error.UnknownMethod", "unknown")
                return
            }
            func string(_ i: Int) -> String {
                let child = g_variant_get_child_value(parameters, gsize(i))!
                defer { g_variant_unref(child) }
                return String(cString: g_variant_get_string(child, nil))
            }
            let replaces = g_variant_get_child_value(parameters, 1)!
            let replacesID = g_variant_get_uint32(replaces)
            g_variant_unref(replaces)
            let id = server.record(Notification(appName: string(0), replacesID: replacesID, summary: string(3), body: string(4)))
            var reply: OpaquePointer? = g_variant_new_uint32(id)
            g_dbus_method_invocation_return_value(invocation, g_variant_new_tuple(&reply, 1))
        }
        let registration = g_dbus_connection_register_object(
            connection, "/org/freedesktop/Notifications", info, vtable,
            Unmanaged.passUnretained(self).toOpaque(), nil, &error)
        guard registration != 0 else {
            failure = error.map { String(cString: $0.pointee.message) } ?? "cannot register"
            started.signal()
            return
        }
        defer { g_dbus_connection_unregister_object(connection, registration) }
        // RequestName with DO_NOT_QUEUE (4): 1 means we are the primary owner.
        let request = g_dbus_connection_call_sync(
            connection, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "RequestName",
            { () -> OpaquePointer? in
                var items: [OpaquePointer?] = [g_variant_new_string("org.freedesktop.Notifications"), g_variant_new_uint32(4)]
                return g_variant_new_tuple(&items, 2)
            }(), nil, G_DBUS_CALL_FLAGS_NONE, 5_000, nil, &error)
        var owned = false
        if let request {
            let child = g_variant_get_child_value(request, 0)!
            owned = g_variant_get_uint32(child) == 1
            g_variant_unref(child)
            g_variant_unref(request)
        }
        guard owned else {
            failure = "cannot own org.freedesktop.Notifications"
            started.signal()
            return
        }
        started.signal()
        g_main_loop_run(mainLoop)
    }
}
