import Foundation
import Testing

extension Integration {
    /// `lector read | pause | resume | stop | toggle | status` against a daemon in a private session,
    /// checked by listening to the null sink's monitor.
    @Suite(.privateSession)
    struct Reading {
        /// A short text for the "nothing of the old text" and queue checks.
        static let shortA = "The first text is read first."
        static let shortB = "Then the second text follows it."

        @Test("read: speech is heard within 1 s and status says reading")
        func readIsHeardQuickly() async throws {
            let session = try await world()
            let mark = session.recorder.mark()
            let read = try await session.lector(["read", "--lang", "en", Lector.sentences])
            #expect(read.status == 0, "\(read)")
            #expect(read.stdout.isEmpty && read.stderr.isEmpty, "read prints nothing: \(read)")
            let first = await session.recorder.waitForSpeech(after: mark, timeout: 3)
            #expect(first != nil && first! <= 1.0, "first speech after \(secs(first))")
            let status = try await session.status()
            #expect(status.exitStatus == 0 && status.state == "reading", "\(status)")
            #expect(status.language?.lowercased().hasPrefix("en") == true, "\(status)")
            #expect((status.length ?? 0) > 0, "\(status)")
            try await session.quiesce()
        }

        @Test("pause: silence within 200 ms, position frozen; resume: speech again within 500 ms")
        func pauseAndResume() async throws {
            let session = try await world()
            let recorder = session.recorder
            let start = recorder.mark()
            #expect(try await session.lector(["read", "--lang", "en", Lector.longRun]).status == 0)
            try #require(await recorder.waitForSpeech(after: start, timeout: 3) != nil, "no speech")
            try await Task.sleep(for: .milliseconds(1200))  // reads for 1.2 s

            let pauseMark = recorder.mark()
            let pause = try await session.lector(["pause"])
            #expect(pause.status == 0, "\(pause)")
            let paused = try await session.status()
            #expect(paused.state == "paused", "\(paused)")
            try await Task.sleep(for: .milliseconds(500))  // the span under test: paused stays paused
            let later = try await session.status()
            #expect(later.state == "paused", "\(later)")
            #expect(paused.position != nil && paused.position == later.position,
                    "position moved while paused: \(secs(paused.position)) then \(secs(later.position))")
            #expect((paused.position ?? 0) > 0.5, "\(paused)")
            await recorder.waitForSamples(after: pauseMark, seconds: 0.8)
            let afterPause = AudioAnalysis(recorder.samples(from: pauseMark))
            #expect(afterPause.isSilent(from: 0.2), "speech after pause at \(afterPause.speechWindows(from: 0.2).prefix(5)): \(afterPause.summary)")

            let resumeMark = recorder.mark()
            let resume = try await session.lector(["resume"])
            #expect(resume.status == 0, "\(resume)")
            let again = await recorder.waitForSpeech(after: resumeMark, timeout: 2)
            #expect(again != nil && again! <= 0.5, "speech after resume after \(secs(again))")
            let resumed = try await session.status()
            #expect(resumed.state == "reading", "\(resumed)")
            #expect((resumed.position ?? 0) >= (later.position ?? 0), "\(resumed) after \(later)")
            try await session.quiesce()
        }

        @Test("exactness: a reading paused and resumed twice sounds as long as an uninterrupted one (±50 ms)")
        func pausedReadingLosesNothing() async throws {
            let session = try await world()
            let recorder = session.recorder
            let (whole, wholeAudio) = try await session.readAndRecord(["--lang", "en", Lector.sentences])
            try #require(whole.status == 0, "\(whole)")
            // Complete: as much sound as eSpeak NG's own command makes of the same text.
            let reference = try await session.espeakReference(Lector.sentences)
            #expect(abs(wholeAudio.audibleDuration - reference.audibleDuration) <= 0.1,
                    "lector: \(wholeAudio.summary); espeak-ng: \(reference.summary); \(whole)\n\(session.daemonLogs())")

            let mark = recorder.mark()
            let reader = try session.spawn(
                Paths.lectorBinary, ["read", "--wait", "--lang", "en", Lector.sentences], tag: "exact-read")
            try #require(await recorder.waitForSpeech(after: mark, timeout: 3) != nil, "no speech")
            for (reading, pausedFor) in [(1.1, 0.7), (1.7, 0.5)] {
                try await Task.sleep(for: .milliseconds(Int(reading * 1000)))  // reads for a while
                #expect(try await session.lector(["pause"]).status == 0)
                try await Task.sleep(for: .milliseconds(Int(pausedFor * 1000)))  // the span under test: paused for a while
                #expect(try await session.lector(["resume"]).status == 0)
            }
            let status = await reader.waitForExit(timeout: 30)
            #expect(status == 0, "lector read --wait: \(status.map(String.init) ?? "still running") \(reader.stderr)")
            await recorder.waitForSamples(after: recorder.mark(), seconds: 0.4)
            let interrupted = AudioAnalysis(recorder.samples(from: mark))
            #expect(abs(interrupted.audibleDuration - wholeAudio.audibleDuration) <= 0.05,
                    "interrupted: \(interrupted.summary); uninterrupted: \(wholeAudio.summary)")
            #expect(interrupted.longestSilence >= 0.45, "the pauses were not heard: \(interrupted.summary)")
        }

        @Test("stop: silence within 200 ms, stopped at 0; the next text starts with nothing of the old one")
        func stopDiscardsEverything() async throws {
            let session = try await world()
            let recorder = session.recorder
            let (alone, aloneAudio) = try await session.readAndRecord(["--lang", "en", Self.shortB])
            try #require(alone.status == 0 && aloneAudio.audibleDuration > 0.5, "\(alone) \(aloneAudio.summary)")

            let start = recorder.mark()
            #expect(try await session.lector(["read", "--lang", "en", Lector.veryLong]).status == 0)
            try #require(await recorder.waitForSpeech(after: start, timeout: 3) != nil, "no speech")
            try await Task.sleep(for: .milliseconds(1500))  // reads for 1.5 s
            let stopMark = recorder.mark()
            let stop = try await session.lector(["stop"])
            #expect(stop.status == 0, "\(stop)")
            let stopped = try await session.status()
            #expect(stopped.state == "stopped", "\(stopped)")
            #expect(stopped.position == 0, "\(stopped)")
            await recorder.waitForSamples(after: stopMark, seconds: 0.8)
            let afterStop = AudioAnalysis(recorder.samples(from: stopMark))
            #expect(afterStop.isSilent(from: 0.2), "speech after stop: \(afterStop.summary)")

            let (next, nextAudio) = try await session.readAndRecord(["--lang", "en", Self.shortB])
            #expect(next.status == 0, "\(next)")
            #expect(abs(nextAudio.audibleDuration - aloneAudio.audibleDuration) <= 0.05,
                    "after stop: \(nextAudio.summary); alone: \(aloneAudio.summary)")
        }

        @Test("read replaces what is being read at once")
        func readReplaces() async throws {
            let session = try await world()
            let recorder = session.recorder
            let (_, aloneAudio) = try await session.readAndRecord(["--lang", "en", Self.shortB])
            let start = recorder.mark()
            #expect(try await session.lector(["read", "--lang", "en", Lector.veryLong]).status == 0)
            try #require(await recorder.waitForSpeech(after: start, timeout: 3) != nil, "no speech")
            try await Task.sleep(for: .milliseconds(1000))  // reads for 1 s
            let (replaced, replacedAudio) = try await session.readAndRecord(["--lang", "en", Self.shortB])
            #expect(replaced.status == 0, "\(replaced)")
            // At most the old text's last instants (the command's own latency) may precede the new one.
            #expect(replacedAudio.audibleDuration - aloneAudio.audibleDuration <= 0.25,
                    "replacing: \(replacedAudio.summary); alone: \(aloneAudio.summary)")
            #expect(replacedAudio.audibleDuration >= aloneAudio.audibleDuration - 0.05)
            let status = try await session.status()
            #expect(status.state == "stopped", "\(status)")
        }

        @Test("toggle: reading → paused → reading; after stop it replays the last text from its beginning")
        func toggle() async throws {
            let session = try await world()
            let recorder = session.recorder
            let start = recorder.mark()
            #expect(try await session.lector(["read", "--lang", "en", Lector.veryLong]).status == 0)
            try #require(await recorder.waitForSpeech(after: start, timeout: 3) != nil, "no speech")
            try await Task.sleep(for: .milliseconds(1500))  // reads for 1.5 s

            let pauseMark = recorder.mark()
            #expect(try await session.lector(["toggle"]).status == 0)
            let paused = try await session.status()
            #expect(paused.state == "paused", "\(paused)")
            await recorder.waitForSamples(after: pauseMark, seconds: 0.6)
            #expect(AudioAnalysis(recorder.samples(from: pauseMark)).isSilent(from: 0.2), "speech after toggle")

            let resumeMark = recorder.mark()
            #expect(try await session.lector(["toggle"]).status == 0)
            let again = await recorder.waitForSpeech(after: resumeMark, timeout: 2)
            #expect(again != nil && again! <= 0.5, "speech after the second toggle after \(secs(again))")
            #expect(try await session.status().state == "reading")

            #expect(try await session.lector(["stop"]).status == 0)
            #expect(try await session.status().state == "stopped")
            _ = await recorder.waitForSilence(after: recorder.mark(), lasting: 0.2, timeout: 2)
            let replayMark = recorder.mark()
            #expect(try await session.lector(["toggle"]).status == 0)
            let replay = await recorder.waitForSpeech(after: replayMark, timeout: 3)
            #expect(replay != nil && replay! <= 1.0, "toggle after stop: speech after \(secs(replay))")
            let replaying = try await session.status()
            #expect(replaying.state == "reading", "\(replaying)")
            // From the beginning: the position is what was heard since the toggle, not the 1.5 s before.
            #expect((replaying.position ?? 99) < 1.2, "\(replaying)")
            try await session.quiesce()
        }

        @Test("--queue appends: both texts are heard, the second after the first")
        func queueAppends() async throws {
            let session = try await world()
            let recorder = session.recorder
            let (_, a) = try await session.readAndRecord(["--lang", "en", Self.shortA])
            let (_, b) = try await session.readAndRecord(["--lang", "en", Self.shortB])

            let mark = recorder.mark()
            #expect(try await session.lector(["read", "--lang", "en", Self.shortA]).status == 0)
            #expect(try await session.lector(["read", "--queue", "--lang", "en", Self.shortB]).status == 0)
            var sentences: [String] = []
            let deadline = ContinuousClock.now + .seconds(20)
            var status = try await session.status()
            while ContinuousClock.now < deadline {
                if let sentence = status.sentence, sentence != sentences.last { sentences.append(sentence) }
                if status.state == "stopped" { break }
                try await Task.sleep(for: .milliseconds(80))  // the watch's sampling period
                status = try await session.status()
            }
            #expect(status.state == "stopped", "\(status)")
            await recorder.waitForSamples(after: recorder.mark(), seconds: 0.4)
            let both = AudioAnalysis(recorder.samples(from: mark))
            #expect(abs(both.audibleDuration - (a.audibleDuration + b.audibleDuration)) <= 0.06,
                    "queued: \(both.summary); first alone: \(a.summary); second alone: \(b.summary)")
            let firstSeen = sentences.firstIndex(where: { $0.contains("first text") })
            let secondSeen = sentences.firstIndex(where: { $0.contains("second text") })
            #expect(firstSeen != nil && secondSeen != nil && firstSeen! < secondSeen!, "sentences seen: \(sentences)")
        }
    }

    /// What happens before any daemon runs: commands that need none, and `lector read` starting one.
    @Suite(.privateSession)
    struct Startup {
        @Test("with no daemon: status says not running (exit 3), pause/resume/stop do nothing, toggle has nothing to play, read starts the daemon")
        func withoutDaemon() async throws {
            let session = try await world(.bare)
            let status = try await session.status()
            #expect(status.exitStatus == 3 && status.state == "not running", "\(status)")
            for command in ["pause", "resume", "stop"] {
                let result = try await session.lector([command])
                #expect(result.status == 0, "lector \(command): \(result)")
            }
            #expect(await session.nameOwner(Lector.busName) == nil, "pause/resume/stop started a daemon")

            let toggle = try await session.lector(["toggle"])
            #expect(toggle.status == 1, "\(toggle)")
            #expect(toggle.stderrLines.count == 1 && toggle.stderr.hasPrefix("lector: "), "\(toggle)")
            #expect(toggle.stderr.lowercased().contains("nothing to play"), "\(toggle)")

            let (read, audio) = try await session.readAndRecord(["--lang", "en", "hello there, this is Lector"])
            #expect(read.status == 0, "\(read)")
            #expect(audio.audibleDuration > 0.5, "\(audio.summary)")
            #expect(await session.nameOwner(Lector.busName) != nil, "no daemon owns \(Lector.busName)")
            let log = session.directory.appendingPathComponent("state/lector/daemon.log")
            #expect(FileManager.default.fileExists(atPath: log.path), "no daemon log at \(log.path)")
        }

        @Test("installed (a D-Bus .service file names the daemon): read --wait has the bus start it; when that start fails, lector starts lector-daemon itself")
        func activation() async throws {
            let session = try await world(.bare)
            let fm = FileManager.default
            let dir = session.directory.appendingPathComponent("activation")
            let services = dir.appendingPathComponent("services")
            try fm.createDirectory(at: services, withIntermediateDirectories: true)
            try fm.createDirectory(at: dir.appendingPathComponent("state"), withIntermediateDirectories: true)
            let marker = dir.appendingPathComponent("activated")
            let wrapper = dir.appendingPathComponent("start-daemon")
            try "#!/bin/sh\necho activated > '\(marker.path)'\nexec '\(Paths.lectorBinary)' daemon\n"
                .write(to: wrapper, atomically: true, encoding: .utf8)
            _ = chmod(wrapper.path, 0o755)
            let config = dir.appendingPathComponent("bus.conf")
            try """
                <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
                 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
                <busconfig>
                  <type>session</type>
                  <listen>unix:path=\(dir.path)/bus</listen>
                  <servicedir>\(services.path)</servicedir>
                  <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
                </busconfig>
                """.write(to: config, atomically: true, encoding: .utf8)
            // A bus of its own (what it activates inherits its environment), with its own saved state.
            let environment = session.environment.merging(["XDG_STATE_HOME": dir.appendingPathComponent("state").path]) { $1 }
            let bus = try BackgroundProcess(
                "dbus-daemon", ["--config-file=\(config.path)", "--nofork", "--nopidfile", "--print-address=1"],
                environment: environment, stdoutURL: dir.appendingPathComponent("address"),
                stderrURL: dir.appendingPathComponent("dbus.log"))
            let address = await poll(timeout: 10, every: .milliseconds(10),
                                     { bus.stdout.trimmingCharacters(in: .whitespacesAndNewlines) },
                                     until: { !$0.isEmpty || !bus.isRunning })
            try #require(!address.isEmpty, "dbus-daemon did not come up: \(bus.stderr)")
            let onBus = ["DBUS_SESSION_BUS_ADDRESS": address, "XDG_STATE_HOME": environment["XDG_STATE_HOME"]!]

            // Ends the daemon owning Lector's name on that bus, and waits until it is gone.
            func endDaemon() async throws {
                let answer = try await session.run(
                    "gdbus", ["call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
                              "--method", "org.freedesktop.DBus.GetConnectionUnixProcessID", Lector.busName],
                    timeout: 5, environment: onBus)
                let pid = try #require(answer.stdout.split(separator: " ").last.flatMap({ Int32($0.filter(\.isNumber)) }), "\(answer)")
                kill(pid, SIGTERM)
                _ = await eventually(timeout: 5, every: .milliseconds(20)) { !processExists(pid) }
                #expect(!processExists(pid), "the daemon did not end on SIGTERM")
            }

            for (exec, activates) in [(wrapper.path, true), ("/nonexistent/lector-daemon daemon", false)] {
                try "[D-BUS Service]\nName=\(Lector.busName)\nExec=\(exec)\n"
                    .write(to: services.appendingPathComponent("\(Lector.busName).service"), atomically: true, encoding: .utf8)
                try? fm.removeItem(at: marker)
                let read = try await session.lector(["read", "--wait", "--lang", "en", "Started on demand."], timeout: 60,
                                                    environment: onBus)
                #expect(read.status == 0 && read.stderr.isEmpty, "Exec=\(exec): \(read)")
                #expect(fm.fileExists(atPath: marker.path) == activates, "Exec=\(exec): started by the bus: \(!activates)")
                try await endDaemon()
            }
            await bus.stop(grace: 3)
        }
    }
}
