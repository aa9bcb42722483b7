import CGio

// The connection itself; what it does is split by concern: DBusExport.swift (exported objects and their
// signals), DBusCalls.swift (method calls), DBusSignals.swift (subscriptions), DBusNames.swift (bus names).

/// A connection to a message bus through GDBus (GIO Reference Manual, "GDBusConnection").
public final class DBusConnection {
    let connection: OpaquePointer
    /// What the objects exported through this connection answer every call with, while set (`refuseCalls`).
    let gate = CallGate()

    private init(taking connection: OpaquePointer) {
        self.connection = connection
    }

    deinit {
        g_object_unref(UnsafeMutableRawPointer(connection))
    }

    /// The session bus (`g_bus_get_sync(G_BUS_TYPE_SESSION)`): GIO's shared connection, found through
    /// `DBUS_SESSION_BUS_ADDRESS` or the XDG runtime directory. As GIO arranges for this shared connection,
    /// the process exits when the bus closes the connection.
    /// - Throws: `GLibError` (GIO's message, e.g. "Cannot autolaunch D-Bus without X11 $DISPLAY").
    public static func session() throws(GLibError) -> DBusConnection {
        var error: UnsafeMutablePointer<GError>?
        guard let connection = g_bus_get_sync(G_BUS_TYPE_SESSION, nil, &error) else {
            throw GLibError(consuming: error!)
        }
        return DBusConnection(taking: connection)
    }

    /// A new, private connection to the message bus at `address` (a D-Bus address such as
    /// "unix:path=/run/user/1000/bus"), authenticated and registered with the bus
    /// (`g_dbus_connection_new_for_address_sync`). Closing the bus does not end the process.
    /// - Throws: `GLibError` when the bus cannot be reached.
    public static func connect(address: String) throws(GLibError) -> DBusConnection {
        var error: UnsafeMutablePointer<GError>?
        let flags = GDBusConnectionFlags(G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue
                                         | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue)
        guard let connection = g_dbus_connection_new_for_address_sync(address, flags, nil, nil, &error) else {
            throw GLibError(consuming: error!)
        }
        return DBusConnection(taking: connection)
    }

    /// This connection's unique bus name, e.g. ":1.42" ("" on a peer-to-peer connection).
    public var uniqueName: String {
        g_dbus_connection_get_unique_name(connection).map { String(cString: $0) } ?? ""
    }

    /// Blocks until every queued outgoing message has been written to the bus
    /// (`g_dbus_connection_flush_sync`); use before exiting right after emitting signals or replying.
    public func flush() {
        _ = g_dbus_connection_flush_sync(connection, nil, nil)
    }
}

