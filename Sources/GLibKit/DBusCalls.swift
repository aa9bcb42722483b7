import CGio

extension DBusConnection {
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
