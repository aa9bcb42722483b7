import Foundation
import Testing

extension Integration {
    /// The desktop entry as desktops use it: GIO's MIME lookups (`gio mime`, in a private XDG_DATA_DIRS with the
    /// entry and a text editor), and `lector open` as the entry runs it, with and without a file.
    @Suite(.privateSession)
    struct DesktopEntry {
        @Test("desktop-file-validate passes; Lector opens SSML, and is never the default for text/plain")
        func mimeDefaults() async throws {
            let session = try await world(.bare)
            let apps = session.directory.appendingPathComponent("xdg/applications")
            try FileManager.default.createDirectory(at: apps, withIntermediateDirectories: true)
            let entry = Paths.packageRoot.appendingPathComponent("data/org.lector.Lector.desktop")
            let validate = try await session.run("desktop-file-validate", [entry.path])
            #expect(validate.status == 0 && validate.stdout.isEmpty, "\(validate)")
            try FileManager.default.copyItem(at: entry, to: apps.appendingPathComponent("org.lector.Lector.desktop"))
            // An editor whose name sorts after Lector's: GIO's fallback is the first application in that order.
            try Data("[Desktop Entry]\nType=Application\nName=Editor\nExec=true %F\nMimeType=text/plain;\n".utf8)
                .write(to: apps.appendingPathComponent("org.xfce.mousepad.desktop"))
            _ = try await session.run("update-desktop-database", [apps.path])
            let binDir = URL(fileURLWithPath: Paths.lectorBinary).deletingLastPathComponent().path
            let env = ["XDG_DATA_DIRS": apps.deletingLastPathComponent().path,
                       "XDG_DATA_HOME": session.directory.appendingPathComponent("xdg-home").path,
                       "XDG_CONFIG_DIRS": session.directory.appendingPathComponent("xdg-config").path,
                       "PATH": binDir + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")]
            let text = try await session.run("gio", ["mime", "text/plain"], environment: env)
            #expect(text.stdout.contains("Default application for “text/plain”: org.xfce.mousepad.desktop"), "\(text)")
            #expect(!text.stdout.contains("org.lector.Lector"), "\(text)")
            let ssml = try await session.run("gio", ["mime", "application/ssml+xml"], environment: env)
            #expect(ssml.stdout.contains("Default application for “application/ssml+xml”: org.lector.Lector.desktop"), "\(ssml)")
        }

        @Test("lector open FILE URI reads it; without one it pauses or goes on and says so; `lector window` with no display is one line and changes nothing")
        func openFromTheEntry() async throws {
            let session = try await world(.mprisQuiet)
            let server = try FakeNotificationServer(busAddress: session.busAddress)
            defer { server.stop() }
            let file = session.directory.appendingPathComponent("chapter one.txt")
            try Data(Lector.veryLong.utf8).write(to: file)
            let opened = try await session.lector(["open", file.absoluteString])
            #expect(opened.status == 0, "\(opened)")
            _ = try await session.waitForState("reading", timeout: 5)
            #expect(try await session.lector(["open", "https://example.org/a.txt"]).status == 1)

            #expect(try await session.lector(["open"]).status == 0)
            var status = try await session.waitForState("paused", timeout: 3)
            #expect(status.state == "paused", "\(status)")
            var seen = await poll(timeout: 3, { server.notifications }, until: { !$0.isEmpty })
            #expect(seen.last?.summary == "Paused" && seen.last?.body.isEmpty == false, "\(seen)")

            // What the desktop entry runs (`lector window %U`), with no display to show a window on: one line,
            // and the reading is left as it is.
            let window = try await session.lector(["window"], environment: ["DISPLAY": "", "WAYLAND_DISPLAY": ""])
            #expect(window.status == 1 && window.stderr.contains("needs a display"), "\(window)")
            #expect(try await session.status().state == "paused")
            #expect(try await session.lector(["open"]).status == 0)
            status = try await session.waitForState("reading", timeout: 3)
            #expect(status.state == "reading", "\(status)")
            seen = await poll(timeout: 3, { server.notifications }, until: { $0.count >= 2 })
            #expect(seen.count == 2 && seen.last?.summary == "Reading", "\(seen)")
            _ = try await session.lector(["stop"])
        }
    }
}
