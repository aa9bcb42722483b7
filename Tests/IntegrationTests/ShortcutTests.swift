import Foundation
import Testing

extension Integration {
    /// `lector shortcut install|remove` against the real gsettings and GNOME's media-keys schema, stored in the
    /// session's private folder (GSettings' keyfile backend: no dconf service, nothing of the real home).
    @Suite(.privateSession)
    struct Shortcut {
        @Test("install adds a GNOME custom shortcut after the user's own; remove takes exactly it away")
        func installAndRemove() async throws {
            try #require(Paths.executable("gsettings") != nil, "gsettings is needed")
            let session = try await world(.bare)
            let env = ["GSETTINGS_BACKEND": "keyfile"]
            let schema = "org.gnome.settings-daemon.plugins.media-keys"
            let mine = "/org/gnome/settings-daemon/plugins/media-keys/custom-keybindings/custom0/"
            let lector = "/org/gnome/settings-daemon/plugins/media-keys/custom-keybindings/lector/"
            let has = try await session.run("gsettings", ["list-schemas"], environment: env)
            try #require(has.stdout.contains(schema + "\n"), "GNOME's media-keys schema is not installed")
            func get(_ args: [String]) async throws -> String {
                try await session.run("gsettings", ["get"] + args, environment: env).stdout
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            }
            _ = try await session.run("gsettings", ["set", schema, "custom-keybindings", "['\(mine)']"], environment: env)
            let install = try await session.lector(["shortcut", "install", "<Super>r"], environment: env)
            #expect(install.status == 0 && install.stdout.contains("<Super>r reads the selection"), "\(install)")
            #expect(try await get([schema, "custom-keybindings"]) == "['\(mine)', '\(lector)']")
            let relocatable = "\(schema).custom-keybinding:\(lector)"
            #expect(try await get([relocatable, "binding"]) == "'<Super>r'")
            // The lector under test is on no PATH: the shortcut runs it by its absolute path.
            let command = try await get([relocatable, "command"])
            #expect(command == "\"'\(Paths.lectorBinary)' read --selection\"", "\(command)")
            let folder = URL(fileURLWithPath: Paths.lectorBinary).deletingLastPathComponent().path
            let onPath = env.merging(["PATH": folder + ":/usr/bin:/bin"]) { $1 }
            let again = try await session.lector(["shortcut", "install"], environment: onPath)
            #expect(try await get([relocatable, "command"]) == "'lector read --selection'")
            let list = try await get([schema, "custom-keybindings"])
            #expect(again.status == 0 && list == "['\(mine)', '\(lector)']", "installed twice: \(list)")
            let remove = try await session.lector(["shortcut", "remove"], environment: env)
            #expect(remove.status == 0, "\(remove)")
            #expect(try await get([schema, "custom-keybindings"]) == "['\(mine)']")
            #expect(try await get([relocatable, "binding"]) == "''")
            #expect(try await get([relocatable, "command"]) == "''")
        }
    }
}
