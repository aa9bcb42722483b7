import Foundation
import Testing

extension Integration {
    /// `lector read --selection` / `--clipboard` on X11 (a real X server, Xvfb, the selection set by xclip) and on
    /// Wayland (sway headless, set by wl-copy), what was heard recorded. `lector` runs with a PATH that has
    /// neither xclip nor wl-paste, so that what it reads comes from its own reader (`lector-selection`).
    @Suite(.privateSession)
    struct Selection {
        /// A PATH without the clipboard tools (nothing at all).
        static let noTools = ["PATH": "/nonexistent"]

        /// Starts Xvfb on a free display of this session; returns it and its DISPLAY.
        static func startX(_ session: PrivateSession) async throws -> (BackgroundProcess, String) {
            let display = ":\(200 + Int(getpid() % 500))"
            let x = try session.spawn("Xvfb", [display, "-nolisten", "tcp"], tag: "xvfb")
            let up = await eventually(timeout: 10) {
                (try? await session.run("xclip", ["-out", "-selection", "primary"], timeout: 5,
                                        environment: ["DISPLAY": display]))?.stderr.contains("Can't open display") == false
            }
            if !up { throw HarnessError("Xvfb did not start: \(x.stderr)") }
            return (x, display)
        }

        /// Sets `selection` to `file`'s content as `type`, by xclip (which stays as its owner).
        static func own(_ session: PrivateSession, _ display: String, _ selection: String, _ file: URL,
                        type: String = "UTF8_STRING") async throws -> BackgroundProcess {
            // -verbose runs in the foreground, like -quiet, and says when the file is read and the selection taken.
            let owner = try session.spawn("xclip", ["-verbose", "-selection", selection, "-target", type, "-in", file.path],
                                          tag: "xclip-\(selection)-\(file.lastPathComponent)", environment: ["DISPLAY": display])
            _ = await eventually(timeout: 10, every: .milliseconds(20)) {
                owner.stderr.contains("Waiting for selection requests") || !owner.isRunning
            }
            return owner
        }

        @Test("X11 (own client, no xclip on PATH): --clipboard and --selection read what a real client set; empty, image-only and 100 MB (INCR) are one line each")
        func x11() async throws {
            try #require(Paths.executable("Xvfb") != nil && Paths.executable("xclip") != nil, "Xvfb and xclip are needed")
            let session = try await world()
            let (x, display) = try await Self.startX(session)
            defer { x.stopNow() }
            let env = ["DISPLAY": display, "WAYLAND_DISPLAY": ""].merging(Self.noTools) { $1 }

            let empty = try await session.lector(["read", "--selection"], environment: env)
            #expect(empty.status == 1 && empty.stderr == "lector: the selection is empty\n", "\(empty)")

            let text = session.directory.appendingPathComponent("clip.txt")
            try "Text from the clipboard, read aloud.".write(to: text, atomically: true, encoding: .utf8)
            let owner = try await Self.own(session, display, "clipboard", text)
            defer { owner.stopNow() }
            let start = session.recorder.mark()
            let read = try await session.lector(["read", "--clipboard", "--wait"], timeout: 30, environment: env)
            #expect(read.status == 0, "\(read)")
            let heard = AudioAnalysis(session.recorder.samples(from: start))
            #expect(heard.speechWindowSeconds > 1, "\(heard.summary)")
            let status = try await session.status()
            #expect(status.description.contains("Text from the clipboard"), "\(status)")

            let primaryText = session.directory.appendingPathComponent("primary.txt")
            try String(repeating: "Selected words are read. ", count: 8).write(to: primaryText, atomically: true, encoding: .utf8)
            let primary = try await Self.own(session, display, "primary", primaryText)
            defer { primary.stopNow() }
            let selected = try await session.lector(["read", "--selection"], timeout: 30, environment: env)
            #expect(selected.status == 0, "\(selected)")
            #expect(await eventually(timeout: 5) { (try? await session.status().fields["state"]) == "reading" })
            #expect(try await session.status().description.contains("Selected words are read."))
            // The same selection again (the one key pressed twice): pause, then resume.
            _ = try await session.lector(["read", "--selection"], environment: env)
            #expect(try await session.status().fields["state"] == "paused")
            _ = try await session.lector(["read", "--selection"], environment: env)
            #expect(try await session.status().fields["state"] == "reading")
            _ = try await session.lector(["stop"])

            // A clipboard holding only an image.
            let png = session.directory.appendingPathComponent("pixel.png")
            try Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC")!.write(to: png)
            owner.stopNow()
            let image = try await Self.own(session, display, "clipboard", png, type: "image/png")
            defer { image.stopNow() }
            let noText = try await session.lector(["read", "--clipboard"], environment: env)
            #expect(noText.status == 1 && noText.stderr == "lector: the clipboard holds no text (it holds image/png)\n", "\(noText)")

            // 100 MB (xclip hands more than about 1 MiB over incrementally, INCR): refused in one line at 32 MiB,
            // and the daemon still answers.
            let big = session.directory.appendingPathComponent("big.txt")
            _ = FileManager.default.createFile(atPath: big.path, contents: Data(repeating: 0x61, count: 100 << 20))
            primary.stopNow()
            let huge = try await Self.own(session, display, "primary", big)
            defer { huge.stopNow() }
            let tooBig = try await session.lector(["read", "--selection"], timeout: 60, environment: env)
            #expect(tooBig.status == 1 && tooBig.stderr == "lector: the selection holds more than 32 MiB of text; Lector reads at most 32 MiB\n", "\(tooBig)")
            #expect(try await session.status().exitStatus == 0)
            try? FileManager.default.removeItem(at: big)
        }

        @Test("X11 (own client): 3 MB handed over incrementally (INCR) arrive whole; STRING alone is Latin-1; an owner that never answers is one line after 5 s")
        func x11Transfers() async throws {
            try #require(Paths.executable("Xvfb") != nil && Paths.executable("xclip") != nil, "Xvfb and xclip are needed")
            let session = try await world()
            let (x, display) = try await Self.startX(session)
            defer { x.stopNow() }
            let env = ["DISPLAY": display, "WAYLAND_DISPLAY": ""].merging(Self.noTools) { $1 }
            let bus = try BusConnection(address: session.busAddress)

            // 3 MB: more than xclip sends at once, so it is handed over in chunks; the last word arrives.
            let big = session.directory.appendingPathComponent("three-mb.txt")
            let words = String(repeating: "Many words are selected here. ", count: 100_000) + "Last."
            try words.write(to: big, atomically: true, encoding: .utf8)
            let owner = try await Self.own(session, display, "primary", big)
            defer { owner.stopNow() }
            let read = try await session.lector(["read", "--selection"], timeout: 60, environment: env)
            #expect(read.status == 0, "\(read)")
            let held = bus.lectorText ?? ""
            #expect(held.utf8.count == words.utf8.count && held.hasSuffix("Last."), "\(held.utf8.count) bytes held")
            _ = try await session.lector(["stop"])

            // An owner that offers STRING only (ISO 8859-1).
            let latin1 = session.directory.appendingPathComponent("latin1.txt")
            try Data("Grüße aus Köln.".unicodeScalars.map { UInt8($0.value) }).write(to: latin1)
            let stringOwner = try await Self.own(session, display, "clipboard", latin1, type: "STRING")
            defer { stringOwner.stopNow() }
            let readLatin1 = try await session.lector(["read", "--clipboard"], environment: env)
            #expect(readLatin1.status == 0, "\(readLatin1)")
            #expect(bus.lectorText == "Grüße aus Köln.", "\(bus.lectorText ?? "nil")")
            _ = try await session.lector(["stop"])

            // An owner that never answers (stopped): one line after 5 s.
            kill(stringOwner.pid, SIGSTOP)
            defer { kill(stringOwner.pid, SIGCONT) }
            let started = Date()
            let silent = try await session.lector(["read", "--clipboard"], timeout: 30, environment: env)
            let waited = Date().timeIntervalSince(started)
            #expect(silent.status == 1 && silent.stderr == "lector: the program that owns the clipboard did not hand it over within 5 s\n", "\(silent)")
            #expect(waited >= 5 && waited < 15, "\(waited) s")
            #expect(try await session.status().exitStatus == 0)
        }

        /// Starts sway headless (a wlroots compositor: it offers wlr-data-control) as `nobody` (sway refuses to
        /// run as root) with its own runtime folder; returns it and the absolute WAYLAND_DISPLAY of its socket.
        static func startSway(_ session: PrivateSession) async throws -> (BackgroundProcess, String, URL) {
            // Outside the session folder, which `nobody` cannot enter; removed by the caller.
            let runtime = try Paths.makeTemporaryDirectory(prefix: "lector-sway")
            _ = try await session.run("chown", ["nobody:nogroup", runtime.path])
            _ = try await session.run("chmod", ["700", runtime.path])
            let config = runtime.appendingPathComponent("sway.conf")
            try "output HEADLESS-1 resolution 640x480\n".write(to: config, atomically: true, encoding: .utf8)
            let sway = try session.spawn("setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "sway", "-c", config.path],
                                         tag: "sway", environment: ["XDG_RUNTIME_DIR": runtime.path, "HOME": runtime.path,
                                                                    "WLR_BACKENDS": "headless", "WLR_LIBINPUT_NO_DEVICES": "1",
                                                                    "WLR_RENDERER": "pixman", "WAYLAND_DISPLAY": ""])
            var socket: String?
            _ = await eventually(timeout: 10) {
                socket = (try? FileManager.default.contentsOfDirectory(atPath: runtime.path))?
                    .first { $0.hasPrefix("wayland-") && !$0.hasSuffix(".lock") }
                return socket != nil || !sway.isRunning
            }
            guard let socket else { throw HarnessError("sway did not start: \(sway.stderr)") }
            return (sway, runtime.appendingPathComponent(socket).path, runtime)
        }

        @Test("Wayland (sway headless, own wlr-data-control client, no wl-paste on PATH): the clipboard and the primary selection that wl-copy set; empty, image-only and an owner that never writes are one line")
        func wayland() async throws {
            try #require(Paths.executable("sway") != nil && Paths.executable("wl-copy") != nil && Paths.executable("setpriv") != nil,
                         "sway, wl-clipboard and setpriv are needed")
            let session = try await world()
            let (sway, display, runtime) = try await Self.startSway(session)
            defer {
                sway.stopNow()
                try? FileManager.default.removeItem(at: runtime)
            }
            let env = ["WAYLAND_DISPLAY": display, "DISPLAY": ""]
            let lectorEnv = env.merging(Self.noTools) { $1 }
            let empty = try await session.lector(["read", "--selection"], environment: lectorEnv)
            #expect(empty.status == 1 && empty.stderr == "lector: the selection is empty\n", "\(empty)")
            let copy = try session.spawn("wl-copy", ["--foreground", "Words copied on Wayland."], tag: "wl-copy", environment: env)
            defer { copy.stopNow() }
            #expect(await eventually(timeout: 5) {
                (try? await session.run("wl-paste", ["--list-types"], timeout: 5, environment: env))?.status == 0
            })
            let start = session.recorder.mark()
            let read = try await session.lector(["read", "--clipboard", "--wait"], timeout: 30, environment: lectorEnv)
            #expect(read.status == 0, "\(read)")
            let heard = AudioAnalysis(session.recorder.samples(from: start))
            #expect(heard.speechWindowSeconds > 0.8, "\(heard.summary)")
            #expect(try await session.status().description.contains("Words copied on Wayland."))

            // The primary selection (data-control version 2).
            let primary = try session.spawn("wl-copy", ["--primary", "--foreground", "Words selected on Wayland."], tag: "wl-copy-primary", environment: env)
            defer { primary.stopNow() }
            #expect(await eventually(timeout: 5) {
                (try? await session.run("wl-paste", ["--primary", "--list-types"], timeout: 5, environment: env))?.status == 0
            })
            let selected = try await session.lector(["read", "--selection"], environment: lectorEnv)
            #expect(selected.status == 0, "\(selected)")
            let bus = try BusConnection(address: session.busAddress)
            #expect(bus.lectorText == "Words selected on Wayland.", "\(bus.lectorText ?? "nil")")
            _ = try await session.lector(["stop"])

            // A clipboard holding only an image.
            copy.stopNow()
            let png = session.directory.appendingPathComponent("pixel.png")
            try Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC")!.write(to: png)
            let image = try session.spawn("sh", ["-c", "exec wl-copy --foreground --type image/png < '\(png.path)'"], tag: "wl-copy-image", environment: env)
            defer { image.stopNow() }
            #expect(await eventually(timeout: 5) {
                (try? await session.run("wl-paste", ["--list-types"], timeout: 5, environment: env))?.stdout.contains("image/png") == true
            })
            let noText = try await session.lector(["read", "--clipboard"], environment: lectorEnv)
            #expect(noText.status == 1 && noText.stderr == "lector: the clipboard holds no text (it holds image/png)\n", "\(noText)")

            // An owner that never writes into the pipe (stopped): one line after 5 s.
            image.stopNow()
            let silent = try session.spawn("wl-copy", ["--foreground", "Never handed over."], tag: "wl-copy-silent", environment: env)
            defer { silent.stopNow() }
            #expect(await eventually(timeout: 5) {
                (try? await session.run("wl-paste", ["--list-types"], timeout: 5, environment: env))?.stdout.contains("text/plain") == true
            })
            kill(silent.pid, SIGSTOP)
            defer { kill(silent.pid, SIGCONT) }
            let late = try await session.lector(["read", "--clipboard"], timeout: 30, environment: lectorEnv)
            #expect(late.status == 1 && late.stderr == "lector: the program that owns the clipboard did not hand it over within 5 s\n", "\(late)")
        }

        @Test("KWin (Plasma's compositor, virtual backend): --clipboard reads what wl-copy set, through Lector's own data-control client; no primary selection is one line")
        func kwin() async throws {
            try #require(Paths.executable("kwin_wayland") != nil && Paths.executable("wl-copy") != nil, "kwin-wayland and wl-clipboard are needed")
            let session = try await world()
            let runtime = try Paths.makeTemporaryDirectory(prefix: "lector-kwin")
            defer { try? FileManager.default.removeItem(at: runtime) }
            // A copy without the file capability (cap_sys_resource) that a container's bounding set may refuse at exec.
            let kwinCopy = runtime.appendingPathComponent("kwin_wayland")
            try FileManager.default.copyItem(atPath: Paths.executable("kwin_wayland")!, toPath: kwinCopy.path)
            let kwin = try session.spawn(kwinCopy.path, ["--virtual", "--no-lockscreen", "--no-global-shortcuts", "--no-kactivities", "--socket", "lector-kwin"],
                                         tag: "kwin", environment: ["XDG_RUNTIME_DIR": runtime.path, "HOME": runtime.path, "DISPLAY": "", "WAYLAND_DISPLAY": "",
                                                                    "XDG_CONFIG_HOME": runtime.appendingPathComponent("config").path])
            defer { kwin.stopNow(grace: 2) }
            let socket = runtime.appendingPathComponent("lector-kwin").path
            let up = await eventually(timeout: 20, every: .milliseconds(100)) { FileManager.default.fileExists(atPath: socket) || !kwin.isRunning }
            try #require(up && kwin.isRunning, "KWin did not start: \(kwin.stderr.suffix(2000))")
            let env = ["WAYLAND_DISPLAY": socket, "DISPLAY": ""]
            let copy = try session.spawn("wl-copy", ["--foreground", "Words copied under KWin."], tag: "wl-copy-kwin", environment: env)
            defer { copy.stopNow() }
            #expect(await eventually(timeout: 10) {
                (try? await session.run("wl-paste", ["--list-types"], timeout: 5, environment: env))?.stdout.contains("text/plain") == true
            })
            let read = try await session.lector(["read", "--clipboard"], environment: env.merging(Self.noTools) { $1 })
            #expect(read.status == 0, "\(read)")
            let bus = try BusConnection(address: session.busAddress)
            #expect(bus.lectorText == "Words copied under KWin.", "\(bus.lectorText ?? "nil")")
            _ = try await session.lector(["stop"])
            // KWin 5.27 does not hand the primary selection to data-control clients (wl-copy --primary says so too).
            let primary = try await session.lector(["read", "--selection"], environment: env.merging(Self.noTools) { $1 })
            #expect(primary.status == 1 && primary.stderr == "lector: cannot read the selection: this compositor does not hand the primary "
                + "selection to other programs; use --clipboard\n", "\(primary)")
        }

        /// GNOME Shell as a headless Wayland compositor (Mutter: no data-control) with XWayland, on an empty
        /// private system bus; returns it, the system bus, its runtime folder, the absolute WAYLAND_DISPLAY,
        /// XWayland's DISPLAY and its XAUTHORITY.
        static func startGNOMEWayland(_ session: PrivateSession) async throws
            -> (processes: [BackgroundProcess], runtime: URL, wayland: String, display: String, xauthority: String) {
            let dir = session.directory
            let (bus, systemBus) = try session.startSystemBus()
            let runtime = try Paths.makeTemporaryDirectory(prefix: "lector-gnome")
            for sub in ["cache", "data"] {
                try FileManager.default.createDirectory(at: dir.appendingPathComponent(sub), withIntermediateDirectories: true)
            }
            let shell = try session.spawn("gnome-shell", ["--headless", "--wayland", "--virtual-monitor", "640x480", "--wayland-display", "lector-wl"],
                                          tag: "gnome-shell-wayland", environment: [
                                              "XDG_RUNTIME_DIR": runtime.path, "DBUS_SYSTEM_BUS_ADDRESS": systemBus,
                                              "XDG_CACHE_HOME": dir.appendingPathComponent("cache").path,
                                              "XDG_DATA_HOME": dir.appendingPathComponent("data").path, "GSETTINGS_BACKEND": "memory",
                                              "XDG_CURRENT_DESKTOP": "GNOME", "DISPLAY": "", "WAYLAND_DISPLAY": ""])
            var display: String?, xauthority: String?
            _ = await eventually(timeout: 30, every: .milliseconds(100)) {
                display = shell.stderr.components(separatedBy: "Using public X11 display ").dropFirst().first?
                    .split(whereSeparator: { $0 == "," || $0.isWhitespace }).first.map(String.init)
                xauthority = (try? FileManager.default.contentsOfDirectory(atPath: runtime.path))?
                    .first { $0.hasPrefix(".mutter-Xwaylandauth.") }.map { runtime.appendingPathComponent($0).path }
                return (display != nil && xauthority != nil) || !shell.isRunning
            }
            guard let display, let xauthority, shell.isRunning else {
                shell.stopNow(); bus.stopNow()
                throw HarnessError("GNOME Shell (Wayland, headless) did not start: \(shell.stderr.suffix(2000))")
            }
            return ([shell, bus], runtime, runtime.appendingPathComponent("lector-wl").path, display, xauthority)
        }

        @Test("GNOME Shell on Wayland (headless Mutter 43, no data-control): one line that says what to do; with XWayland's DISPLAY the clipboard is read through XWayland")
        func gnomeWayland() async throws {
            try #require(["gnome-shell", "dbus-daemon", "Xwayland", "xclip"].allSatisfy { Paths.executable($0) != nil },
                         "gnome-shell, dbus-daemon, xwayland and xclip are needed")
            let session = try await world()
            let gnome = try await Self.startGNOMEWayland(session)
            defer {
                for process in gnome.processes { process.stopNow(grace: 2) }
                try? FileManager.default.removeItem(at: gnome.runtime)
            }
            let waylandOnly = ["WAYLAND_DISPLAY": gnome.wayland, "DISPLAY": ""].merging(Self.noTools) { $1 }
            let refused = try await session.lector(["read", "--clipboard"], environment: waylandOnly)
            #expect(refused.status == 1 && refused.stderr == "lector: cannot read the clipboard: this Wayland compositor lets only the focused window "
                + "read it (no data-control protocol, as on GNOME); run Lector where XWayland's DISPLAY is set, or paste into the reader window "
                + "(lector window, Ctrl+V)\n", "\(refused)")
            // With wl-paste on PATH it is tried as the fallback; it cannot read either here (no keyboard to focus
            // its window), and the line stays the one that says what to do.
            let fallback = try await session.lector(["read", "--clipboard"], environment: ["WAYLAND_DISPLAY": gnome.wayland, "DISPLAY": ""])
            #expect(fallback.status == 1 && fallback.stderr == refused.stderr, "\(fallback)")

            let x = ["DISPLAY": gnome.display, "XAUTHORITY": gnome.xauthority]
            let text = session.directory.appendingPathComponent("gnome.txt")
            try "Copied on GNOME, read through XWayland.".write(to: text, atomically: true, encoding: .utf8)
            let owner = try session.spawn("xclip", ["-quiet", "-selection", "clipboard", "-in", text.path], tag: "xclip-gnome", environment: x)
            defer { owner.stopNow() }
            #expect(await eventually(timeout: 10) {
                (try? await session.run("xclip", ["-out", "-selection", "clipboard"], timeout: 5, environment: x))?.stdout.hasPrefix("Copied") == true
            })
            let read = try await session.lector(["read", "--clipboard"], environment: waylandOnly.merging(x) { $1 })
            #expect(read.status == 0, "\(read)")
            let bus = try BusConnection(address: session.busAddress)
            #expect(bus.lectorText == "Copied on GNOME, read through XWayland.", "\(bus.lectorText ?? "nil")")
            _ = try await session.lector(["stop"])
        }
    }
}

extension Integration.Selection {
    @Test("X11 (own client): an owner that hands 30 MB over incrementally but trickles it (each chunk in time) is one line after 10 s")
    func x11Trickle() async throws {
        try #require(Paths.executable("Xvfb") != nil && Paths.executable("xclip") != nil, "Xvfb and xclip are needed")
        let session = try await world()
        let (x, display) = try await Self.startX(session)
        defer { x.stopNow() }
        let env = ["DISPLAY": display, "WAYLAND_DISPLAY": ""].merging(Self.noTools) { $1 }
        let big = session.directory.appendingPathComponent("trickled.txt")
        try String(repeating: "Many words are selected here. ", count: 1_000_000).write(to: big, atomically: true, encoding: .utf8)
        let owner = try await Self.own(session, display, "primary", big)
        defer { owner.stopNow() }
        // xclip stopped for 1 s of every 1.002 s: each chunk comes well within 5 s, the whole in minutes.
        let trickle = Task {
            while !Task.isCancelled {
                kill(owner.pid, SIGSTOP)
                try? await Task.sleep(for: .milliseconds(1_000))
                kill(owner.pid, SIGCONT)
                try? await Task.sleep(for: .milliseconds(2))
            }
        }
        let started = ContinuousClock.now
        let read = try await session.lector(["read", "--selection"], timeout: 60, environment: env)
        let waited = ContinuousClock.now - started
        trickle.cancel()
        _ = await trickle.value
        kill(owner.pid, SIGCONT)
        print("a trickling INCR owner: cut off after \(waited)")
        #expect(read.status == 1 && read.stderr == "lector: the program that owns the selection took more than 10 s to hand it over\n", "\(read)")
        #expect(waited >= .seconds(10) && waited < .seconds(16), "\(waited)")
        #expect(try await session.status().exitStatus == 0)
    }
}
