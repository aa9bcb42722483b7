import Foundation
import Testing

extension Integration {
    /// Other audio is lowered while Lector reads and put back exactly: after pause, stop, and a killed daemon
    /// followed by a new one; what the server remembers for each application (PulseAudio's
    /// module-stream-restore, WirePlumber's restore-stream) never changes. The "other audio" is a second player
    /// stream (`pacat`, see `OtherAudio.swift`) whose level is heard and whose sink-input volume `pactl` reads.
    @Suite(.privateSession)
    struct Ducking {
        @Test("other streams drop by 15 dB while Lector reads, late ones too, and sound as before after pause and stop")
        func duckAndRestore() async throws {
            let session = try await world()
            let other = try await OtherStream(session, name: "other-player", tone: true)
            defer { other.process.stopNow(signal: SIGKILL, grace: 1) }
            _ = try await session.run("pactl", ["set-sink-input-volume", "\(other.index)", "80%"])
            #expect(try await Self.volume(session, other.index) == Self.userVolume)
            let full = try await Self.waitForLevel(session, other.index, timeout: 2) { $0 > -20 }
            // -15 dB, as a PulseAudio volume factor or a lowered pipewire-pulse volume: the same level heard.
            func lowered(_ level: Double) -> Bool { abs(level - (full - 15)) < 2 }
            func restored(_ level: Double) -> Bool { abs(level - full) < 1 }

            let read = try await session.lector(["read", Lector.veryLong])
            #expect(read.status == 0, "\(read)")
            var level = try await Self.waitForLevel(session, other.index, timeout: 3, lowered)
            #expect(lowered(level), "not lowered by 15 dB while reading: \(level) dB from \(full) dB\n\(session.daemonLogs())")

            _ = try await session.lector(["pause"])
            level = try await Self.waitForLevel(session, other.index, timeout: 2, restored)
            #expect(restored(level), "not put back on pause: \(level) dB")
            #expect(try await Self.volume(session, other.index) == Self.userVolume)

            _ = try await session.lector(["resume"])
            level = try await Self.waitForLevel(session, other.index, timeout: 2, lowered)
            #expect(lowered(level), "not lowered again on resume: \(level) dB\n\(session.daemonLogs())")

            // A stream that starts while Lector reads is lowered too.
            let late = try await OtherStream(session, name: "late-player", tone: true)
            defer { late.process.stopNow(signal: SIGKILL, grace: 1) }
            let lateLevel = try await Self.waitForLevel(session, late.index, timeout: 2) { abs($0 - (full + 5.8 - 15)) < 2 }
            #expect(abs(lateLevel - (full + 5.8 - 15)) < 2, "a stream started while reading was not lowered: \(lateLevel) dB")

            _ = try await session.lector(["stop"])
            level = try await Self.waitForLevel(session, other.index, timeout: 2, restored)
            #expect(restored(level), "not put back on stop: \(level) dB")
            #expect(try await Self.volume(session, other.index) == Self.userVolume)
            #expect(try await Self.waitForVolume(session, late.index, timeout: 2) { $0 == 65_536 } == 65_536)
            await late.end()
            await other.end()
            // What the server remembers for each application is what it had: 80 %, and nothing for the late one.
            #expect(try await Self.rememberedVolume(session, "other-player") == Self.userVolume)
            #expect(try await Self.rememberedVolume(session, "late-player") == 65_536)
        }

        @Test("a stream that ends while lowered leaves its application's remembered volume as it was")
        func endedWhileLowered() async throws {
            let session = try await world()
            let other = try await OtherStream(session, name: "ending-player")
            defer { other.process.stopNow(signal: SIGKILL, grace: 1) }
            _ = try await session.run("pactl", ["set-sink-input-volume", "\(other.index)", "80%"])
            // Time for the server to file the user's volume under the application (WirePlumber: 1 s later).
            try await Task.sleep(for: .milliseconds(1200))
            let stateBefore = session.wirePlumberStreamState["Output/Audio:application.name:ending-player:channelVolumes"]
            _ = try await session.lector(["read", Lector.veryLong])
            _ = try await session.waitForState("reading", timeout: 3)
            if !Self.serverDucks {
                let ducked = try await Self.waitForVolume(session, other.index, timeout: 3) { $0 < Self.userVolume }
                #expect(ducked == 29_483, "not lowered: \(String(describing: ducked))")
            } else {
                try await Task.sleep(for: .milliseconds(300))
            }
            await other.end()
            // The late stream of the same application starts while Lector still reads: lowered from 80 %.
            let again = try await OtherStream(session, name: "ending-player")
            defer { again.process.stopNow(signal: SIGKILL, grace: 1) }
            if !Self.serverDucks {
                let ducked = try await Self.waitForVolume(session, again.index, timeout: 3) { $0 == 29_483 }
                #expect(ducked == 29_483, "the next stream was not lowered from the remembered 80 %: \(String(describing: ducked))")
            }
            _ = try await session.lector(["stop"])
            let back = try await Self.waitForVolume(session, again.index, timeout: 3) { $0 == Self.userVolume }
            #expect(back == Self.userVolume, "the next stream did not get 80 % back")
            await again.end()
            #expect(try await Self.rememberedVolume(session, "ending-player") == Self.userVolume,
                    "the remembered volume changed\n\(session.daemonLogs())")
            if SoundServerKind.current == .pipeWire {
                // WirePlumber writes its state file 1 s after the last change.
                try await Task.sleep(for: .milliseconds(1300))
                let after = session.wirePlumberStreamState["Output/Audio:application.name:ending-player:channelVolumes"]
                #expect(after == stateBefore, "WirePlumber's state changed: \(String(describing: stateBefore)) → \(String(describing: after))")
            }
        }

        @Test("a volume the user sets while Lector reads is kept; a killed daemon's ducking is undone by the next")
        func userChangeAndCrash() async throws {
            let session = try await world()
            let other = try await OtherStream(session, name: "other-player", tone: true)
            defer { other.process.stopNow(signal: SIGKILL, grace: 1) }
            _ = try await session.run("pactl", ["set-sink-input-volume", "\(other.index)", "80%"])
            let full = try await Self.waitForLevel(session, other.index, timeout: 2) { $0 > -20 }

            // The user moves the slider while ducked: theirs wins, also after Lector stops.
            _ = try await session.lector(["read", Lector.veryLong])
            _ = try await Self.waitForLevel(session, other.index, timeout: 3) { $0 < full - 10 }
            _ = try await session.run("pactl", ["set-sink-input-volume", "\(other.index)", "30%"])
            let thirty = try #require(try await Self.volume(session, other.index))
            // Time for the daemon to hear of the user's change: it shows no sign of having heard it.
            try await Task.sleep(for: .milliseconds(300))
            _ = try await session.lector(["stop"])
            // The span under test: for 0.5 s after Stop, nothing puts the volume back over the user's.
            try await Task.sleep(for: .milliseconds(500))
            #expect(try await Self.volume(session, other.index) == thirty, "the user's volume was overwritten")

            // Lowered, then the daemon is killed.
            _ = try await session.run("pactl", ["set-sink-input-volume", "\(other.index)", "80%"])
            _ = try await session.lector(["read", Lector.veryLong])
            let ducked = try await Self.waitForLevel(session, other.index, timeout: 3) { abs($0 - (full - 15)) < 2 }
            #expect(abs(ducked - (full - 15)) < 2, "not lowered: \(ducked) dB from \(full) dB")
            let daemon = try #require(session.runningDaemon)
            daemon.signal(SIGKILL)
            _ = await daemon.waitForExit(timeout: 5)
            if Self.serverDucks {
                // The server's ducking ends with Lector's stream.
                let level = try await Self.waitForLevel(session, other.index, timeout: 2) { abs($0 - full) < 1 }
                #expect(abs(level - full) < 1, "still lowered after the daemon died: \(level) dB")
                try await session.startDaemon()
                let modules = try await session.run("pactl", ["list", "short", "modules"])
                #expect(modules.stdout.components(separatedBy: "module-role-ducking").count == 2,
                        "the new daemon did not take over the ducking module: \(modules.stdout)")
            } else {
                // The span under test: for 0.5 s with no daemon, nothing puts the volume back.
                try await Task.sleep(for: .milliseconds(500))
                #expect(try await Self.volume(session, other.index) == 29_483)
                try await session.startDaemon()
                let restored = try await Self.waitForVolume(session, other.index, timeout: 3) { $0 == Self.userVolume }
                #expect(restored == Self.userVolume, "the next daemon did not put the volume back\n\(session.daemonLogs())")
            }
            await other.end()
        }

        @Test("--no-duck leaves other audio alone; --pause-others pauses another MPRIS player and resumes it")
        func noDuckAndPauseOthers() async throws {
            let session = try await world()
            // Replace the session's daemon by one that does not duck.
            _ = try await session.run("gdbus", ["call", "--session", "--dest", "org.mpris.MediaPlayer2.lector",
                                                "--object-path", "/org/mpris/MediaPlayer2",
                                                "--method", "org.mpris.MediaPlayer2.Quit"])
            _ = await eventually(timeout: 5) { await session.nameOwner(Lector.busName) == nil }
            try await session.startDaemon(["--no-duck"])
            let other = try await OtherStream(session, name: "undisturbed-player", tone: true)
            defer { other.process.stopNow(signal: SIGKILL, grace: 1) }
            let full = try await Self.waitForLevel(session, other.index, timeout: 2) { $0 > -20 }
            _ = try await session.lector(["read", Lector.veryLong])
            _ = try await session.waitForState("reading", timeout: 3)
            // The span under test: 0.7 s of reading leave the other stream's volume and level alone.
            try await Task.sleep(for: .milliseconds(700))
            #expect(try await Self.volume(session, other.index) == 65_536, "--no-duck lowered another stream")
            let level = try await Self.level(session, other.index)
            #expect(abs(level - full) < 1, "--no-duck lowered another stream: \(level) dB from \(full) dB")
            _ = try await session.lector(["stop"])
            await other.end()

            // Another player (a separate Lector instance) reads; a --pause-others daemon pauses it while it
            // reads, and resumes it afterwards.
            _ = try await session.run("gdbus", ["call", "--session", "--dest", "org.mpris.MediaPlayer2.lector",
                                                "--object-path", "/org/mpris/MediaPlayer2",
                                                "--method", "org.mpris.MediaPlayer2.Quit"])
            _ = await eventually(timeout: 5) { await session.nameOwner(Lector.busName) == nil }
            try await session.startDaemon(["--pause-others"])
            let instance = try session.spawn(Paths.lectorBinary, ["daemon", "--instance", "--no-duck"], tag: "instance")
            defer { instance.stopNow(signal: SIGTERM, grace: 2) }
            let name = "org.mpris.MediaPlayer2.lector.instance\(instance.pid)"
            let owned = await eventually(timeout: 5) { await session.nameOwner(name) != nil }
            try #require(owned, "the other player did not appear")
            let file = session.directory.appendingPathComponent("other.txt")
            try Data(Lector.veryLong.utf8).write(to: file)
            func status() async throws -> String {
                let r = try await session.run("playerctl", ["-p", name.replacingOccurrences(of: "org.mpris.MediaPlayer2.", with: ""), "status"])
                return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            _ = try await session.run("gdbus", ["call", "--session", "--dest", name, "--object-path", "/org/mpris/MediaPlayer2",
                                                "--method", "org.mpris.MediaPlayer2.Player.OpenUri", file.absoluteString])
            #expect(try await status() == "Playing")
            _ = try await session.lector(["read", "A short interruption."])
            var seen = try await poll(timeout: 4, status, until: { $0 == "Paused" })
            #expect(seen == "Paused", "the other player was not paused while Lector read")
            _ = try await session.waitForState("stopped", timeout: 10)
            seen = try await poll(timeout: 4, status, until: { $0 == "Playing" })
            #expect(seen == "Playing", "the other player was not resumed after Lector finished")
            _ = try await session.run("gdbus", ["call", "--session", "--dest", name, "--object-path", "/org/mpris/MediaPlayer2",
                                                "--method", "org.mpris.MediaPlayer2.Player.Stop"])
            // Leave the session with a plain daemon for the suites after this one.
            _ = try await session.run("gdbus", ["call", "--session", "--dest", "org.mpris.MediaPlayer2.lector",
                                                "--object-path", "/org/mpris/MediaPlayer2",
                                                "--method", "org.mpris.MediaPlayer2.Quit"])
        }
    }
}
