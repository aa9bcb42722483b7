import Foundation
import Testing

extension Integration {
    /// `meson setup` + `meson install` into a staging folder (DESTDIR): every file where the freedesktop tools,
    /// D-Bus and systemd look for it, a desktop entry that `desktop-file-validate` accepts, and the installed
    /// `lector` working as an MPRIS2 player that names that entry and its installed icon.
    ///
    /// To keep the run short, meson installs the `lector` these tests run (`-Dprebuilt_lector=`) instead of
    /// building a release one; `meson.build`'s own build path is `swift build`, which the package build covers.
    @Suite(.privateSession, .enabled(if: Paths.executable("meson") != nil && Paths.executable("ninja") != nil))
    struct Installation {
        @Test("meson install puts the binary and data/ in the standard places; desktop-file-validate passes; the installed daemon finds its icon")
        func mesonInstall() async throws {
            let session = try await world(.bare)
            let root = session.directory.appendingPathComponent("meson")
            let build = root.appendingPathComponent("build").path
            let dest = root.appendingPathComponent("dest").path
            let setup = try await session.run(
                "meson", ["setup", "--prefix=/usr", "-Dprebuilt_lector=\(Paths.lectorBinary)", build, Paths.packageRoot.path],
                timeout: 120)
            try #require(setup.status == 0, "\(setup)")
            let install = try await session.run(
                "meson", ["install", "-C", build, "--destdir", dest], timeout: 120)
            try #require(install.status == 0, "\(install)")

            let usr = dest + "/usr"
            let expected = [
                "bin/lector",
                "libexec/lector/lector-daemon",
                "libexec/lector/lector-window",
                "libexec/lector/lector-document",
                "libexec/lector/lector-document-pdf",
                "libexec/lector/lector-selection",
                "share/dbus-1/services/org.lector.Lector.Window.service",
                "libexec/lector/lector-piper-worker",
                "lib/speech-dispatcher-modules/sd_lector",
                "share/applications/org.lector.Lector.desktop",
                "share/dbus-1/services/org.lector.Lector.service",
                "share/dbus-1/interfaces/org.lector.Lector1.xml",
                "share/dbus-1/interfaces/org.mpris.MediaPlayer2.xml",
                "share/icons/hicolor/scalable/apps/org.lector.Lector.svg",
                "share/man/man1/lector.1",
                "share/metainfo/org.lector.Lector.metainfo.xml",
                "share/lector/samples/en.txt",
                "share/lector/samples/de.txt",
            ]
            let fm = FileManager.default
            for path in expected {
                #expect(fm.fileExists(atPath: "\(usr)/\(path)"), "not installed: /usr/\(path)")
            }
            #expect(fm.isExecutableFile(atPath: "\(usr)/bin/lector") && fm.isExecutableFile(atPath: "\(usr)/libexec/lector/lector-daemon")
                    && fm.isExecutableFile(atPath: "\(usr)/libexec/lector/lector-document")
                    && fm.isExecutableFile(atPath: "\(usr)/libexec/lector/lector-document-pdf")
                    && fm.isExecutableFile(atPath: "\(usr)/libexec/lector/lector-selection")
                    && fm.isExecutableFile(atPath: "\(usr)/libexec/lector/lector-piper-worker"))
            let units = ["lib/systemd/user/lector.service", "share/systemd/user/lector.service"].filter { fm.fileExists(atPath: "\(usr)/\($0)") }
            #expect(units.count == 1, "the systemd user unit: \(units)")
            // Nothing else: every installed file is one of those.
            let installed = (fm.enumerator(atPath: dest)?.allObjects as? [String] ?? [])
                .filter { !isDirectory("\(dest)/\($0)") }
            // The Speech Dispatcher module's configuration, in SYSCONFDIR (/etc for the /usr prefix).
            #expect(fm.fileExists(atPath: "\(dest)/etc/speech-dispatcher/modules/lector.conf"), "not installed: lector.conf")
            #expect(installed.count == expected.count + 2, "installed: \(installed.sorted())")

            let validate = try await session.run("desktop-file-validate", ["\(usr)/share/applications/org.lector.Lector.desktop"])
            #expect(validate.status == 0 && validate.stdout.isEmpty && validate.stderr.isEmpty, "\(validate)")
            let service = try String(contentsOfFile: "\(usr)/share/dbus-1/services/org.lector.Lector.service", encoding: .utf8)
            #expect(service.contains("Name=org.lector.Lector\n") && service.contains("Exec=/usr/bin/lector daemon\n"), "\(service)")
            if let unit = units.first {
                let text = try String(contentsOfFile: "\(usr)/\(unit)", encoding: .utf8)
                #expect(text.contains("ExecStart=/usr/bin/lector daemon") && text.contains("BusName=org.lector.Lector"), "\(text)")
            }

            // One version: the installed lector prints it, and the metainfo's release, the manual page and the
            // README's package name say the same.
            let printed = try await session.run("\(usr)/bin/lector", ["--version"])
            let version = printed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                .replacingOccurrences(of: "lector ", with: "")
            #expect(printed.status == 0 && !version.isEmpty && !version.contains(" "), "\(printed)")
            let metainfo = try String(contentsOfFile: "\(usr)/share/metainfo/org.lector.Lector.metainfo.xml", encoding: .utf8)
            #expect(metainfo.contains("<release version=\"\(version)\""), "the metainfo's release is not \(version)")
            let manual = try String(contentsOfFile: "\(usr)/share/man/man1/lector.1", encoding: .utf8)
            #expect(manual.contains("\"Lector \(version)\""), "the manual page is not of \(version)")
            let readme = try String(contentsOf: Paths.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
            #expect(readme.contains("lector_\(version)_amd64.deb"), "the README does not install lector_\(version)_amd64.deb")

            // The installed daemon: its DesktopEntry is the installed entry's name, its art the installed icon.
            let daemon = try session.spawn("\(usr)/bin/lector", ["daemon", "--instance"], tag: "installed")
            defer { Task { await daemon.stop() } }
            let name = "org.mpris.MediaPlayer2.lector.instance\(daemon.pid)"
            var owned = false
            _ = await eventually(timeout: 10, every: .milliseconds(20)) {
                owned = await session.nameOwner(name) != nil
                return owned || !daemon.isRunning
            }
            try #require(owned, "\(daemon.stderr)")
            let bus = try session.bus(name)
            let entry = try bus.get("DesktopEntry", interface: MPRIS.root).string ?? ""
            #expect(fm.fileExists(atPath: "\(usr)/share/applications/\(entry).desktop"), "DesktopEntry \(entry)")
            let sample = URL(fileURLWithPath: "\(usr)/share/lector/samples/en.txt")
            try bus.player("OpenUri", [.string(sample.absoluteString)])
            let art = bus.metadata["mpris:artUrl"]?.string
            #expect(art == URL(fileURLWithPath: "\(usr)/share/icons/hicolor/scalable/apps/org.lector.Lector.svg").absoluteString, "\(art ?? "none")")
            try bus.call(interface: MPRIS.root, "Quit")
            #expect(await daemon.waitForExit(timeout: 5) == 0)
        }
    }
}

private func isDirectory(_ path: String) -> Bool {
    var directory: ObjCBool = false
    return FileManager.default.fileExists(atPath: path, isDirectory: &directory) && directory.boolValue
}
