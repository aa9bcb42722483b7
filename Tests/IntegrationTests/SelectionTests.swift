import Foundation
import Testing

extension Integration {
    /// `lector read --selection` / `--clipboard` on X11 (a real X server, Xvfb, the selection set by xclip) and on
    /// Wayland (sway headless, set by wl-copy), what was heard recorded.
    @Suite(.privateSession)
    struct Selection {
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
                        type: String = "UTF8_STRING") throws -> BackgroundProcess {
            try session.spawn("xclip", ["-quiet", "-selection", selection, "-target", type, "-in", file.path],
                              tag: "xclip-\(selection)", environment: ["DISPLAY": display])
        }

        @Test("X11: --clipboard and --selection read what a real client set; empty, image-only and 100 MB are one line each")
        func x11() async throws {
            try #require(Paths.executable("Xvfb") != nil && Paths.executable("xclip") != nil, "Xvfb and xclip are needed")
            let session = try await world()
            let (x, display) = try await Self.startX(session)
            defer { x.stopNow() }
            let env = ["DISPLAY": display, "WAYLAND_DISPLAY": ""]

            let empty = try await session.lector(["read", "--selection"], environment: env)
            #expect(empty.status == 1 && empty.stderr == "lector: the selection is empty\n", "\(empty)")

            let text = session.directory.appendingPathComponent("clip.txt")
            try "Text from the clipboard, read aloud.".write(to: text, atomically: true, encoding: .utf8)
            let owner = try Self.own(session, display, "clipboard", text)
            defer { owner.stopNow() }
            try await Task.sleep(for: .milliseconds(300))
            let start = session.recorder.mark()
            let read = try await session.lector(["read", "--clipboard", "--wait"], timeout: 30, environment: env)
            #expect(read.status == 0, "\(read)")
            let heard = AudioAnalysis(session.recorder.samples(from: start))
            #expect(heard.speechWindowSeconds > 1, "\(heard.summary)")
            let status = try await session.status()
            #expect(status.description.contains("Text from the clipboard"), "\(status)")

            let primaryText = session.directory.appendingPathComponent("primary.txt")
            try String(repeating: "Selected words are read. ", count: 8).write(to: primaryText, atomically: true, encoding: .utf8)
            let primary = try Self.own(session, display, "primary", primaryText)
            defer { primary.stopNow() }
            try await Task.sleep(for: .milliseconds(300))
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
            let image = try Self.own(session, display, "clipboard", png, type: "image/png")
            defer { image.stopNow() }
            try await Task.sleep(for: .milliseconds(300))
            let noText = try await session.lector(["read", "--clipboard"], environment: env)
            #expect(noText.status == 1 && noText.stderr == "lector: the clipboard holds no text (it holds image/png)\n", "\(noText)")

            // 100 MB: refused in one line, and the daemon still answers.
            let big = session.directory.appendingPathComponent("big.txt")
            _ = FileManager.default.createFile(atPath: big.path, contents: Data(repeating: 0x61, count: 100 << 20))
            primary.stopNow()
            let huge = try Self.own(session, display, "primary", big)
            defer { huge.stopNow() }
            try await Task.sleep(for: .milliseconds(500))
            let tooBig = try await session.lector(["read", "--selection"], timeout: 60, environment: env)
            #expect(tooBig.status == 1 && tooBig.stderr == "lector: the selection holds more than 32 MiB of text; Lector reads at most 32 MiB\n", "\(tooBig)")
            #expect(try await session.status().exitStatus == 0)
            try? FileManager.default.removeItem(at: big)
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

        @Test("Wayland (sway headless, wlr-data-control): --clipboard reads what wl-copy set; an empty primary selection is one line")
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
            let empty = try await session.lector(["read", "--selection"], environment: env)
            #expect(empty.status == 1 && empty.stderr == "lector: the selection is empty\n", "\(empty)")
            let copy = try session.spawn("wl-copy", ["--foreground", "Words copied on Wayland."], tag: "wl-copy", environment: env)
            defer { copy.stopNow() }
            #expect(await eventually(timeout: 5) {
                (try? await session.run("wl-paste", ["--list-types"], timeout: 5, environment: env))?.status == 0
            })
            let start = session.recorder.mark()
            let read = try await session.lector(["read", "--clipboard", "--wait"], timeout: 30, environment: env)
            #expect(read.status == 0, "\(read)")
            let heard = AudioAnalysis(session.recorder.samples(from: start))
            #expect(heard.speechWindowSeconds > 0.8, "\(heard.summary)")
            #expect(try await session.status().description.contains("Words copied on Wayland."))
        }
    }
}
