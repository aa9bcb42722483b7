import CGio

/// A signal received through `DBusConnection.subscribe` (D-Bus Specification, "Message Types: Signals").
public struct SignalMessage: Sendable {
    /// The unique bus name of the sender, e.g. ":1.42" ("" on a peer-to-peer connection).
    public var sender: String
    /// The object path the signal was emitted from.
    public var path: String
    /// The interface of the signal.
    public var interface: String
    /// The signal's name.
    public var member: String
    /// The signal's arguments, in order.
    public var arguments: [Variant]
}

extension DBusConnection {
    /// Subscribes to signals (`g_dbus_connection_signal_subscribe`); nil matches anything. `handler` is
    /// called on the main loop for each matching signal until the subscription is cancelled; dropping the
    /// `Subscription` does not cancel it.
    /// - Parameters:
    ///   - sender: a unique or well-known bus name.
    public func subscribe(sender: String?, path: String?, interface: String?, member: String?,
                          _ handler: @escaping (SignalMessage) -> Void) -> Subscription {
        let box = Unmanaged.passRetained(SignalHandler(handler)).toOpaque()
        let id = g_dbus_connection_signal_subscribe(
            connection, sender, interface, member, path, nil, G_DBUS_SIGNAL_FLAGS_NONE,
            { _, sender, path, interface, member, parameters, pointer in
                let handler = Unmanaged<SignalHandler>.fromOpaque(pointer!).takeUnretainedValue()
                handler.body(SignalMessage(sender: sender.map { String(cString: $0) } ?? "",
                                           path: String(cString: path!),
                                           interface: String(cString: interface!),
                                           member: String(cString: member!),
                                           arguments: parameters.map { Variant.children(of: $0) } ?? []))
            },
            box,
            { Unmanaged<SignalHandler>.fromOpaque($0!).release() })
        return Subscription(connection: self, id: id)
    }
}

/// A signal subscription made by `DBusConnection.subscribe`.
public final class Subscription {
    private let connection: DBusConnection
    private var id: UInt32

    init(connection: DBusConnection, id: UInt32) {
        self.connection = connection
        self.id = id
    }

    /// Ends the subscription (`g_dbus_connection_signal_unsubscribe`); the handler is not called after
    /// this. Safe to call twice.
    public func cancel() {
        guard id != 0 else { return }
        g_dbus_connection_signal_unsubscribe(connection.connection, id)
        id = 0
    }
}

private final class SignalHandler {
    let body: (SignalMessage) -> Void
    init(_ body: @escaping (SignalMessage) -> Void) { self.body = body }
}
