@preconcurrency import Glibc
import GLibKit
import LectorCommon

/// `lector shortcut install [KEY]` / `remove`: one key that reads the selection. On GNOME a custom
/// keybinding (gnome-settings-daemon's media-keys plugin, through `gsettings`); on Plasma a global shortcut
/// held by kglobalaccel (`PlasmaShortcut`). The desktop is `--desktop`, else Plasma when XDG_CURRENT_DESKTOP
/// names KDE, else GNOME. `remove` takes away exactly what `install` added: on GNOME Lector's entry in the
/// list (the others stay, in their order) and its three keys.
enum ShortcutCommand {
    static let schema = "org.gnome.settings-daemon.plugins.media-keys"
    static let path = "/org/gnome/settings-daemon/plugins/media-keys/custom-keybindings/lector/"
    static let defaultKey = "<Super><Alt>r"

    /// The desktops whose shortcut Lector can set.
    enum Desktop: String {
        case gnome, plasma

        /// Plasma when `currentDesktop` (XDG_CURRENT_DESKTOP, a colon-separated list) names KDE, else GNOME.
        static func detect(_ currentDesktop: String?) -> Desktop {
            let names = (currentDesktop ?? "").split(separator: ":").map { $0.uppercased() }
            return names.contains("KDE") ? .plasma : .gnome
        }
    }

    static func run(_ args: [String]) -> Int32 {
        let parser = OptionParser(parameterString: "install [KEY] | remove",
                                  summary: "Binds KEY (default Super+Alt+R; GTK's syntax <Super><Alt>r or Qt's Meta+Alt+R) to `lector read --selection` as a GNOME custom shortcut or a Plasma global shortcut, or removes it.",
                                  description: "The desktop is Plasma when XDG_CURRENT_DESKTOP names KDE, else GNOME.")
        let desktopOption = parser.string("desktop", "The desktop whose shortcut to set: gnome or plasma", argument: "DESKTOP")
        guard let rest = try? parser.parse(args), let verb = rest.first, ["install", "remove"].contains(verb),
              rest.count <= (verb == "install" ? 2 : 1) else {
            printError("usage: lector shortcut [--desktop gnome|plasma] install [KEY] | remove")
            return 2
        }
        let desktop: Desktop
        if let name = desktopOption.value {
            guard let chosen = Desktop(rawValue: name.lowercased()) else {
                printError("--desktop takes gnome or plasma, not “\(name)”")
                return 2
            }
            desktop = chosen
        } else {
            desktop = Desktop.detect(environment("XDG_CURRENT_DESKTOP"))
        }
        let text = rest.count == 2 ? rest[1] : defaultKey
        let key = ShortcutKey.parse(text)
        if verb == "install", let key, key.needsModifier {
            printError("“\(text)” alone would take the key from typing: hold Control, Alt or Super with it")
            return 2
        }
        switch (desktop, verb) {
        case (.plasma, "install"):
            guard let key else {
                printError("“\(text)” is not a key Lector knows: give modifiers and a letter, digit, F1–F35 or a named key, e.g. Meta+Alt+R or <Super><Alt>r")
                return 2
            }
            return PlasmaShortcut.install(key)
        case (.plasma, _):
            return PlasmaShortcut.remove()
        default:
            // GNOME takes any GTK accelerator: one in GTK's syntax goes as written, one in Qt's is converted.
            let accelerator = text.hasPrefix("<") || !text.contains("+") ? text : (key?.gtkAccelerator ?? text)
            return gnome(verb, key: accelerator)
        }
    }

    /// Installs (`verb` "install") or removes the GNOME custom keybinding; returns the exit status.
    private static func gnome(_ verb: String, key: String) -> Int32 {
        guard let current = get() else {
            printError("GNOME's shortcut settings (\(schema)) are not installed; on Plasma: lector shortcut --desktop plasma install")
            return 1
        }
        var list = current.filter { $0 != path }
        if verb == "install" {
            list.append(path)
            let relocatable = "\(schema).custom-keybinding:\(path)"
            // GNOME parses the command as a shell would (`g_shell_parse_argv`): the command, in quotes for the
            // key file, as a string of GVariant's text format.
            let command = Self.command.replacing("\\", with: "\\\\").replacing("'", with: "\\'")
            for (name, value) in [("name", "'Read selection (Lector)'"), ("command", "'\(command)'"),
                                  ("binding", "'" + key.replacing("'", with: "") + "'")] {
                guard gsettings(["set", relocatable, name, value]) else { return 1 }
            }
            guard gsettings(["set", schema, "custom-keybindings", literal(list)]) else { return 1 }
            print("\(key) reads the selection (the GNOME custom shortcut “Read selection (Lector)”); lector shortcut remove takes it away")
            return 0
        }
        guard current.contains(path) else { return 0 }
        let relocatable = "\(schema).custom-keybinding:\(path)"
        for name in ["name", "command", "binding"] { guard gsettings(["reset", relocatable, name]) else { return 1 } }
        return gsettings(list.isEmpty ? ["reset", schema, "custom-keybindings"] : ["set", schema, "custom-keybindings", literal(list)]) ? 0 : 1
    }

    /// The shortcut's command: `lector read --selection`, with this executable's absolute path (shell-quoted)
    /// for `lector` unless `lector` on PATH is this executable: a shortcut bound to a build or to a `lector`
    /// outside PATH still runs it.
    static var command: String {
        (executableUnlessOnPath().map(shellQuoted) ?? "lector") + " read --selection"
    }

    /// This executable's absolute path, nil when `lector` on PATH is it (links resolved).
    static func executableUnlessOnPath() -> String? {
        let me = executablePath()
        if let found = findProgramInPath("lector"), realPath(found) == realPath(me) { return nil }
        return me
    }

    private static func realPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The custom keybindings' paths, nil when the schema is missing.
    private static func get() -> [String]? {
        let r = Selection.run(["gsettings", "get", schema, "custom-keybindings"], limit: 1 << 20)
        let text = String(decoding: r.output, as: UTF8.self)
        guard !r.missing, text.contains("[") else { return nil }
        return text.split(separator: "'", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    private static func literal(_ paths: [String]) -> String {
        "[" + paths.map { "'\($0)'" }.joined(separator: ", ") + "]"
    }

    private static func gsettings(_ args: [String]) -> Bool {
        let r = Selection.run(["gsettings"] + args, limit: 1 << 16)
        if !r.error.isEmpty { printError("gsettings \(args.joined(separator: " ")): \(r.error)"); return false }
        return !r.missing
    }
}
