import Foundation
import Testing

/// A real GNOME desktop on a private X server: Xvfb, GNOME Shell (X11) and gsd-media-keys, on the session's
/// private bus and on an empty private system bus of their own (GNOME Shell needs a system bus to start).
struct GNOMEDesktop {
    /// The X display (`:N`) GNOME Shell runs on.
    let display: String
    /// The environment every process of this desktop runs with (on top of the session's).
    let environment: [String: String]
    /// Xvfb, the system bus, GNOME Shell and gsd-media-keys, in the order they started.
    let processes: [BackgroundProcess]

    /// Whether the packages needed are installed (the test is skipped otherwise).
    static var available: Bool {
        ["Xvfb", "xdotool", "gnome-shell", "dbus-daemon"].allSatisfy { Paths.executable($0) != nil }
            && FileManager.default.isExecutableFile(atPath: mediaKeys)
    }

    /// gsd-media-keys, the part of gnome-settings-daemon that turns media keys into MPRIS calls.
    static let mediaKeys = "/usr/libexec/gsd-media-keys"

    /// Starts the desktop in `session` and returns once gsd-media-keys owns its bus name and has grabbed its keys
    /// through GNOME Shell.
    /// - Throws: `HarnessError` with the logs of what did not come up within 30 s.
    static func start(_ session: PrivateSession) async throws -> GNOMEDesktop {
        var started: [BackgroundProcess] = []
        func fail(_ message: String) -> HarnessError {
            for process in started.reversed() { process.stopNow(grace: 1) }
            return HarnessError(message + "\n" + started.map { "[\($0.stderrURL.lastPathComponent)] \($0.stderr.suffix(1500))" }
                .joined(separator: "\n"))
        }
        let dir = session.directory
        let (bus, systemBus) = try session.startSystemBus()
        started.append(bus)

        let display = ":\(700 + Int(getpid() % 200))"
        started.append(try session.spawn("Xvfb", [display, "-nolisten", "tcp", "-screen", "0", "1024x768x24"], tag: "gnome-xvfb"))
        for sub in ["cache", "data"] {
            try FileManager.default.createDirectory(at: dir.appendingPathComponent(sub), withIntermediateDirectories: true)
        }
        let env = [
            "DISPLAY": display, "WAYLAND_DISPLAY": "", "DBUS_SYSTEM_BUS_ADDRESS": systemBus,
            "XDG_CACHE_HOME": dir.appendingPathComponent("cache").path, "XDG_DATA_HOME": dir.appendingPathComponent("data").path,
            "GSETTINGS_BACKEND": "memory", "XDG_SESSION_TYPE": "x11", "XDG_CURRENT_DESKTOP": "GNOME",
        ]
        let xUp = await eventually(timeout: 10) {
            (try? await session.run("xdotool", ["getmouselocation"], timeout: 5, environment: env))?.status == 0
        }
        if !xUp { throw fail("Xvfb did not start") }

        let shell = try session.spawn("gnome-shell", ["--x11", "--replace", "--sm-disable"], tag: "gnome-shell", environment: env)
        started.append(shell)
        let shellUp = await eventually(timeout: 30, every: .milliseconds(100)) {
            await session.nameOwner("org.gnome.Shell") != nil || !shell.isRunning
        }
        if !shellUp || !shell.isRunning { throw fail("GNOME Shell did not take org.gnome.Shell") }

        let keys = try session.spawn(mediaKeys, [], tag: "gsd-media-keys", environment: env)
        started.append(keys)
        let keysUp = await eventually(timeout: 20, every: .milliseconds(100)) {
            await session.nameOwner("org.gnome.SettingsDaemon.MediaKeys") != nil || !keys.isRunning
        }
        if !keysUp || !keys.isRunning { throw fail("gsd-media-keys did not take its bus name") }
        // gsd-media-keys grabs its keys through GNOME Shell (GrabAccelerators) some seconds after taking its name;
        // the reply ends with a warning for each key Xvfb's keymap lacks (XF86AudioRepeat, …), the one sign of it.
        _ = await eventually(timeout: 20, every: .milliseconds(100)) { keys.stderr.contains("Failed to grab accelerator") }
        // GNOME Shell starts in the overview; the desktop proper is where a user presses media keys.
        _ = try await session.run("gdbus", ["call", "--session", "--dest", "org.gnome.Shell", "--object-path", "/org/gnome/Shell",
                                            "--method", "org.freedesktop.DBus.Properties.Set", "org.gnome.Shell",
                                            "OverviewActive", "<false>"], timeout: 10)
        return GNOMEDesktop(display: display, environment: env, processes: started)
    }

    /// Presses and releases the key with X keycode `code` (evdev code + 8), as a keyboard would.
    func press(_ session: PrivateSession, keycode code: Int) async throws {
        let result = try await session.run("xdotool", ["key", String(code)], timeout: 10, environment: environment)
        if result.status != 0 { throw HarnessError("xdotool key \(code) failed: \(result)") }
    }

    /// Ends every process of the desktop, the last started first.
    func stop() {
        for process in processes.reversed() { process.stopNow(grace: 2) }
    }
}

/// X keycodes of the media keys on Xvfb's evdev keymap (evdev code + 8); by name, xdotool may press them at the
/// Shift level.
enum MediaKey {
    static let play = 172, pause = 209, next = 171, previous = 173, stop = 174
}

extension Integration {
    /// Lector driven by a real desktop's media keys: GNOME Shell and gsd-media-keys on Xvfb, key events sent to
    /// the X server, the player's state read on the bus and what was heard recorded.
    @Suite(.privateSession, .enabled(if: GNOMEDesktop.available,
                                     "gnome-shell, gnome-settings-daemon (gsd-media-keys), Xvfb and xdotool are not installed"))
    struct DesktopClients {
        @Test("GNOME: the Pause, Play, Next, Previous and Stop keys, through GNOME Shell and gsd-media-keys, drive the reading")
        func gnomeMediaKeys() async throws {
            let session = try await world(.mprisQuiet)
            let desktop = try await GNOMEDesktop.start(session)
            defer { desktop.stop() }
            let bus = try session.bus()
            let recorder = session.recorder

            // One long sentence, then four short ones.
            var mark = recorder.mark()
            let read = try await session.lector(["read", "--lang", "en", Lector.longRun + ". " + Lector.sentences])
            try #require(read.status == 0, "\(read)")
            try #require(await recorder.waitForSpeech(after: mark, timeout: 3) != nil, "no speech")
            try #require(await bus.waitForStatus("Playing") == "Playing")

            // Pause never toggles, so pressing it until it is heard of waits out a grab still under way.
            let pausedStatus = await poll(timeout: 15, every: .milliseconds(500), {
                try? await desktop.press(session, keycode: MediaKey.pause)
                return await bus.waitForStatus("Paused", timeout: 0.5)
            }, until: { $0 == "Paused" })
            try #require(pausedStatus == "Paused", "Pause key: \(desktop.processes.last?.stderr.suffix(800) ?? "")")
            mark = recorder.mark()
            await recorder.waitForSamples(after: mark, seconds: 0.8)
            let paused = AudioAnalysis(recorder.samples(from: mark))
            #expect(paused.isSilent(from: 0.2), "speech after the Pause key: \(paused.summary)")

            mark = recorder.mark()
            try await desktop.press(session, keycode: MediaKey.play)
            #expect(await bus.waitForStatus("Playing", timeout: 5) == "Playing", "Play key")
            let resumed = await recorder.waitForSpeech(after: mark, timeout: 3)
            #expect(resumed != nil, "no speech after the Play key")
            #expect(bus.metadata["xesam:title"]?.string?.hasPrefix("this long sentence") == true)

            mark = recorder.mark()
            try await desktop.press(session, keycode: MediaKey.next)
            let title = await poll(timeout: 5, { bus.metadata["xesam:title"]?.string }, until: { $0 == fourSentences[0] })
            #expect(title == fourSentences[0], "Next key: \(title ?? "none")")
            #expect(bus.status == "Playing")
            #expect(await recorder.waitForSpeech(after: mark, timeout: 3) != nil, "no speech after the Next key")

            try await desktop.press(session, keycode: MediaKey.previous)
            let back = await poll(timeout: 5, { bus.metadata["xesam:title"]?.string }, until: { $0?.hasPrefix("this long sentence") == true })
            #expect(back?.hasPrefix("this long sentence") == true, "Previous key: \(back ?? "none")")

            try await desktop.press(session, keycode: MediaKey.stop)
            #expect(await bus.waitForStatus("Stopped", timeout: 5) == "Stopped", "Stop key")
            mark = recorder.mark()
            await recorder.waitForSamples(after: mark, seconds: 0.6)
            let stopped = AudioAnalysis(recorder.samples(from: mark))
            #expect(stopped.isSilent(from: 0.2), "speech after the Stop key: \(stopped.summary)")
        }
    }
}
