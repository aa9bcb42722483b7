import CGio

// The C side of FakeBusPeer, which plays a program that answers late or never, property reads included.
// GLibKit answers org.freedesktop.DBus.Properties at once for every object it exports (only methods can be
// deferred, `DBusDeferringObject`), which is right for Lector and wrong for a hung peer: so this one peer
// registers its object on GDBus directly, with no property handlers, and gets Get/GetAll as method calls.

/// Opens a connection of this process to the message bus at `address` (`g_dbus_connection_new_for_address_sync`).
/// Close it with `closeBus(_:)`.
/// - Throws: `HarnessError` with GLib's message when the bus cannot be reached.
func openBus(_ address: String) throws -> OpaquePointer {
    var error: UnsafeMutablePointer<GError>?
    let flags = GDBusConnectionFlags(
        rawValue: G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue
            | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue)
    guard let connection = g_dbus_connection_new_for_address_sync(address, flags, nil, nil, &error) else {
        throw HarnessError("cannot connect to \(address): \(takeDBusError(&error).message)")
    }
    return connection
}

/// Closes and releases a connection from `openBus(_:)`.
func closeBus(_ connection: OpaquePointer) {
    g_dbus_connection_close_sync(connection, nil, nil)
    g_object_unref(UnsafeMutableRawPointer(connection))
}

/// Frees a GError from a D-Bus call, returning the remote error's name ("" for a local failure such as a
/// timeout) and its message without GDBus's prefix.
func takeDBusError(_ error: inout UnsafeMutablePointer<GError>?) -> (name: String, message: String) {
    guard let e = error else { return ("", "unknown error") }
    var name = ""
    if let remote = g_dbus_error_get_remote_error(e) {
        name = String(cString: remote)
        g_free(remote)
        g_dbus_error_strip_remote_error(e)
    }
    let message = e.pointee.message.map { String(cString: $0) } ?? ""
    g_error_free(e)
    error = nil
    return (name, message)
}
