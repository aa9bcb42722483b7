import Foundation
import GLibKit

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
    private let loop = ThreadMainLoop()
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
        loop.quit()
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

    /// Runs on the server's thread: connects, exports the object, owns the name, then serves until `stop()`.
    private func serve(_ address: String) {
        var connection: DBusConnection?
        var registration: Registration?
        loop.run {
            do {
                let opened = try DBusConnection.connect(address: address)
                registration = try opened.register(
                    Notifications(server: self), path: "/org/freedesktop/Notifications",
                    interface: "org.freedesktop.Notifications", introspectionXML: Self.introspection)
                // RequestName with DO_NOT_QUEUE (4): 1 means we are the primary owner.
                let reply = try opened.call(
                    destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                    method: "RequestName", arguments: [.string("org.freedesktop.Notifications"), .uint32(4)],
                    timeoutMilliseconds: 5_000)
                if reply.first == .uint32(1) {
                    connection = opened
                } else {
                    failure = "cannot own org.freedesktop.Notifications"
                }
            } catch {
                failure = "\(error)"
            }
            started.signal()
            return connection != nil
        }
        registration?.unregister()
        withExtendedLifetime(connection) {}
        finished.signal()
    }
}

/// The exported `org.freedesktop.Notifications` object: records each `Notify` and answers with the next id.
private final class Notifications: DBusObject {
    unowned let server: FakeNotificationServer

    init(server: FakeNotificationServer) { self.server = server }

    func call(method: String, interface: String, arguments: [Variant], sender: String) throws(DBusError) -> [Variant] {
        guard method == "Notify", arguments.count == 8, case .uint32(let replacesID) = arguments[1] else {
            throw .unknownMethod("unknown")
        }
        let id = server.record(FakeNotificationServer.Notification(
            appName: arguments[0].string ?? "", replacesID: replacesID, summary: arguments[3].string ?? "",
            body: arguments[4].string ?? ""))
        return [.uint32(id)]
    }
}
