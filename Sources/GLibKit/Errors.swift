import CGio

/// A `GError` from GLib or GIO, copied into Swift (GLib Reference Manual, "Error Reporting").
public struct GLibError: Error, CustomStringConvertible, Sendable {
    /// The error domain's quark string, e.g. "g-file-error-quark" or "g-option-context-error-quark".
    public var domain: String
    /// The code within `domain` (e.g. a `GFileError` or `GOptionError` value).
    public var code: Int32
    /// GLib's human-readable message, already translated.
    public var message: String

    /// Makes an error by hand (for callers that report their own failures in GLib's terms).
    public init(domain: String, code: Int32, message: String) {
        self.domain = domain
        self.code = code
        self.message = message
    }

    /// The message alone.
    public var description: String { message }

    /// Copies `error` and frees it (`g_error_free`).
    init(consuming error: UnsafeMutablePointer<GError>) {
        domain = String(cString: g_quark_to_string(error.pointee.domain))
        code = error.pointee.code
        message = error.pointee.message.map { String(cString: $0) } ?? ""
        g_error_free(error)
    }
}

/// A D-Bus error: one to return to a caller of an exported method or property, or one received from a call
/// (D-Bus Specification, "Message Types: Errors").
public struct DBusError: Error, CustomStringConvertible, Sendable {
    /// The error name, e.g. "org.freedesktop.DBus.Error.InvalidArgs". A name that is not a valid D-Bus
    /// error name is sent as "org.freedesktop.DBus.Error.Failed".
    public var name: String
    /// The human-readable message, without GDBus's "GDBus.Error:name: " prefix.
    public var message: String
    /// Whether GDBus itself reported the failure of a call (no reply in time, connection closed) rather than
    /// the peer answering with an error: true only for errors converted from a `GError` without a remote
    /// error name. `name` is then NoReply or Failed, as described at `init(consuming:)`.
    public var isLocal = false

    /// Makes an error with the given D-Bus error name and message.
    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    /// `org.freedesktop.DBus.Error.InvalidArgs`: the arguments are wrong.
    public static func invalidArgs(_ message: String) -> DBusError {
        DBusError(name: "org.freedesktop.DBus.Error.InvalidArgs", message: message)
    }
    /// `org.freedesktop.DBus.Error.Failed`: a generic failure.
    public static func failed(_ message: String) -> DBusError {
        DBusError(name: "org.freedesktop.DBus.Error.Failed", message: message)
    }
    /// `org.freedesktop.DBus.Error.NotSupported`: the request is valid but not supported.
    public static func notSupported(_ message: String) -> DBusError {
        DBusError(name: "org.freedesktop.DBus.Error.NotSupported", message: message)
    }
    /// `org.freedesktop.DBus.Error.UnknownMethod`: no such method on the interface.
    public static func unknownMethod(_ message: String) -> DBusError {
        DBusError(name: "org.freedesktop.DBus.Error.UnknownMethod", message: message)
    }
    /// `org.freedesktop.DBus.Error.UnknownProperty`: no such property on the interface.
    public static func unknownProperty(_ message: String) -> DBusError {
        DBusError(name: "org.freedesktop.DBus.Error.UnknownProperty", message: message)
    }
    /// `org.freedesktop.DBus.Error.PropertyReadOnly`: the property cannot be written.
    public static func propertyReadOnly(_ message: String) -> DBusError {
        DBusError(name: "org.freedesktop.DBus.Error.PropertyReadOnly", message: message)
    }

    /// The message alone (for one-line command-line errors).
    public var description: String { message }

    /// The name sent on the bus: `name` when it is a valid D-Bus error name, else
    /// "org.freedesktop.DBus.Error.Failed" (GDBus refuses to send invalid names).
    var validName: String {
        g_dbus_is_interface_name(name) != 0 ? name : "org.freedesktop.DBus.Error.Failed"
    }

    /// Converts a `GError` from a D-Bus call and frees it.
    ///
    /// A remote error keeps its D-Bus name (`g_dbus_error_get_remote_error`) and loses GDBus's
    /// "GDBus.Error:name: " message prefix (`g_dbus_error_strip_remote_error`). A local error (no bus,
    /// connection closed) becomes "org.freedesktop.DBus.Error.Failed", except a timeout
    /// (`G_IO_ERROR_TIMED_OUT`), which becomes "org.freedesktop.DBus.Error.NoReply" as in libdbus.
    init(consuming error: UnsafeMutablePointer<GError>) {
        if let remote = g_dbus_error_get_remote_error(error) {
            name = String(cString: remote)
            g_free(remote)
        } else if error.pointee.domain == g_io_error_quark()
                    && error.pointee.code == Int32(G_IO_ERROR_TIMED_OUT.rawValue) {
            name = "org.freedesktop.DBus.Error.NoReply"
            isLocal = true
        } else {
            name = "org.freedesktop.DBus.Error.Failed"
            isLocal = true
        }
        _ = g_dbus_error_strip_remote_error(error)
        message = error.pointee.message.map { String(cString: $0) } ?? ""
        g_error_free(error)
    }
}
