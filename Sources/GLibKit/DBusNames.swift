import CGio

extension DBusConnection {
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
