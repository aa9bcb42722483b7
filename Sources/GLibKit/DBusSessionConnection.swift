import CGio

extension DBusConnection {
    /// A new, private connection to the session bus, apart from GIO's shared one (`session()`): its own
    /// unique name, so that what it exports is reachable only through the names it owns. The address is the
    /// session bus's (`g_dbus_address_get_for_bus_sync(G_BUS_TYPE_SESSION)`).
    ///
    /// A sandbox's D-Bus proxy (Flatpak's xdg-dbus-proxy) grants access per bus name, and access to a name is
    /// access to every object of the connection that owns it: objects meant for different audiences belong
    /// on different connections.
    /// - Throws: `GLibError` when there is no session bus or it cannot be reached.
    public static func separateSession() throws(GLibError) -> DBusConnection {
        var error: UnsafeMutablePointer<GError>?
        guard let address = g_dbus_address_get_for_bus_sync(G_BUS_TYPE_SESSION, nil, &error) else {
            throw GLibError(consuming: error!)
        }
        defer { g_free(address) }
        return try connect(address: String(cString: address))
    }
}
