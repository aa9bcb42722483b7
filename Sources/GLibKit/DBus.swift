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

/// An object exported with `DBusConnection.register`; all calls come on the main loop.
///
/// GDBus checks every incoming call against the introspection XML before the object sees it: unknown
/// methods and properties, wrong argument signatures (InvalidArgs), Get of a write-only and Set of a
/// read-only property are answered by GDBus itself.
public protocol DBusObject: AnyObject {
    /// Handles a method call and returns its out-arguments (empty for none), which are converted to the
    /// introspected out-argument types where that loses nothing (`Variant.converted(to:)`); a mismatch
    /// that cannot be converted is logged and answered with org.freedesktop.DBus.Error.Failed.
    /// - Parameters:
    ///   - sender: the caller's unique bus name (e.g. ":1.42").
    /// - Throws: `DBusError`, sent back to the caller as that D-Bus error.
    func call(method: String, interface: String, arguments: [Variant], sender: String) throws(DBusError) -> [Variant]

    /// Handles a method call whose arguments may hold Unix file descriptors (`.handle` indexes into
    /// `fileDescriptors`). The default forwards to `call(method:interface:arguments:sender:)`; GDBus calls
    /// this one.
    func call(method: String, interface: String, arguments: [Variant], fileDescriptors: DBusFileDescriptors,
              sender: String) throws(DBusError) -> [Variant]

    /// Returns the value of a readable property, for `org.freedesktop.DBus.Properties.Get` and `GetAll`
    /// (converted to the introspected type like method results). A property that throws is answered with
    /// the error by Get and left out by GetAll.
    func property(_ name: String, interface: String) throws(DBusError) -> Variant

    /// Sets a writable property (`org.freedesktop.DBus.Properties.Set`); `value` already has the
    /// introspected type (GDBus refuses others with InvalidArgs). Emitting `PropertiesChanged` is up to the
    /// object.
    func setProperty(_ name: String, interface: String, value: Variant) throws(DBusError)
}

extension DBusObject {
    /// Default: the call without its file descriptors (which are closed with the message).
    public func call(method: String, interface: String, arguments: [Variant], fileDescriptors: DBusFileDescriptors,
                     sender: String) throws(DBusError) -> [Variant] {
        try call(method: method, interface: interface, arguments: arguments, sender: sender)
    }
    /// Default: refuses every method with org.freedesktop.DBus.Error.UnknownMethod.
    public func call(method: String, interface: String, arguments: [Variant], sender: String) throws(DBusError) -> [Variant] {
        throw .unknownMethod("No such method “\(method)”")
    }
    /// Default: refuses every property with org.freedesktop.DBus.Error.UnknownProperty.
    public func property(_ name: String, interface: String) throws(DBusError) -> Variant {
        throw .unknownProperty("No such property “\(name)”")
    }
    /// Default: refuses every write with org.freedesktop.DBus.Error.PropertyReadOnly.
    public func setProperty(_ name: String, interface: String, value: Variant) throws(DBusError) {
        throw .propertyReadOnly("Property “\(name)” is read-only")
    }
}

/// The Unix file descriptors that came with a method call (D-Bus Specification, "Type System": UNIX_FD;
/// GIO Reference Manual, "GUnixFDList"), valid while the call is handled. A `.handle(i)` argument names
/// the `i`-th of them.
public struct DBusFileDescriptors {
    private let list: OpaquePointer?

    init(message: OpaquePointer?) {
        list = message.flatMap { g_dbus_message_get_unix_fd_list($0) }.map { OpaquePointer($0) }
    }

    /// How many descriptors came with the call.
    public var count: Int { list.map { Int(g_unix_fd_list_get_length(UnsafeMutablePointer($0))) } ?? 0 }

    /// A duplicate of the descriptor a `.handle(index)` argument names, with `FD_CLOEXEC` set, for the caller
    /// to close.
    /// - Throws: `DBusError.invalidArgs` when the call carried no descriptor at `index`.
    private func duplicate(_ index: Int32) throws(DBusError) -> Int32 {
        guard let list, index >= 0, Int(index) < count else {
            throw .invalidArgs("the call carried no file descriptor at index \(index)")
        }
        var error: UnsafeMutablePointer<GError>?
        let fd = g_unix_fd_list_get(UnsafeMutablePointer(list), index, &error)
        guard fd >= 0 else {
            let message = error.map { String(cString: $0.pointee.message) } ?? "unknown error"
            g_clear_error(&error)
            throw .invalidArgs("cannot take file descriptor \(index): \(message)")
        }
        return fd
    }

    /// Calls `body` with a duplicate (`FD_CLOEXEC`) of the descriptor a `.handle(index)` argument names, closed
    /// when `body` returns.
    /// - Throws: `DBusError.invalidArgs` when the call carried no descriptor at `index`; what `body` throws.
    public func withDescriptor<T>(_ index: Int32, _ body: (Int32) throws(DBusError) -> T) throws(DBusError) -> T {
        let fd = try duplicate(index)
        defer { close(fd) }
        return try body(fd)
    }
}

/// A connection to a message bus through GDBus (GIO Reference Manual, "GDBusConnection").
public final class DBusConnection {
    let connection: OpaquePointer

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

    /// Exports `object` at `path` for the interface `interface` (`g_dbus_connection_register_object`).
    ///
    /// `introspectionXML` is a whole D-Bus introspection document (`<node>…</node>`) containing that
    /// interface. Properties are served through `org.freedesktop.DBus.Properties` (Get, GetAll, Set) by
    /// calling `object.property` and `object.setProperty`. The object is kept alive until the registration
    /// is unregistered; dropping the `Registration` does not unregister it.
    /// - Throws: `GLibError` when the XML does not parse, does not contain `interface`
    ///   ("g-io-error-quark", `G_IO_ERROR_NOT_FOUND`), or the interface is already exported at `path`.
    public func register(_ object: DBusObject, path: String, interface: String,
                         introspectionXML: String) throws(GLibError) -> Registration {
        guard g_variant_is_object_path(path) != 0 else {
            throw GLibError(domain: "g-io-error-quark", code: Int32(G_IO_ERROR_INVALID_ARGUMENT.rawValue),
                            message: "Invalid object path “\(path)”")
        }
        var error: UnsafeMutablePointer<GError>?
        guard let node = g_dbus_node_info_new_for_xml(introspectionXML, &error) else {
            throw GLibError(consuming: error!)
        }
        defer { g_dbus_node_info_unref(node) }
        guard let info = g_dbus_node_info_lookup_interface(node, interface) else {
            throw GLibError(domain: "g-io-error-quark", code: Int32(G_IO_ERROR_NOT_FOUND.rawValue),
                            message: "The introspection XML does not describe the interface “\(interface)”")
        }
        let exported = ExportedObject(object, info: info)
        let pointer = Unmanaged.passRetained(exported).toOpaque()
        let id = g_dbus_connection_register_object(connection, path, info, exported.vtable, pointer,
                                                   { Unmanaged<ExportedObject>.fromOpaque($0!).release() }, &error)
        guard id != 0 else {
            Unmanaged<ExportedObject>.fromOpaque(pointer).release()
            throw GLibError(consuming: error!)
        }
        return Registration(connection: self, id: id)
    }

    /// Emits a signal to every subscriber on the bus (`g_dbus_connection_emit_signal`, no destination).
    /// Invalid path, interface or member names, and failures to send, are logged as warnings.
    public func emitSignal(path: String, interface: String, name: String, arguments: [Variant]) {
        guard g_variant_is_object_path(path) != 0, g_dbus_is_interface_name(interface) != 0,
              g_dbus_is_member_name(name) != 0 else {
            Log.warning("Not emitting signal \(interface).\(name) at \(path): invalid name or path")
            return
        }
        let body = Variant.tuple(arguments).makeGVariant()
        defer { g_variant_unref(body) }
        var error: UnsafeMutablePointer<GError>?
        if g_dbus_connection_emit_signal(connection, nil, path, interface, name, body, &error) == 0 {
            Log.warning("Cannot emit signal \(interface).\(name): \(GLibError(consuming: error!).message)")
        }
    }

    /// Emits `org.freedesktop.DBus.Properties.PropertiesChanged(interface, changed, invalidated)` from
    /// `path` (D-Bus Specification, "org.freedesktop.DBus.Properties"); `changed` values are boxed into
    /// `a{sv}` as by `Variant.vardict` (so the value of a property whose own type is `v` must be given
    /// boxed twice).
    public func emitPropertiesChanged(path: String, interface: String, changed: [String: Variant],
                                      invalidated: [String] = []) {
        emitSignal(path: path, interface: "org.freedesktop.DBus.Properties", name: "PropertiesChanged",
                   arguments: [.string(interface), .vardict(changed), .strings(invalidated)])
    }

    /// Asks the bus for the well-known name `name` (`g_bus_own_name_on_connection` with
    /// `G_BUS_NAME_OWNER_FLAGS_DO_NOT_QUEUE`: no queueing, no replacing and not replaceable).
    ///
    /// Exactly one of the closures is called first, on the main loop; `onLost` may follow later (e.g. when
    /// the connection closes). An invalid name calls `onLost` from an idle callback.
    public func ownName(_ name: String, onAcquired: @escaping () -> Void,
                        onLost: @escaping () -> Void) -> NameOwnership {
        guard g_dbus_is_name(name) != 0, g_dbus_is_unique_name(name) == 0 else {
            Log.warning("Cannot own the invalid bus name \"\(name)\"")
            MainContext.idle(onLost)
            return NameOwnership(id: 0)
        }
        let handlers = Unmanaged.passRetained(NameHandlers(acquired: onAcquired, lost: onLost)).toOpaque()
        let id = g_bus_own_name_on_connection(
            connection, name, G_BUS_NAME_OWNER_FLAGS_DO_NOT_QUEUE,
            { _, _, pointer in Unmanaged<NameHandlers>.fromOpaque(pointer!).takeUnretainedValue().acquired() },
            { _, _, pointer in Unmanaged<NameHandlers>.fromOpaque(pointer!).takeUnretainedValue().lost() },
            handlers,
            { Unmanaged<NameHandlers>.fromOpaque($0!).release() })
        return NameOwnership(id: id)
    }

    /// Calls a method and waits for its reply (`g_dbus_connection_call_with_unix_fd_list_sync`), blocking the
    /// main loop meanwhile.
    ///
    /// - Parameters:
    ///   - fileDescriptors: Unix file descriptors sent with the call (duplicated; the caller keeps its own);
    ///     an argument `.handle(i)` names the `i`-th. Descriptors in the reply are closed.
    ///   - timeoutMilliseconds: how long to wait for the reply in ms; -1 for GDBus's default (25 s).
    ///   - autoStart: false sets `G_DBUS_CALL_FLAGS_NO_AUTO_START`: the bus does not start a service for
    ///     `destination`.
    /// - Returns: the reply's out-arguments.
    /// - Throws: `DBusError`: the remote error's name and message; for a local failure
    ///   org.freedesktop.DBus.Error.Failed (NoReply for a timeout, InvalidArgs for an invalid name or path).
    public func call(destination: String, path: String, interface: String, method: String,
                     arguments: [Variant] = [], fileDescriptors: [Int32] = [], timeoutMilliseconds: Int32 = 25_000,
                     autoStart: Bool = true) throws(DBusError) -> [Variant] {
        guard g_dbus_is_name(destination) != 0 else { throw .invalidArgs("Invalid bus name “\(destination)”") }
        guard g_variant_is_object_path(path) != 0 else { throw .invalidArgs("Invalid object path “\(path)”") }
        guard g_dbus_is_interface_name(interface) != 0 else {
            throw .invalidArgs("Invalid interface name “\(interface)”")
        }
        guard g_dbus_is_member_name(method) != 0 else { throw .invalidArgs("Invalid method name “\(method)”") }
        let body = Variant.tuple(arguments).makeGVariant()
        defer { g_variant_unref(body) }
        let flags = autoStart ? G_DBUS_CALL_FLAGS_NONE : G_DBUS_CALL_FLAGS_NO_AUTO_START
        var error: UnsafeMutablePointer<GError>?
        var fdList: UnsafeMutablePointer<GUnixFDList>?
        if !fileDescriptors.isEmpty {
            fdList = g_unix_fd_list_new()
            for fd in fileDescriptors where g_unix_fd_list_append(fdList, fd, &error) < 0 {
                g_object_unref(fdList)
                throw DBusError(consuming: error!)
            }
        }
        defer { if let fdList { g_object_unref(fdList) } }
        guard let reply = g_dbus_connection_call_with_unix_fd_list_sync(
            connection, destination, path, interface, method, body, nil, flags, timeoutMilliseconds,
            fdList, nil, nil, &error) else {
            throw DBusError(consuming: error!)
        }
        defer { g_variant_unref(reply) }
        return Variant.children(of: reply)
    }

    /// Calls a method without waiting for its reply (`g_dbus_connection_call_with_unix_fd_list`): returns at
    /// once, and `reply` is called later, exactly once, on the main loop (the thread-default main context of
    /// the calling thread), with the reply's out-arguments or the error. The main loop keeps running
    /// meanwhile, so a peer that answers late or never delays nothing but this call.
    ///
    /// - Parameters:
    ///   - fileDescriptors: Unix file descriptors sent with the call (duplicated; the caller keeps its own);
    ///     an argument `.handle(i)` names the `i`-th. Descriptors in the reply are closed.
    ///   - timeoutMilliseconds: how long to wait for the reply in ms; -1 for GDBus's default (25 s).
    ///   - autoStart: false sets `G_DBUS_CALL_FLAGS_NO_AUTO_START`: the bus does not start a service for
    ///     `destination`.
    ///   - reply: the out-arguments, or a `DBusError`: the remote error's name and message; for a local
    ///     failure org.freedesktop.DBus.Error.Failed (NoReply when no reply came within the time-out,
    ///     InvalidArgs for an invalid name or path). Errors too come from the main loop, never before this
    ///     method returns.
    /// - Returns: the call in flight; `PendingCall.cancel()` stops waiting (then `reply` is never called).
    ///   Dropping it does not cancel the call.
    @discardableResult
    public func call(destination: String, path: String, interface: String, method: String,
                     arguments: [Variant] = [], fileDescriptors: [Int32] = [], timeoutMilliseconds: Int32 = 25_000,
                     autoStart: Bool = true,
                     reply: @escaping (Result<[Variant], DBusError>) -> Void) -> PendingCall {
        let pending = PendingCall(reply)
        var invalid: DBusError?
        if g_dbus_is_name(destination) == 0 {
            invalid = .invalidArgs("Invalid bus name “\(destination)”")
        } else if g_variant_is_object_path(path) == 0 {
            invalid = .invalidArgs("Invalid object path “\(path)”")
        } else if g_dbus_is_interface_name(interface) == 0 {
            invalid = .invalidArgs("Invalid interface name “\(interface)”")
        } else if g_dbus_is_member_name(method) == 0 {
            invalid = .invalidArgs("Invalid method name “\(method)”")
        }
        var error: UnsafeMutablePointer<GError>?
        var fdList: UnsafeMutablePointer<GUnixFDList>?
        if invalid == nil, !fileDescriptors.isEmpty {
            fdList = g_unix_fd_list_new()
            for fd in fileDescriptors where g_unix_fd_list_append(fdList, fd, &error) < 0 {
                invalid = DBusError(consuming: error!)
                break
            }
        }
        defer { if let fdList { g_object_unref(fdList) } }
        if let invalid {
            MainContext.idle { pending.deliver(.failure(invalid)) }
            return pending
        }
        let body = Variant.tuple(arguments).makeGVariant()
        defer { g_variant_unref(body) }
        let flags = autoStart ? G_DBUS_CALL_FLAGS_NONE : G_DBUS_CALL_FLAGS_NO_AUTO_START
        // GIO calls back exactly once, also after a cancellation, so the retained reference is released there.
        g_dbus_connection_call_with_unix_fd_list(
            connection, destination, path, interface, method, body, nil, flags, timeoutMilliseconds, fdList,
            pending.cancellable,
            { source, result, pointer in
                let pending = Unmanaged<PendingCall>.fromOpaque(pointer!).takeRetainedValue()
                var error: UnsafeMutablePointer<GError>?
                var replyFDs: UnsafeMutablePointer<GUnixFDList>?
                let reply = g_dbus_connection_call_with_unix_fd_list_finish(OpaquePointer(source), &replyFDs, result,
                                                                             &error)
                if let replyFDs { g_object_unref(replyFDs) }
                if let reply {
                    defer { g_variant_unref(reply) }
                    pending.deliver(.success(Variant.children(of: reply)))
                } else {
                    pending.deliver(.failure(DBusError(consuming: error!)))
                }
            },
            Unmanaged.passRetained(pending).toOpaque())
        return pending
    }

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

    /// Whether `name` currently has an owner on the bus (`org.freedesktop.DBus.NameHasOwner`, a blocking
    /// call); false when the bus cannot answer.
    public func nameHasOwner(_ name: String) -> Bool {
        let reply = try? call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                              interface: "org.freedesktop.DBus", method: "NameHasOwner", arguments: [.string(name)])
        return reply?.first?.bool ?? false
    }

    /// Watches the owner of `name` (`g_bus_watch_name_on_connection`, without auto-starting it).
    /// `appeared` gets the owner's unique name; exactly one of the closures is called first (from the
    /// main loop), then they alternate as the name changes hands. Dropping the `NameWatch` does not cancel
    /// it. An invalid name calls `vanished` from an idle callback.
    public func watchName(_ name: String, appeared: @escaping (_ owner: String) -> Void,
                          vanished: @escaping () -> Void) -> NameWatch {
        guard g_dbus_is_name(name) != 0 else {
            Log.warning("Cannot watch the invalid bus name \"\(name)\"")
            MainContext.idle(vanished)
            return NameWatch(id: 0)
        }
        let box = Unmanaged.passRetained(WatchHandlers(appeared: appeared, vanished: vanished)).toOpaque()
        let id = g_bus_watch_name_on_connection(
            connection, name, G_BUS_NAME_WATCHER_FLAGS_NONE,
            { _, _, owner, pointer in
                Unmanaged<WatchHandlers>.fromOpaque(pointer!).takeUnretainedValue().appeared(String(cString: owner!))
            },
            { _, _, pointer in Unmanaged<WatchHandlers>.fromOpaque(pointer!).takeUnretainedValue().vanished() },
            box,
            { Unmanaged<WatchHandlers>.fromOpaque($0!).release() })
        return NameWatch(id: id)
    }

    /// Blocks until every queued outgoing message has been written to the bus
    /// (`g_dbus_connection_flush_sync`); use before exiting right after emitting signals or replying.
    public func flush() {
        _ = g_dbus_connection_flush_sync(connection, nil, nil)
    }
}

/// An object exported by `DBusConnection.register`.
public final class Registration {
    private let connection: DBusConnection
    private var id: UInt32

    init(connection: DBusConnection, id: UInt32) {
        self.connection = connection
        self.id = id
    }

    /// Stops exporting the object (`g_dbus_connection_unregister_object`) and releases it. Safe to call
    /// twice.
    public func unregister() {
        guard id != 0 else { return }
        _ = g_dbus_connection_unregister_object(connection.connection, id)
        id = 0
    }
}

/// A bus name requested by `DBusConnection.ownName`.
public final class NameOwnership {
    private var id: UInt32

    init(id: UInt32) { self.id = id }

    /// Gives the name back to the bus (`g_bus_unown_name`); no closure is called after this. Safe to call
    /// twice.
    public func release() {
        guard id != 0 else { return }
        g_bus_unown_name(id)
        id = 0
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

/// A watch on a bus name made by `DBusConnection.watchName`.
public final class NameWatch {
    private var id: UInt32

    init(id: UInt32) { self.id = id }

    /// Ends the watch (`g_bus_unwatch_name`); no closure is called after this. Safe to call twice.
    public func cancel() {
        guard id != 0 else { return }
        g_bus_unwatch_name(id)
        id = 0
    }
}

/// A method call sent by `DBusConnection.call(…reply:)` whose reply has not been delivered yet.
public final class PendingCall {
    private var reply: ((Result<[Variant], DBusError>) -> Void)?
    let cancellable: UnsafeMutablePointer<GCancellable>

    init(_ reply: @escaping (Result<[Variant], DBusError>) -> Void) {
        self.reply = reply
        cancellable = g_cancellable_new()
    }

    deinit {
        g_object_unref(cancellable)
    }

    /// Whether the reply closure is still to be called (neither delivered nor cancelled).
    public var isPending: Bool { reply != nil }

    /// Stops waiting (`g_cancellable_cancel`): the reply closure is not called, and is released. The call may
    /// already have reached its destination. Safe to call twice, and after the reply came.
    public func cancel() {
        guard reply != nil else { return }
        reply = nil
        g_cancellable_cancel(cancellable)
    }

    /// Calls the reply closure once, unless cancelled.
    func deliver(_ result: Result<[Variant], DBusError>) {
        guard let body = reply else { return }
        reply = nil
        body(result)
    }
}

private final class NameHandlers {
    let acquired: () -> Void
    let lost: () -> Void
    init(acquired: @escaping () -> Void, lost: @escaping () -> Void) {
        self.acquired = acquired
        self.lost = lost
    }
}

private final class WatchHandlers {
    let appeared: (String) -> Void
    let vanished: () -> Void
    init(appeared: @escaping (String) -> Void, vanished: @escaping () -> Void) {
        self.appeared = appeared
        self.vanished = vanished
    }
}

private final class SignalHandler {
    let body: (SignalMessage) -> Void
    init(_ body: @escaping (SignalMessage) -> Void) { self.body = body }
}

/// What GDBus holds for one registration: the Swift object, the interface description and the vtable.
/// Released by the registration's `GDestroyNotify` after it is unregistered.
///
/// The vtable has no `get_property`/`set_property`: GDBus then checks `org.freedesktop.DBus.Properties`
/// calls (property exists, is readable or writable, Set value has the right type) and forwards them to
/// `method_call`, where errors are returned with `g_dbus_method_invocation_return_dbus_error`, keeping their
/// D-Bus name and message as they are (a `GError` from a property getter would reach the caller as
/// "GDBus.Error:name: message", under an "org.gtk.GDBus.UnmappedGError…" name for unregistered names).
private final class ExportedObject {
    let object: DBusObject
    let info: UnsafeMutablePointer<GDBusInterfaceInfo>
    let vtable: UnsafeMutablePointer<GDBusInterfaceVTable>

    init(_ object: DBusObject, info: UnsafeMutablePointer<GDBusInterfaceInfo>) {
        self.object = object
        self.info = g_dbus_interface_info_ref(info)
        vtable = .allocate(capacity: 1)
        vtable.initialize(to: GDBusInterfaceVTable())
        vtable.pointee.method_call = { _, sender, _, interface, method, parameters, invocation, pointer in
            let exported = Unmanaged<ExportedObject>.fromOpaque(pointer!).takeUnretainedValue()
            let interfaceName = String(cString: interface!), methodName = String(cString: method!)
            // Calls a `DBusDeferringObject` answers later (DBusDeferredReply.swift).
            if interfaceName != "org.freedesktop.DBus.Properties", let deferring = exported.object as? DBusDeferringObject,
               deferring.answersLater(method: methodName, interface: interfaceName) {
                deferring.call(method: methodName, interface: interfaceName, arguments: Variant.children(of: parameters!),
                               sender: sender.map { String(cString: $0) } ?? "",
                               reply: DBusPendingReply(invocation: invocation!, what: interfaceName + "." + methodName))
                return
            }
            let reply = exported.reply(sender: sender.map { String(cString: $0) } ?? "",
                                       interface: String(cString: interface!), method: String(cString: method!),
                                       arguments: Variant.children(of: parameters!), invocation: invocation!,
                                       fileDescriptors: DBusFileDescriptors(message: g_dbus_method_invocation_get_message(invocation)))
            switch reply {
            case .success(let body):
                let gvariant = body.makeGVariant()
                defer { g_variant_unref(gvariant) }
                g_dbus_method_invocation_return_value(invocation, gvariant)
            case .failure(let error):
                g_dbus_method_invocation_return_dbus_error(invocation, error.validName, error.message)
            }
        }
    }

    deinit {
        vtable.deinitialize(count: 1)
        vtable.deallocate()
        g_dbus_interface_info_unref(info)
    }

    /// The reply body (a tuple of the introspected out types) or the error for one call.
    private func reply(sender: String, interface: String, method: String, arguments: [Variant],
                       invocation: OpaquePointer, fileDescriptors: DBusFileDescriptors) -> Result<Variant, DBusError> {
        Result { () throws(DBusError) -> Variant in
            if interface == "org.freedesktop.DBus.Properties" {
                return try propertiesReply(method: method, arguments: arguments)
            }
            let result = try object.call(method: method, interface: interface, arguments: arguments,
                                         fileDescriptors: fileDescriptors, sender: sender)
            var outTypes = ""
            if let info = g_dbus_method_invocation_get_method_info(invocation), var arg = info.pointee.out_args {
                while let argInfo = arg.pointee {
                    outTypes += String(cString: argInfo.pointee.signature)
                    arg += 1
                }
            }
            return try conformed(.tuple(result), to: "(" + outTypes + ")", what: method + " returned")
        }
    }

    /// Get, GetAll and Set of `org.freedesktop.DBus.Properties`, already checked by GDBus against the
    /// introspection (the property exists and may be read or written; a Set value has its type).
    private func propertiesReply(method: String, arguments: [Variant]) throws(DBusError) -> Variant {
        let interface = arguments.first?.string ?? ""
        switch method {
        case "Get":
            let name = arguments[1].string ?? ""
            return .tuple([.variant(try value(of: name, interface: interface, type: signature(of: name)))])
        case "GetAll":
            var values: [String: Variant] = [:]
            if var property = info.pointee.properties {
                while let propertyInfo = property.pointee {
                    property += 1
                    guard propertyInfo.pointee.flags.rawValue & G_DBUS_PROPERTY_INFO_FLAGS_READABLE.rawValue != 0
                    else { continue }
                    let name = String(cString: propertyInfo.pointee.name)
                    let type = String(cString: propertyInfo.pointee.signature)
                    do {
                        values[name] = try value(of: name, interface: interface, type: type)
                    } catch {
                        Log.debug("GetAll leaves out \(name): \(error.message)")
                    }
                }
            }
            return .tuple([.dictionary(valueType: "v", values.mapValues { .variant($0) })])
        case "Set":
            // The value arrives boxed once (Set's argument is `v`).
            var value = arguments[2]
            if case .variant(let inner) = value { value = inner }
            try object.setProperty(arguments[1].string ?? "", interface: interface, value: value)
            return .tuple([])
        default:
            throw .unknownMethod("No such method “\(method)”")
        }
    }

    private func value(of name: String, interface: String, type: String) throws(DBusError) -> Variant {
        try conformed(object.property(name, interface: interface), to: type, what: "Property " + name + " is")
    }

    private func signature(of property: String) -> String {
        guard let propertyInfo = g_dbus_interface_info_lookup_property(info, property) else { return "v" }
        return String(cString: propertyInfo.pointee.signature)
    }

    /// `value` converted to `type`, or a logged Failed error naming the mismatch.
    private func conformed(_ value: Variant, to type: String, what: String) throws(DBusError) -> Variant {
        guard let converted = value.converted(to: type) else {
            let message = "\(what) \(value.typeString), not \(type)"
            Log.warning(message)
            throw .failed(message)
        }
        return converted
    }
}
