import CGio
import Foundation

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
    let message = e.pointee.message.map { String(cString: $0) } ?? "unknown error"
    g_error_free(e)
    error = nil
    return (name, message)
}

/// A test's own connection to a private session bus, for many calls in a row with any arguments — also the
/// wrong ones a well-behaved client would never send. Arguments are written in GVariant text format
/// (`g_variant_parse`, e.g. `("hello", @a{sv} {})` or `(int32 5,)`), or given as a ready GVariant for what
/// text cannot carry cheaply (a 10 MB string).
final class BusConnection: @unchecked Sendable {
    /// The outcome of a call: the reply printed as GVariant text, or the D-Bus error.
    enum Reply: CustomStringConvertible {
        case value(String)
        case error(name: String, message: String)

        var errorName: String? {
            if case .error(let name, _) = self { return name }
            return nil
        }

        var value: String? {
            if case .value(let v) = self { return v }
            return nil
        }

        var description: String {
            switch self {
            case .value(let v): return v
            case .error(let name, let message): return "\(name): \(message.prefix(200))"
            }
        }
    }

    private let connection: OpaquePointer

    /// Connects to the bus at `address`.
    /// - Throws: `HarnessError` when the bus cannot be reached.
    init(address: String) throws {
        connection = try openBus(address)
    }

    deinit { closeBus(connection) }

    /// Calls `interface.method` on `destination` at `path` with `arguments` in GVariant text format (a tuple).
    /// Text that does not parse is a harness error (a `.error` with the name "parse").
    func call(_ destination: String, _ path: String, _ interface: String, _ method: String,
              _ arguments: String = "()", timeoutMs: Int32 = 10_000) -> Reply {
        var error: UnsafeMutablePointer<GError>?
        guard let parameters = g_variant_parse(nil, arguments, nil, nil, &error) else {
            return .error(name: "parse", message: takeDBusError(&error).message + " in " + arguments)
        }
        return call(destination, path, interface, method, parameters: parameters, timeoutMs: timeoutMs)
    }

    /// The same with a ready GVariant (a tuple; floating or not, it is consumed).
    func call(_ destination: String, _ path: String, _ interface: String, _ method: String,
              parameters: OpaquePointer?, timeoutMs: Int32 = 10_000) -> Reply {
        var error: UnsafeMutablePointer<GError>?
        let reply = g_dbus_connection_call_sync(
            connection, destination, path, interface, method, parameters, nil, G_DBUS_CALL_FLAGS_NO_AUTO_START,
            timeoutMs, nil, &error)
        guard let reply else {
            let (name, message) = takeDBusError(&error)
            return .error(name: name, message: message)
        }
        defer { g_variant_unref(reply) }
        let printed = g_variant_print(reply, 1)
        defer { g_free(printed) }
        return .value(printed.map { String(cString: $0) } ?? "")
    }

    /// `(s)` of a string of `count` copies of `unit`, built without the text parser.
    static func stringTuple(_ text: String) -> OpaquePointer? {
        var child: OpaquePointer? = g_variant_new_string(text)
        return g_variant_new_tuple(&child, 1)
    }

    /// Lector's own interface.
    func lector(_ method: String, _ arguments: String = "()") -> Reply {
        call("org.lector.Lector", "/org/lector/Lector", "org.lector.Lector1", method, arguments)
    }

    /// MPRIS's Player interface.
    func player(_ method: String, _ arguments: String = "()") -> Reply {
        call("org.mpris.MediaPlayer2.lector", "/org/mpris/MediaPlayer2", "org.mpris.MediaPlayer2.Player", method, arguments)
    }

    /// A property, as printed GVariant text (e.g. `<'reading'>`), or nil on an error.
    func property(_ destination: String, _ path: String, _ interface: String, _ name: String) -> String? {
        call(destination, path, "org.freedesktop.DBus.Properties", "Get", "('\(interface)', '\(name)')").value
    }

    /// Lector's State: "reading", "paused", "stopped", or nil when the daemon does not answer.
    var lectorState: String? {
        guard let text = property("org.lector.Lector", "/org/lector/Lector", "org.lector.Lector1", "State") else { return nil }
        return text.split(separator: "'").dropFirst().first.map(String.init)
    }

    /// Lector's Position in µs, or nil.
    var lectorPosition: Int64? {
        guard let text = property("org.lector.Lector", "/org/lector/Lector", "org.lector.Lector1", "Position") else { return nil }
        return Int64(text.filter { $0.isNumber || $0 == "-" })
    }

    /// A property of Lector's interface as a GVariant (unboxed; the caller unrefs it), or nil on an error.
    private func lectorValue(_ name: String) -> OpaquePointer? {
        var error: UnsafeMutablePointer<GError>?
        var items: [OpaquePointer?] = [g_variant_new_string("org.lector.Lector1"), g_variant_new_string(name)]
        guard let reply = g_dbus_connection_call_sync(
            connection, "org.lector.Lector", "/org/lector/Lector", "org.freedesktop.DBus.Properties", "Get",
            g_variant_new_tuple(&items, 2), nil, G_DBUS_CALL_FLAGS_NO_AUTO_START, 10_000, nil, &error)
        else {
            _ = takeDBusError(&error)
            return nil
        }
        defer { g_variant_unref(reply) }
        let boxed = g_variant_get_child_value(reply, 0)
        defer { g_variant_unref(boxed) }
        return g_variant_get_variant(boxed)
    }

    /// Lector's Text, or nil.
    var lectorText: String? {
        guard let value = lectorValue("Text") else { return nil }
        defer { g_variant_unref(value) }
        return String(cString: g_variant_get_string(value, nil))
    }

    /// Lector's Sentence (index, start, length in Unicode scalars of Text), or nil.
    var lectorSentence: (index: Int, start: Int, length: Int)? {
        guard let value = lectorValue("Sentence") else { return nil }
        defer { g_variant_unref(value) }
        func child(_ i: Int) -> Int {
            let c = g_variant_get_child_value(value, gsize(i))
            defer { g_variant_unref(c) }
            return Int(g_variant_get_uint32(c))
        }
        return (child(0), child(1), child(2))
    }

    /// The unique name owning `name`, or nil.
    func owner(_ name: String) -> String? {
        call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner", "('\(name)',)")
            .value?.split(separator: "'").dropFirst().first.map(String.init)
    }

}
