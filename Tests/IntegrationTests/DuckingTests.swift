import Foundation
import Testing

extension Integration {
    /// Other audio is lowered while Lector reads and put back exactly: after pause, stop, and a killed daemon
    /// followed by a new one. The "other audio" is a second player stream (`pacat` of silence, so that the
    /// recordings of other tests hear nothing of it) whose sink-input volume `pactl` reads.
    @Suite(.privateSession)
    struct Ducking {
        /// A player stream of another program, ended when the test ends.
        final class OtherStream {
            let process: BackgroundProcess
            let index: Int

            init(_ session: PrivateSession, name: String) async throws {
                process = try session.spawn(
                    "pacat", ["--raw", "--rate=22050", "--channels=2", "--format=s16le", "--latency-msec=50",
                              "--client-name=\(name)", "--stream-name=\(name)", "/dev/zero"], tag: name)
                let found = try await poll(timeout: 10, { try await Ducking.sinkInputs(session).first(where: { $0.client == name }) },
                                           until: { $0 != nil })
                guard let found else {
                    process.stopNow(signal: SIGKILL, grace: 1)
                    throw HarnessError("the \(name) stream did not appear: \(process.stderr)")
                }
                index = found.index
            }

            func end() async { _ = await process.stop(signal: SIGKILL, grace: 2) }
        }

        struct SinkInput {
            var index: Int
            var client: String
            /// The first channel's software volume (65536 = 100 %).
            var volume: Int
        }

        /// `pactl list sink-inputs`, reduced to index, application.name and the first channel's volume.
        static func sinkInputs(_ session: PrivateSession) async throws -> [SinkInput] {
            let listing = try await session.run("pactl", ["list", "sink-inputs"], timeout: 10)
            var inputs: [SinkInput] = []
            for block in listing.stdout.components(separatedBy: "Sink Input #").dropFirst() {
                let lines = block.split(separator: "\n")
                guard let index = Int(lines.first?.trimmingCharacters(in: .whitespaces) ?? "") else { continue }
                var volume = -1
                var client = ""
                for line in lines {
                    let text = line.trimmingCharacters(in: .whitespaces)
                    if text.hasPrefix("Volume:"), let value = text.split(separator: ":").dropFirst(2).first?
                        .split(separator: "/").first.flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }) {
                        volume = value   // "Volume: front-left: 52428 /  80% / -5.81 dB, ..."
                    }
                    if text.hasPrefix("application.name = ") {
                        client = String(text.dropFirst("application.name = ".count)).trimmingCharacters(in: ["\""])
                    }
                }
                inputs.append(SinkInput(index: index, client: client, volume: volume))
            }
            return inputs
        }

        static func volume(_ session: PrivateSession, _ index: Int) async throws -> Int? {
            try await sinkInputs(session).first(where: { $0.index == index })?.volume
        }

        /// Polls until the volume of sink input `index` satisfies `condition`; returns the last value seen.
        static func waitForVolume(_ session: PrivateSession, _ index: Int, timeout: Double,
                                  _ condition: (Int) -> Bool) async throws -> Int? {
            try await poll(timeout: timeout, { try await volume(session, index) }, until: { $0.map(condition) ?? false })
        }

        /// 80 % as PulseAudio counts it (pa_sw_volume_from_linear is cubic; `pactl` takes the percentage).
        static let userVolume = 52_428

        @Test("other streams drop while Lector reads and get their exact volume back after pause and stop")
        func duckAndRestore() async throws {
            let session = try await world()
            let other = try await OtherStream(session, name: "other-player")
            defer { other.process.stopNow(signal: SIGKILL, grace: 1) }
            _ = try await session.run("pactl", ["set-sink-input-volume", "\(other.index)", "80%"])
            #expect(try await Self.volume(session, other.index) == Self.userVolume)

            let read = try await session.lector(["read", Lector.veryLong])
            #expect(read.status == 0, "\(read)")
            // -15 dB of 80 % (-5.81 dB) is -20.81 dB: 29483 in PulseAudio's cubic scale.
            let ducked = try await Self.waitForVolume(session, other.index, timeout: 3) { $0 < Self.userVolume }
            #expect(ducked == 29_483, "not lowered by 15 dB while reading: \(String(describing: ducked))\n\(session.daemonLogs())")

            _ = try await session.lector(["pause"])
            let paused = try await Self.waitForVolume(session, other.index, timeout: 2) { $0 == Self.userVolume }
            #expect(paused == Self.userVolume, "not put back on pause")

            _ = try await session.lector(["resume"])
            let again = try await Self.waitForVolume(session, other.index, timeout: 2) { $0 < Self.userVolume }
            #expect(again == 29_483, "not lowered again on resume")

            // A stream that starts while Lector reads is lowered too.
            let late = try await OtherStream(session, name: "late-player")
            defer { late.process.stopNow(signal: SIGKILL, grace: 1) }
            let lateDucked = try await Self.waitForVolume(session, late.index, timeout: 2) { $0 < 65_536 }
            #expect(lateDucked.map { $0 < 65_536 } == true, "a stream started while reading was not lowered")

            _ = try await session.lector(["stop"])
            let stopped = try await Self.waitForVolume(session, other.index, timeout: 2) { $0 == Self.userVolume }
            #expect(stopped == Self.userVolume, "not put back on stop")
            #expect(try await Self.waitForVolume(session, late.index, timeout: 2) { $0 == 65_536 } == 65_536)
            await late.end()
            await other.end()
        }

        @Test("a volume the user sets while Lector reads is kept; a killed daemon's ducking is undone by the next")
        func userChangeAndCrash() async throws {
            let session = try await world()
            let other = try await OtherStream(session, name: "other-player")
            defer { other.process.stopNow(signal: SIGKILL, grace: 1) }
            _ = try await session.run("pactl", ["set-sink-input-volume", "\(other.index)", "80%"])

            // The user moves the slider while ducked: theirs wins, also after Lector stops.
            _ = try await session.lector(["read", Lector.veryLong])
            _ = try await Self.waitForVolume(session, other.index, timeout: 3) { $0 < Self.userVolume }
            _ = try await session.run("pactl", ["set-sink-input-volume", "\(other.index)", "30%"])
            let thirty = try #require(try await Self.volume(session, other.index))
            // Time for the daemon to hear of the user's change: it shows no sign of having heard it.
            try await Task.sleep(for: .milliseconds(300))
            _ = try await session.lector(["stop"])
            // The span under test: for 0.5 s after Stop, nothing puts the volume back over the user's.
            try await Task.sleep(for: .milliseconds(500))
            #expect(try await Self.volume(session, other.index) == thirty, "the user's volume was overwritten")

            // Lowered, then the daemon is killed: the stream stays low until a new daemon starts.
            _ = try await session.run("pactl", ["set-sink-input-volume", "\(other.index)", "80%"])
            _ = try await session.lector(["read", Lector.veryLong])
            let ducked = try await Self.waitForVolume(session, other.index, timeout: 3) { $0 < Self.userVolume }
            #expect(ducked == 29_483)
            let daemon = try #require(session.runningDaemon)
            daemon.signal(SIGKILL)
            _ = await daemon.waitForExit(timeout: 5)
            // The span under test: for 0.5 s with no daemon, nothing puts the volume back.
            try await Task.sleep(for: .milliseconds(500))
            #expect(try await Self.volume(session, other.index) == 29_483)
            try await session.startDaemon()
            let restored = try await Self.waitForVolume(session, other.index, timeout: 3) { $0 == Self.userVolume }
            #expect(restored == Self.userVolume, "the next daemon did not put the volume back\n\(session.daemonLogs())")
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
            let other = try await OtherStream(session, name: "other-player")
            defer { other.process.stopNow(signal: SIGKILL, grace: 1) }
            _ = try await session.lector(["read", Lector.veryLong])
            _ = try await session.waitForState("reading", timeout: 3)
            // The span under test: 0.7 s of reading leave the other stream's volume alone.
            try await Task.sleep(for: .milliseconds(700))
            #expect(try await Self.volume(session, other.index) == 65_536, "--no-duck lowered another stream")
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
