@preconcurrency import Glibc
import GLibKit
import LectorCommon

/// `lector shortcut install [KEY]` / `remove`: one key that reads the selection, as a GNOME custom keybinding
/// (gnome-settings-daemon's media-keys plugin, through `gsettings`). `remove` takes away exactly what
/// `install` added: Lector's entry in the list (the others stay, in their order) and its three keys.
enum ShortcutCommand {
    static let schema = "org.gnome.settings-daemon.plugins.media-keys"
    static let path = "/org/gnome/settings-daemon/plugins/media-keys/custom-keybindings/lector/"
    static let defaultKey = "<Super><Alt>r"

    static func run(_ args: [String]) -> Int32 {
        let parser = OptionParser(parameterString: "install [KEY] | remove",
                                  summary: "Binds KEY (default \(defaultKey), GTK accelerator syntax) to `lector read --selection` as a GNOME custom shortcut, or removes it.",
                                  description: "On Plasma: System Settings → Shortcuts → Add Command.")
        guard let rest = try? parser.parse(args), let verb = rest.first, ["install", "remove"].contains(verb),
              rest.count <= (verb == "install" ? 2 : 1) else {
            printError("usage: lector shortcut install [KEY] | remove")
            return 2
        }
        guard let current = get() else {
            printError("GNOME's shortcut settings (\(schema)) are not installed; on Plasma use System Settings → Shortcuts → Add Command: lector read --selection")
            return 1
        }
        var list = current.filter { $0 != path }
        if verb == "install" {
            list.append(path)
            let relocatable = "\(schema).custom-keybinding:\(path)"
            let key = rest.count == 2 ? rest[1] : defaultKey
            for (name, value) in [("name", "'Read selection (Lector)'"), ("command", "'lector read --selection'"),
                                  ("binding", "'" + key.replacing("'", with: "") + "'")] {
                guard gsettings(["set", relocatable, name, value]) else { return 1 }
            }
            return gsettings(["set", schema, "custom-keybindings", literal(list)]) ? 0 : 1
        }
        guard current.contains(path) else { return 0 }
        let relocatable = "\(schema).custom-keybinding:\(path)"
        for name in ["name", "command", "binding"] { guard gsettings(["reset", relocatable, name]) else { return 1 } }
        return gsettings(list.isEmpty ? ["reset", schema, "custom-keybindings"] : ["set", schema, "custom-keybindings", literal(list)]) ? 0 : 1
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
