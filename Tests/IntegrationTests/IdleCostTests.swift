import Foundation
import Testing

extension Integration {
    /// While paused or idle the daemon costs nothing: its stream is corked or closed, and nothing wakes it
    /// more than about once a second (measured from /proc: CPU ticks and context switches of all its threads).
    @Suite(.privateSession)
    struct IdleCost {
        /// CPU time (utime + stime, clock ticks) and context switches (voluntary + involuntary, all threads).
        static func usage(_ pid: Int32) -> (ticks: Int, switches: Int)? {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return nil }
            // Fields after "pid (comm)": state is field 3, utime 14, stime 15.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 13, let utime = Int(fields[11]), let stime = Int(fields[12]) else { return nil }
            var switches = 0
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
            for task in tasks {
                guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8) else { continue }
                for line in status.split(separator: "\n") where line.hasSuffix("ctxt_switches") == false && line.contains("ctxt_switches:") {
                    switches += Int(line.split(separator: ":").last!.trimmingCharacters(in: .whitespaces)) ?? 0
                }
            }
            return (utime + stime, switches)
        }

        /// What the daemon used during `seconds`.
        static func measure(_ pid: Int32, seconds: Double) async throws -> (ticks: Int, switches: Int) {
            let before = try #require(usage(pid))
            try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))  // the span measured
            let after = try #require(usage(pid))
            return (after.ticks - before.ticks, after.switches - before.switches)
        }

        /// The sink inputs on the server, as `pactl list sink-inputs` prints them.
        static func sinkInputs(_ session: PrivateSession) async throws -> String {
            try await session.run("pactl", ["list", "sink-inputs"]).stdout
        }

        @Test("a daemon that has read nothing maps neither eSpeak NG, ICU nor CLD2 (they are opened on first use)")
        func idleDaemonMapsNoEngine() async throws {
            let session = try await world(.bare)
            // A separate instance: it restores no saved reading, which would open them at once.
            let daemon = try session.spawn(Paths.lectorBinary, ["daemon", "--instance"], tag: "daemon-instance")
            let instance = "org.mpris.MediaPlayer2.lector.instance\(daemon.pid)"
            var owned = false
            _ = await eventually(timeout: 10, every: .milliseconds(20)) {
                owned = await session.nameOwner(instance) != nil
                return owned || !daemon.isRunning
            }
            try #require(owned, "the daemon did not start: \(daemon.stderr.suffix(2000))")
            try await Task.sleep(for: .milliseconds(500))  // the span under test: idle, it opens nothing more
            let maps = try await session.run("cat", ["/proc/\(daemon.pid)/maps"]).stdout
            #expect(maps.contains("libpulse"), "\(maps)")
            for library in ["libespeak-ng", "libicuuc", "libcld2"] {
                #expect(!maps.contains(library), "an idle daemon maps \(library)")
            }
            _ = await daemon.stop()
        }

        @Test("idle and paused: at most 2 CPU ticks and 10 context switches in 5 s (15 while the stream closes); the stream is corked or closed")
        func idleAndPausedCostNothing() async throws {
            let session = try await world(.bare)
            let recorder = session.recorder
            let daemon = try await session.startDaemon()
            let (read, _) = try await session.readAndRecord(["--lang", "en", "A short text, then nothing."])
            try #require(read.status == 0, "\(read)")
            try await Task.sleep(for: .milliseconds(1500))  // idle begins once the reading's stream has closed
            let idle = try await Self.measure(daemon.pid, seconds: 5)
            print("idle for 5 s: \(idle.ticks) CPU ticks, \(idle.switches) context switches")
            #expect(idle.ticks <= 2 && idle.switches <= 10, "idle: \(idle)")
            #expect(!(try await Self.sinkInputs(session)).contains("Sink Input #"), "a stream is open while idle")

            let start = recorder.mark()
            #expect(try await session.lector(["read", "--lang", "en", Lector.veryLong]).status == 0)
            try #require(await recorder.waitForSpeech(after: start, timeout: 3) != nil, "no speech")
            try await Task.sleep(for: .milliseconds(1000))  // reads for 1 s
            #expect(try await session.lector(["pause"]).status == 0)
            let pausedAt = try await session.status()
            try await Task.sleep(for: .milliseconds(500))  // paused for 0.5 s before the stream is looked at
            let inputs = try await Self.sinkInputs(session)
            #expect(!inputs.contains("Sink Input #") || inputs.contains("Corked: yes"), "paused, not corked: \(inputs)")
            let paused = try await Self.measure(daemon.pid, seconds: 5)
            let pausedLonger = try await Self.measure(daemon.pid, seconds: 5)
            print("paused for 5 s: \(paused.ticks) CPU ticks, \(paused.switches) context switches; the next 5 s: \(pausedLonger.ticks) ticks, \(pausedLonger.switches) switches")
            // The first 5 s hold the corked stream's last timing updates (libpulse, ~every 1.5 s) and its closing.
            #expect(paused.ticks <= 2 && paused.switches <= 15, "paused: \(paused)")
            #expect(pausedLonger.ticks <= 2 && pausedLonger.switches <= 10, "paused longer: \(pausedLonger)")
            #expect(try await session.status().position == pausedAt.position)

            let resumeMark = recorder.mark()
            #expect(try await session.lector(["resume"]).status == 0)
            let again = await recorder.waitForSpeech(after: resumeMark, timeout: 2)
            #expect(again != nil && again! <= 0.5, "speech after a long pause after \(secs(again))")
            let resumed = try await session.status()
            #expect(resumed.state == "reading" && (resumed.position ?? 0) >= (pausedAt.position ?? 0), "\(resumed) after \(pausedAt)")
            try await session.quiesce()
        }

        @Test("a long pause (its stream closed) loses nothing: as long as an uninterrupted reading (±50 ms)")
        func longPauseLosesNothing() async throws {
            let session = try await world()
            let recorder = session.recorder
            let (whole, wholeAudio) = try await session.readAndRecord(["--lang", "en", Lector.sentences])
            try #require(whole.status == 0, "\(whole)")

            let mark = recorder.mark()
            let reader = try session.spawn(
                Paths.lectorBinary, ["read", "--wait", "--lang", "en", Lector.sentences], tag: "long-pause-read")
            try #require(await recorder.waitForSpeech(after: mark, timeout: 3) != nil, "no speech")
            try await Task.sleep(for: .milliseconds(1700))  // reads for 1.7 s
            #expect(try await session.lector(["pause"]).status == 0)
            try await Task.sleep(for: .milliseconds(4000))  // the span under test: a 4 s pause
            #expect(try await session.lector(["resume"]).status == 0)
            let status = await reader.waitForExit(timeout: 30)
            #expect(status == 0, "lector read --wait: \(status.map(String.init) ?? "still running") \(reader.stderr)")
            await recorder.waitForSamples(after: recorder.mark(), seconds: 0.4)
            let interrupted = AudioAnalysis(recorder.samples(from: mark))
            print("with a 4 s pause: \(interrupted.summary); uninterrupted: \(wholeAudio.summary)")
            #expect(abs(interrupted.audibleDuration - wholeAudio.audibleDuration) <= 0.05,
                    "with a 4 s pause: \(interrupted.summary); uninterrupted: \(wholeAudio.summary)")
            #expect(interrupted.longestSilence >= 3.5, "the pause was not heard: \(interrupted.summary)")
        }
    }
}
