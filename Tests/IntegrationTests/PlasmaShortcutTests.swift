import Foundation
import Testing

/// Plasma's global shortcut service, kglobalaccel (KDE Frameworks 5, `kglobalaccel5`), on a private X server
/// (Xvfb), on the session's bus, with its configuration in the session's folder.
struct KGlobalAccel {
    static let executable = "kglobalaccel5"
    static let busName = "org.kde.kglobalaccel"

    /// Whether the packages needed are installed (the test is skipped otherwise).
    static var available: Bool {
        [executable, "Xvfb", "xdotool", "xclip", "gdbus"].allSatisfy { Paths.executable($0) != nil }
    }

    /// Starts kglobalaccel5 with `environment` (DISPLAY, XDG_DATA_HOME) and waits until it owns its bus name.
    /// - Throws: `HarnessError` with its log when it does not within 10 s.
    static func start(_ session: PrivateSession, environment: [String: String]) async throws -> BackgroundProcess {
        let process = try session.spawn(executable, [], tag: "kglobalaccel-\(UUID().uuidString.prefix(4))",
                                        environment: environment.merging(["QT_QPA_PLATFORM": "xcb"]) { $1 })
        let up = await eventually(timeout: 10) { await session.nameOwner(busName) != nil || !process.isRunning }
        if !up || !process.isRunning { throw HarnessError("kglobalaccel5 did not start: \(process.stderr.suffix(1500))") }
        return process
    }

    /// Gives `component`/`action` the key with Qt key code `code` through kglobalaccel's D-Bus interface, as
    /// an application's KGlobalAccel::setGlobalShortcut does.
    static func bind(_ session: PrivateSession, component: String, action: String, componentName: String, actionName: String,
                     code: Int) async throws {
        let id = "['\(component)', '\(action)', '\(componentName)', '\(actionName)']"
        for (method, args) in [("doRegister", [id]), ("setShortcutKeys", [id, "[([\(code), 0, 0, 0],)]", "6"])] {
            let r = try await session.run("gdbus", ["call", "--session", "--dest", busName, "--object-path", "/kglobalaccel",
                                                    "--method", "org.kde.KGlobalAccel.\(method)"] + args, timeout: 10)
            if r.status != 0 { throw HarnessError("kglobalaccel \(method): \(r)") }
        }
    }
}

/// The XDG desktop portal (xdg-desktop-portal 1.16) with its KDE backend (xdg-desktop-portal-kde 5.27, which
/// implements GlobalShortcuts over kglobalaccel), started on the session's bus before anything asks for them
/// (D-Bus activation would start them without the test's display).
enum KDEPortal {
    static let frontend = "/usr/libexec/xdg-desktop-portal"
    static let backend = "/usr/lib/x86_64-linux-gnu/libexec/xdg-desktop-portal-kde"

    /// Whether both are installed (the test is skipped otherwise).
    static var available: Bool {
        KGlobalAccel.available && [frontend, backend].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Starts the backend, then the frontend, and waits until each owns its bus name.
    /// - Throws: `HarnessError` with their logs when one does not within 15 s.
    static func start(_ session: PrivateSession, environment: [String: String]) async throws -> [BackgroundProcess] {
        var started: [BackgroundProcess] = []
        for (program, name, tag) in [(backend, "org.freedesktop.impl.portal.desktop.kde", "portal-kde"),
                                     (frontend, "org.freedesktop.portal.Desktop", "portal")] {
            let process = try session.spawn(program, [], tag: tag, environment: environment.merging(["QT_QPA_PLATFORM": "xcb"]) { $1 })
            started.append(process)
            let up = await eventually(timeout: 15, every: .milliseconds(100)) { await session.nameOwner(name) != nil || !process.isRunning }
            if !up || !process.isRunning {
                for p in started.reversed() { p.stopNow(grace: 1) }
                throw HarnessError("\(program) did not take \(name): \(process.stderr.suffix(1500))")
            }
        }
        return started
    }
}

extension Integration {
    /// `lector shortcut install|remove` on Plasma, against the real kglobalaccel on Xvfb: the key pressed with
    /// xdotool reads the selection set by xclip, and what was heard is recorded.
    @Suite(.privateSession, .enabled(if: KGlobalAccel.available, "kglobalaccel5 (libkf5globalaccel-bin), Xvfb, xdotool and xclip are needed"))
    struct PlasmaShortcut {
        @Test("Plasma: install binds Meta+Alt+R in kglobalaccel; the key reads the selection, pauses it, works again after kglobalaccel restarts and reads a new selection; install again replaces the key; remove leaves no trace and the user's own shortcut")
        func installPressRemove() async throws {
            let session = try await world()
            let (x, display) = try await Selection.startX(session)
            defer { x.stopNow() }
            let data = session.directory.appendingPathComponent("data")
            let env = ["DISPLAY": display, "XDG_DATA_HOME": data.path, "XDG_CURRENT_DESKTOP": "KDE"]
            var accel = try await KGlobalAccel.start(session, environment: env)
            defer { accel.stopNow() }
            let config = URL(fileURLWithPath: session.environment["XDG_CONFIG_HOME"]!).appendingPathComponent("kglobalshortcutsrc")
            func configText() -> String { (try? String(contentsOf: config, encoding: .utf8)) ?? "" }
            let desktopFile = data.appendingPathComponent("applications/org.lector.Lector.ReadSelection.desktop")
            // The user's own shortcut, Ctrl+Alt+T (Qt::CTRL | Qt::ALT | Qt::Key_T), which Lector must leave alone.
            try await KGlobalAccel.bind(session, component: "user-terminal", action: "open",
                                      componentName: "Konsole", actionName: "Open terminal", code: 0x0C00_0054)

            let taken = try await session.lector(["shortcut", "install", "<Control><Alt>t"], environment: env)
            #expect(taken.status == 1 && taken.stderr == "lector: Ctrl+Alt+T is already the global shortcut of “Konsole: Open terminal”; choose another key: lector shortcut install KEY\n", "\(taken)")
            #expect(!FileManager.default.fileExists(atPath: desktopFile.path))

            let install = try await session.lector(["shortcut", "install"], environment: env)
            try #require(install.status == 0, "\(install)")
            let written = await eventually(timeout: 5) { configText().contains("_launch=Meta+Alt+R,none,Read selection (Lector)") }
            #expect(written, "kglobalshortcutsrc: \(configText())")
            #expect(configText().contains("[org.lector.Lector.ReadSelection.desktop]"))
            let entry = try String(contentsOf: desktopFile, encoding: .utf8)
            #expect(entry.contains("X-KDE-GlobalAccel-CommandShortcut=true") && entry.contains(" read --selection\n"), "\(entry)")

            let text = session.directory.appendingPathComponent("selected.txt")
            try String(repeating: "Words chosen with the mouse are read by one key. ", count: 6)
                .write(to: text, atomically: true, encoding: .utf8)
            let owner = try await Selection.own(session, display, "primary", text)
            defer { owner.stopNow() }
            func press() async throws {
                let r = try await session.run("xdotool", ["key", "super+alt+r"], timeout: 10, environment: env)
                if r.status != 0 { throw HarnessError("xdotool: \(r)") }
            }

            var mark = session.recorder.mark()
            try await press()
            let reading = try await poll(timeout: 10, every: .milliseconds(100), session.status, until: {
                $0.state == "reading" && $0.description.contains("Words chosen with the mouse")
            })
            #expect(reading.state == "reading", "after the key: \(reading); kglobalaccel: \(accel.stderr.suffix(800))")
            let first = await session.recorder.waitForSpeech(after: mark, timeout: 5)
            #expect(first != nil, "nothing heard after the key")
            print("Plasma shortcut (kglobalaccel runs lector read --selection): key to first sound \(secs(first))")

            // The same selection again: the key pauses.
            try await press()
            #expect(try await session.waitForState("paused", timeout: 5).state == "paused")

            // A new login: kglobalaccel starts again from its configuration and the key resumes the reading.
            accel.stopNow()
            accel = try await KGlobalAccel.start(session, environment: env)
            mark = session.recorder.mark()
            let resumed = await poll(timeout: 10, every: .milliseconds(500), {
                try? await press()
                return try? await session.waitForState("reading", timeout: 0.5)
            }, until: { $0?.state == "reading" })
            #expect(resumed?.state == "reading", "after kglobalaccel restarted: \(String(describing: resumed)); \(accel.stderr.suffix(800))")
            #expect(await session.recorder.waitForSpeech(after: mark, timeout: 5) != nil, "nothing heard after the restart")

            // A new selection: the key reads it instead.
            owner.stopNow()
            let other = session.directory.appendingPathComponent("selected-2.txt")
            try "A second selection replaces the first one.".write(to: other, atomically: true, encoding: .utf8)
            let owner2 = try await Selection.own(session, display, "primary", other)
            defer { owner2.stopNow() }
            try await press()
            let replaced = try await poll(timeout: 10, every: .milliseconds(100), session.status, until: {
                $0.state == "reading" && $0.description.contains("A second selection")
            })
            #expect(replaced.description.contains("A second selection"), "after a new selection: \(replaced)")
            _ = try await session.lector(["stop"])

            // Installed again with another key: the key is replaced, in the same group.
            let rebind = try await session.lector(["shortcut", "install", "Meta+Ctrl+F9"], environment: env)
            #expect(rebind.status == 0, "\(rebind)")
            #expect(await eventually(timeout: 5) { configText().contains("_launch=Meta+Ctrl+F9,none,Read selection (Lector)") },
                    "\(configText())")

            let remove = try await session.lector(["shortcut", "remove"], environment: env)
            #expect(remove.status == 0 && remove.stderr.isEmpty, "\(remove)")
            let gone = await eventually(timeout: 5) { !configText().contains("org.lector") && !configText().contains("Read selection") }
            #expect(gone, "kglobalshortcutsrc after remove: \(configText())")
            #expect(configText().contains("[user-terminal]") && configText().contains("open=Ctrl+Alt+T,none,Open terminal"), "\(configText())")
            #expect(!FileManager.default.fileExists(atPath: desktopFile.path))
            #expect(FileManager.default.fileExists(atPath: data.appendingPathComponent("applications").path))

            // The key does nothing now.
            _ = await session.recorder.waitForSilence(after: session.recorder.mark(), lasting: 0.2, timeout: 5)
            mark = session.recorder.mark()
            try await press()
            await session.recorder.waitForSamples(after: mark, seconds: 1.5)
            #expect(AudioAnalysis(session.recorder.samples(from: mark)).isSilent(from: 0), "heard after remove")
            #expect(try await session.status().state == "stopped")
            let again = try await session.lector(["shortcut", "remove"], environment: env)
            #expect(again.status == 0 && again.stderr.isEmpty, "\(again)")
        }

        @Test("Portal: with [daemon] portal-shortcut=true the daemon binds Read selection through the real GlobalShortcuts portal (xdg-desktop-portal with its KDE backend); the key reads the selection and pauses it",
              .enabled(if: KDEPortal.available, "xdg-desktop-portal and xdg-desktop-portal-kde are needed"))
        func portal() async throws {
            let session = try await world(.bare)
            if await session.nameOwner(Lector.busName) != nil { try await Integration.SavedReading.endDaemon(session, signal: SIGTERM) }
            let (x, display) = try await Selection.startX(session)
            defer { x.stopNow() }
            let data = session.directory.appendingPathComponent("data")
            let env = ["DISPLAY": display, "XDG_DATA_HOME": data.path, "XDG_CURRENT_DESKTOP": "KDE"]
            let accel = try await KGlobalAccel.start(session, environment: env)
            defer { accel.stopNow() }
            let portal = try await KDEPortal.start(session, environment: env)
            defer { for p in portal.reversed() { p.stopNow() } }
            let configDir = URL(fileURLWithPath: session.environment["XDG_CONFIG_HOME"]!).appendingPathComponent("lector")
            try FileManager.default.createDirectory(at: configDir, withIntermediateDirectories: true)
            let configFile = configDir.appendingPathComponent("config")
            try "[daemon]\nportal-shortcut=true\n".write(to: configFile, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: configFile) }

            let daemon = try await session.startDaemon(environment: env)
            let bound = await eventually(timeout: 10) { daemon.stderr.contains("is bound through the GlobalShortcuts portal") }
            try #require(bound, "daemon: \(daemon.stderr.suffix(1000)); portal: \(portal[1].stderr.suffix(800))")

            let text = session.directory.appendingPathComponent("portal-selected.txt")
            try String(repeating: "The portal hands the key to the daemon. ", count: 6).write(to: text, atomically: true, encoding: .utf8)
            let owner = try await Selection.own(session, display, "primary", text)
            defer { owner.stopNow() }
            let mark = session.recorder.mark()
            #expect(try await session.run("xdotool", ["key", "super+alt+r"], timeout: 10, environment: env).status == 0)
            let reading = try await poll(timeout: 10, every: .milliseconds(100), session.status, until: {
                $0.state == "reading" && $0.description.contains("The portal hands the key")
            })
            #expect(reading.state == "reading", "after the key: \(reading); daemon: \(daemon.stderr.suffix(800))")
            let first = await session.recorder.waitForSpeech(after: mark, timeout: 5)
            #expect(first != nil, "nothing heard after the key")
            print("portal shortcut (the daemon runs lector read --selection): key to first sound \(secs(first))")
            #expect(try await session.run("xdotool", ["key", "super+alt+r"], timeout: 10, environment: env).status == 0)
            #expect(try await session.waitForState("paused", timeout: 5).state == "paused")
            _ = try await session.lector(["stop"])

            // The portal's shortcut lives as long as the daemon that bound it.
            try await Integration.SavedReading.endDaemon(session, signal: SIGTERM)
            let quiet = session.recorder.mark()
            #expect(try await session.run("xdotool", ["key", "super+alt+r"], timeout: 10, environment: env).status == 0)
            await session.recorder.waitForSamples(after: quiet, seconds: 1.5)
            #expect(AudioAnalysis(session.recorder.samples(from: quiet)).isSilent(from: 0), "heard after the daemon ended")
            #expect(await session.nameOwner(Lector.busName) == nil, "a daemon was started by the key after the daemon ended")
        }
    }
}
