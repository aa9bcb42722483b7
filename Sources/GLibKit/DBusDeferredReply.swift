import CGio

/// An exported object that answers some of its method calls later, once something it waits for without
/// blocking the main loop (an asynchronous D-Bus call, a timer) has come back: GDBus keeps the call open
/// (its `GDBusMethodInvocation`) until the object answers through the `DBusPendingReply`.
///
/// GDBus checks the call against the introspection first, as for `DBusObject.call`. Properties are always
/// answered at once.
public protocol DBusDeferringObject: DBusObject {
    /// Whether the call of `method` in `interface` is answered later, through
    /// `call(method:interface:arguments:sender:reply:)`, instead of by `DBusObject.call`.
    func answersLater(method: String, interface: String) -> Bool

    /// Handles a method call that `answersLater` claimed; the object answers it exactly once through `reply`,
    /// now or later, on the main loop. A reply dropped unanswered answers
    /// org.freedesktop.DBus.Error.Failed, so the caller never waits for its time-out.
    /// - Parameters:
    ///   - sender: the caller's unique bus name (e.g. ":1.42").
    func call(method: String, interface: String, arguments: [Variant], sender: String, reply: DBusPendingReply)
}

/// The answer still owed to one method call (GIO Reference Manual, "GDBusMethodInvocation"): the first of
/// `succeed` or `fail` sends it, later ones do nothing. Use it on the main loop only.
public final class DBusPendingReply {
    /// The invocation, owned until answered (`g_dbus_method_invocation_return_*` takes the reference).
    private var invocation: OpaquePointer?
    /// The introspected out-argument types of the method, e.g. "(t)".
    private let outSignature: String
    /// "Interface.Method", for log lines.
    private let what: String

    init(invocation: OpaquePointer, what: String) {
        self.invocation = invocation
        self.what = what
        var types = ""
        if let info = g_dbus_method_invocation_get_method_info(invocation), var arg = info.pointee.out_args {
            while let argInfo = arg.pointee {
                types += String(cString: argInfo.pointee.signature)
                arg += 1
            }
        }
        outSignature = "(" + types + ")"
    }

    deinit {
        if invocation != nil { fail(.failed("\(what) was not answered")) }
    }

    /// The Unix file descriptors that came with the call; empty once it is answered.
    public var fileDescriptors: DBusFileDescriptors {
        DBusFileDescriptors(message: invocation.flatMap { g_dbus_method_invocation_get_message($0) })
    }

    /// Whether the call has been answered.
    public var isAnswered: Bool { invocation == nil }

    /// Answers with `results`, the out-arguments, converted to the introspected out types where that loses
    /// nothing (`Variant.converted(to:)`); a mismatch is logged and answered with
    /// org.freedesktop.DBus.Error.Failed instead.
    public func succeed(_ results: [Variant] = []) {
        guard let invocation else { return }
        guard let body = Variant.tuple(results).converted(to: outSignature) else {
            let message = "\(what) returned \(Variant.tuple(results).typeString), not \(outSignature)"
            Log.warning(message)
            fail(.failed(message))
            return
        }
        self.invocation = nil
        let gvariant = body.makeGVariant()
        defer { g_variant_unref(gvariant) }
        g_dbus_method_invocation_return_value(invocation, gvariant)
    }

    /// Answers with the D-Bus error `error` (its name and message as they are).
    public func fail(_ error: DBusError) {
        guard let invocation else { return }
        self.invocation = nil
        g_dbus_method_invocation_return_dbus_error(invocation, error.validName, error.message)
    }
}
