@preconcurrency import Glibc
import GLibKit
import LectorCommon

/// One key that reads the selection on KDE Plasma: a global shortcut held by kglobalaccel (KDE Frameworks'
/// `org.kde.kglobalaccel` service, `/kglobalaccel`, `org.kde.KGlobalAccel`), made the way Plasma's own
/// System Settings → Shortcuts → "Add Command" makes one (plasma-desktop 5.27, kcms/keys): a hidden desktop
/// file in `$XDG_DATA_HOME/applications/` marked `X-KDE-GlobalAccel-CommandShortcut`, whose name is the
/// component of the shortcut and whose `_launch` action runs its `Exec`. kglobalaccel keeps the key in
/// `kglobalshortcutsrc` under the desktop file's name and, at every login, finds the file again and runs it
/// (KDE/kglobalaccel 5.103, `KServiceActionComponent`); System Settings lists it under "Commands".
///
/// `remove` unregisters exactly that action (kglobalaccel then drops the component, and its group from
/// `kglobalshortcutsrc`, as it has no other) and deletes exactly that file.
enum PlasmaShortcut {
    /// The desktop file's name, which is also kglobalaccel's component name.
    static let component = "org.lector.Lector.ReadSelection.desktop"
    /// kglobalaccel's action name for running a desktop file's main `Exec`.
    static let action = "_launch"
    /// The name shown in System Settings.
    static let friendlyName = "Read selection (Lector)"
    static let service = "org.kde.kglobalaccel"
    static let path = "/kglobalaccel"
    static let interface = "org.kde.KGlobalAccel"
    /// setShortcutKeys flags (KGlobalAccelD::SetShortcutFlag): SetPresent | NoAutoloading, as
    /// `KGlobalAccel::setGlobalShortcut` sends them: the keys given replace the stored ones.
    static let setFlags: UInt32 = 0x2 | 0x4

    /// Where the desktop file goes: `$XDG_DATA_HOME/applications/` (`~/.local/share/applications/`).
    static var desktopFilePath: String { UserDirs.data + "/applications/" + component }

    /// kglobalaccel's action id: component, action, component's friendly name, action's friendly name.
    private static var actionId: Variant {
        .strings([component, action, friendlyName, friendlyName])
    }

    /// The desktop file: hidden from menus, no startup notification, `command` as its `Exec`.
    static func desktopFile(command: String) -> String {
        """
        [Desktop Entry]
        Type=Application
        Name=\(friendlyName)
        Comment=Reads the selected text aloud (made by `lector shortcut install`, removed by `lector shortcut remove`)
        Exec=\(command)
        Icon=org.lector.Lector
        NoDisplay=true
        StartupNotify=false
        X-KDE-GlobalAccel-CommandShortcut=true

        """
    }

    /// The `Exec` line: `lector read --selection` when `lector` on PATH is this executable, else this
    /// executable's absolute path, quoted as the Desktop Entry Specification says ("The Exec key").
    static func command() -> String {
        ShortcutCommand.executableUnlessOnPath().map { desktopQuoted($0) + " read --selection" } ?? "lector read --selection"
    }

    /// `argument` as one Exec argument: unchanged when it holds no reserved character, else in double quotes
    /// with `"`, `` ` ``, `$` and `\` escaped; `%` doubled either way.
    static func desktopQuoted(_ argument: String) -> String {
        let plain = argument.replacing("%", with: "%%")
        let reserved: Set<Character> = [" ", "\t", "\n", "\"", "'", "\\", ">", "<", "~", "|", "&", ";", "$", "*", "?", "#", "(", ")", "`"]
        guard plain.contains(where: { reserved.contains($0) }) else { return plain }
        var quoted = "\""
        for c in plain {
            if "\"`$\\".contains(c) { quoted += "\\" }
            quoted.append(c)
        }
        return quoted + "\""
    }

    /// Binds `key` to reading the selection; returns the exit status (0, or 1 with one line printed).
    static func install(_ key: ShortcutKey) -> Int32 {
        let connection: DBusConnection
        do { connection = try DBusConnection.session() } catch {
            printError("no session bus: \(error.message)")
            return 1
        }
        let keys: Variant = .array(elementType: "(ai)", [sequence(key)])
        if let owner = holder(of: key, connection) {
            printError("\(key.qtName) is already the global shortcut of “\(owner)”; choose another key: lector shortcut install KEY")
            return 1
        }
        do {
            try writeFileAtomically(desktopFilePath, contents: Array(desktopFile(command: command()).utf8), mode: 0o644)
        } catch {
            printError(error.message)
            return 1
        }
        do {
            _ = try call(connection, "doRegister", [actionId])
            let set = try call(connection, "setShortcutKeys", [actionId, keys, .uint32(setFlags)])
            let codes = set.first?.array?.compactMap { $0.tuple?.first?.array?.first?.int32 } ?? []
            guard codes.contains(key.qtKeyCode) else {
                _ = try? call(connection, "unregister", [.string(component), .string(action)])
                removeFile(desktopFilePath)
                printError("kglobalaccel did not take \(key.qtName) (another program may hold it); choose another key: lector shortcut install KEY")
                return 1
            }
        } catch {
            removeFile(desktopFilePath)
            printError(unreachable(error))
            return 1
        }
        print("\(key.qtName) reads the selection (a Plasma global shortcut); lector shortcut remove takes it away")
        return 0
    }

    /// Removes the shortcut and its desktop file; returns the exit status. Nothing installed is not an error.
    static func remove() -> Int32 {
        let hasFile = fileTest(desktopFilePath, .exists)
        let connection: DBusConnection
        do { connection = try DBusConnection.session() } catch {
            printError("no session bus: \(error.message)")
            return 1
        }
        do {
            _ = try call(connection, "unregister", [.string(component), .string(action)], autoStart: hasFile)
        } catch {
            if !hasFile { return 0 } // no kglobalaccel and no file: nothing was installed
            printError(unreachable(error))
            return 1
        }
        if hasFile && !removeFile(desktopFilePath) {
            printError("cannot remove \(desktopFilePath): \(String(cString: strerror(errno)))")
            return 1
        }
        return 0
    }

    /// kglobalaccel's QKeySequence on D-Bus: a structure holding an array of exactly four key codes (unused
    /// ones 0), as its `operator>>` reads them (KDE/kglobalaccel, kglobalshortcutinfo_dbus.cpp).
    private static func sequence(_ key: ShortcutKey) -> Variant {
        .tuple([.array(elementType: "i", [.int32(key.qtKeyCode), .int32(0), .int32(0), .int32(0)])])
    }

    /// The friendly name ("Component: Action") of another action that has `key`, nil when none has.
    private static func holder(of key: ShortcutKey, _ connection: DBusConnection) -> String? {
        // KGlobalAccel::MatchType Equal (0), as a structure of one int.
        guard let reply = try? call(connection, "globalShortcutsByKey", [sequence(key), .tuple([.int32(0)])]),
              let infos = reply.first?.array else { return nil }
        for info in infos {
            guard let fields = info.tuple, fields.count >= 4, fields[2].string != component else { continue }
            let names = [fields[3].string, fields[1].string].compactMap { $0 }.filter { !$0.isEmpty }
            return names.isEmpty ? (fields[2].string ?? "another program") : names.joined(separator: ": ")
        }
        return nil
    }

    private static func call(_ connection: DBusConnection, _ method: String, _ arguments: [Variant],
                             autoStart: Bool = true) throws(DBusError) -> [Variant] {
        try connection.call(destination: service, path: path, interface: interface, method: method,
                            arguments: arguments, timeoutMilliseconds: 10_000, autoStart: autoStart)
    }

    private static func unreachable(_ error: DBusError) -> String {
        "Plasma's global shortcut service (\(service)) did not answer: \(error.message)"
    }
}
