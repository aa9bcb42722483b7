import GLibKit
import LectorCommon

/// How the daemon leaves the bus (idle exit, SIGTERM/SIGINT/SIGHUP, MPRIS Quit) without losing a call: from
/// the first moment every call is answered `org.lector.Lector1.Error.Exiting` and reaches nothing (its caller
/// starts or activates the next daemon and calls again), then the names are released, then the loop ends
/// once a round trip to the bus made after the release is answered on every connection.
///
/// `g_bus_unown_name` waits for the bus's answer to ReleaseName, and the bus routes to its owner, before that
/// answer, every message it got for the name before it: so when the round trip's reply is dispatched, each
/// call sent to the name in time to reach this daemon has been answered, and each later one goes to the
/// next owner (or starts it, by activation). A call sent to this daemon's unique name after it ends gets
/// the bus's NoReply ("disconnected without replying"), which Lector's clients retry too.
///
/// Source: D-Bus Specification, "Message Bus Messages" (ReleaseName) and "Message Routing"; GIO's
/// gdbusnameowning.c (`g_bus_unown_name` releases synchronously).
final class Departure {
    /// The longest the round trips may take before the loop ends anyway, ms.
    static let limitMilliseconds: UInt32 = 1_000
    /// The refusal every call gets once the departure has begun.
    static let refusal = DBusError(name: Lector1.ErrorName.exiting.rawValue,
                                   message: "this Lector daemon is exiting; call again to reach a new one")

    /// Whether the departure has begun.
    private(set) var begun = false
    private var pending: [PendingCall] = []
    private var limit: Source?

    /// Begins the departure (once; later calls do nothing): refuses every call on `connections`, releases
    /// `names`, and calls `done` once a round trip to the bus on each connection is answered, or after
    /// `limitMilliseconds`.
    func begin(connections: [DBusConnection], names: [NameOwnership], done: @escaping () -> Void) {
        guard !begun else { return }
        begun = true
        for connection in connections { connection.refuseCalls(with: Self.refusal) }
        for name in names { name.release() }
        var waiting = connections.count
        let finish = { [unowned self] in
            guard let limit = self.limit else { return }
            limit.cancel()
            self.limit = nil
            done()
        }
        limit = MainContext.timeout(milliseconds: Self.limitMilliseconds) {
            Log.debug("the bus did not answer within \(Self.limitMilliseconds) ms while leaving it")
            finish()
            return false
        }
        pending = connections.map { connection in
            connection.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                            interface: "org.freedesktop.DBus", method: "GetId", autoStart: false) { _ in
                waiting -= 1
                if waiting == 0 { finish() }
            }
        }
    }
}
