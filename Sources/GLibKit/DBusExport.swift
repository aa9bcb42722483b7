import CGio

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

extension DBusConnection {
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
        let exported = ExportedObject(object, info: info, gate: gate)
        let pointer = Unmanaged.passRetained(exported).toOpaque()
        let id = g_dbus_connection_register_object(connection, path, info, exported.vtable, pointer,
                                                   { Unmanaged<ExportedObject>.fromOpaque($0!).release() }, &error)
        guard id != 0 else {
            Unmanaged<ExportedObject>.fromOpaque(pointer).release()
            throw GLibError(consuming: error!)
        }
        return Registration(connection: self, id: id)
    }

    /// Emits a signal to every subscriber on the bus (`g_dbus_connection_emit_signal`, no destination), or
    /// to the one connection named `destination` (a unique name) only.
    /// Invalid path, interface or member names, and failures to send, are logged as warnings.
    public func emitSignal(path: String, interface: String, name: String, arguments: [Variant], destination: String? = nil) {
        guard g_variant_is_object_path(path) != 0, g_dbus_is_interface_name(interface) != 0,
              g_dbus_is_member_name(name) != 0 else {
            Log.warning("Not emitting signal \(interface).\(name) at \(path): invalid name or path")
            return
        }
        let body = Variant.tuple(arguments).makeGVariant()
        defer { g_variant_unref(body) }
        var error: UnsafeMutablePointer<GError>?
        if g_dbus_connection_emit_signal(connection, destination, path, interface, name, body, &error) == 0 {
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
}

extension DBusConnection {
    /// From now on, every method call (properties too) to the objects exported through this connection is
    /// answered with `error` and reaches no object: a process that is leaving the bus says so to the calls
    /// still routed to it, so that their callers go to the next owner of the name.
    public func refuseCalls(with error: DBusError) { gate.refusal = error }
}

/// The refusal `DBusConnection.refuseCalls` sets, shared by the connection's exported objects.
final class CallGate {
    var refusal: DBusError?
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

    let gate: CallGate

    init(_ object: DBusObject, info: UnsafeMutablePointer<GDBusInterfaceInfo>, gate: CallGate) {
        self.object = object
        self.gate = gate
        self.info = g_dbus_interface_info_ref(info)
        vtable = .allocate(capacity: 1)
        vtable.initialize(to: GDBusInterfaceVTable())
        vtable.pointee.method_call = { _, sender, _, interface, method, parameters, invocation, pointer in
            let exported = Unmanaged<ExportedObject>.fromOpaque(pointer!).takeUnretainedValue()
            let interfaceName = String(cString: interface!), methodName = String(cString: method!)
            if let refusal = exported.gate.refusal {
                g_dbus_method_invocation_return_dbus_error(invocation, refusal.validName, refusal.message)
                return
            }
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
