import CGio
import Foundation

/// Calls Lector's D-Bus interface directly through GDBus, for what `gdbus call` cannot carry: texts longer
/// than one command-line argument may be (128 KiB) and texts with characters its parser would interpret.
///
/// D-Bus strings must be valid UTF-8, so a text that is not cannot go through D-Bus at all: like every
/// client must, this one repairs it first (invalid bytes become U+FFFD) — see `repairedText(_:)`.
enum BusClient {
    /// The outcome of a method call: its reply printed as GVariant text, or the D-Bus error.
    enum Reply {
        case value(String)
        case error(name: String, message: String)
    }

    /// The text a client sends for `bytes`: valid UTF-8 unchanged, invalid sequences replaced by U+FFFD.
    static func repairedText(_ bytes: Data) -> String { String(decoding: bytes, as: UTF8.self) }

    /// Calls `org.lector.Lector1.Speak(text, options)` on the bus at `address` with string options.
    static func speak(address: String, text: String, options: [String: String] = [:], timeoutMs: Int32 = 10_000)
        -> Reply
    {
        var error: UnsafeMutablePointer<GError>?
        let flags = GDBusConnectionFlags(
            rawValue: G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue
                | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue)
        guard let connection = g_dbus_connection_new_for_address_sync(address, flags, nil, nil, &error) else {
            return .error(name: "connect", message: takeMessage(&error))
        }
        defer {
            g_dbus_connection_close_sync(connection, nil, nil)
            g_object_unref(UnsafeMutableRawPointer(connection))
        }

        let entryType = g_variant_type_new("{sv}")
        defer { g_variant_type_free(entryType) }
        var entries: [OpaquePointer?] = options.sorted(by: { $0.key < $1.key }).map { key, value in
            g_variant_new_dict_entry(g_variant_new_string(key), g_variant_new_variant(g_variant_new_string(value)))
        }
        let dictionary = entries.withUnsafeMutableBufferPointer {
            g_variant_new_array(entryType, $0.baseAddress, gsize($0.count))
        }
        var children: [OpaquePointer?] = [g_variant_new_string(text), dictionary]
        let parameters = children.withUnsafeMutableBufferPointer { g_variant_new_tuple($0.baseAddress, 2) }

        let reply = g_dbus_connection_call_sync(
            connection, "org.lector.Lector", "/org/lector/Lector", "org.lector.Lector1", "Speak", parameters,
            nil, G_DBUS_CALL_FLAGS_NONE, Int32(timeoutMs), nil, &error)
        guard let reply else {
            var name = ""
            if let error, let remote = g_dbus_error_get_remote_error(error) {
                name = String(cString: remote)
                g_free(remote)
                g_dbus_error_strip_remote_error(error)
            }
            return .error(name: name, message: takeMessage(&error))
        }
        defer { g_variant_unref(reply) }
        let printed = g_variant_print(reply, 0)
        defer { g_free(printed) }
        return .value(printed.map { String(cString: $0) } ?? "")
    }

    private static func takeMessage(_ error: inout UnsafeMutablePointer<GError>?) -> String {
        guard let e = error else { return "unknown error" }
        let message = e.pointee.message.map { String(cString: $0) } ?? "unknown error"
        g_error_free(e)
        error = nil
        return message
    }
}
