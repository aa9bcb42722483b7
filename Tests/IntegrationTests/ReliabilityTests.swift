import Foundation
import Testing

extension Integration {
    /// Faults Lector must survive: the sound server killed and restarted, a stuck (SIGSTOPped) sound server,
    /// SIGTERM while reading.
    @Suite(.privateSession)
    struct Reliability {
        /// Lines of the running daemon's log that contain `needle`.
        static func logLines(_ session: PrivateSession, containing needle: String) -> [Substring] {
            (session.runningDaemon?.stderr ?? "").split(separator: "\n").filter { $0.contains(needle) }
        }

        @Test("sound server killed while reading: paused within 2 s, position kept, one log line and one notification; back: reading goes on from there")
        func soundServerLostAndBack() async throws {
            let session = try await world(.bare)
            let recorder = session.recorder
            if session.runningDaemon == nil { try await session.startDaemon() }
            try await session.quiesce()
            let warningsBefore = Self.logLines(session, containing: "Lector-WARNING").count
            let notifications = try FakeNotificationServer(busAddress: session.busAddress)
            defer { notifications.stop() }
            let start = recorder.mark()
            #expect(try await session.lector(["read", "--lang", "en", Lector.veryLong]).status == 0)
            try #require(await recorder.waitForSpeech(after: start, timeout: 3) != nil, "no speech")
            try await Task.sleep(for: .milliseconds(2500))  // reads for 2.5 s
            let before = try await session.status()
            try #require(before.state == "reading", "\(before)")

            let killed = ContinuousClock.now
            await session.stopSoundServer(signal: SIGKILL)
            var status = try await session.status()
            while status.state != "paused" && ContinuousClock.now - killed < .seconds(4) {
                #expect(status.exitStatus == 0, "D-Bus stopped answering: \(status)")
                try await Task.sleep(for: .milliseconds(50))  // sampling: every answer is checked
                status = try await session.status()
            }
            let detected = seconds(ContinuousClock.now - killed)
            #expect(status.state == "paused" && detected <= 2.0,
                    "after the server was killed: \(status) after \(String(format: "%.2f", detected)) s\n\(session.daemonLogs())")
            let kept = status.position ?? 0
            print("server killed: paused after \(String(format: "%.2f", detected)) s at \(secs(status.position)) (reading at \(secs(before.position)) before)")
            #expect(kept >= (before.position ?? 0), "position lost: \(status), before: \(before)")
            try await Task.sleep(for: .milliseconds(1500))  // the span under test: it stays paused
            let later = try await session.status()
            #expect(later.exitStatus == 0 && later.state == "paused" && later.position == status.position,
                    "while the server is gone: \(later), first: \(status)")
            #expect(Self.logLines(session, containing: "Lector-WARNING").count == warningsBefore + 1, "\(session.daemonLogs())")
            #expect(Self.logLines(session, containing: "sound server lost").count == 1, "\(session.daemonLogs())")
            let told = await poll(timeout: 3, { notifications.notifications }, until: { !$0.isEmpty })
            #expect(told.count == 1 && told.first?.summary == "No sound output", "\(told)")

            // The server comes back on the same socket: Lector reconnects by itself (within its 5 s backoff).
            let reconnectsBefore = Self.logLines(session, containing: "reconnected to the sound server").count
            try await session.restartSoundServer()
            let resumeMark = recorder.mark()
            let back = ContinuousClock.now
            let reconnected = await eventually(timeout: 8) {
                Self.logLines(session, containing: "reconnected to the sound server").count > reconnectsBefore
            }
            #expect(reconnected, "no reconnection: \(session.daemonLogs())")
            print("reconnected \(String(format: "%.2f", seconds(ContinuousClock.now - back))) s after the server came back")
            // Reading was what was asked last: it goes on by itself.
            let again = await recorder.waitForSpeech(after: resumeMark, timeout: 8)
            #expect(again != nil, "no speech after the server came back\n\(session.daemonLogs())")
            _ = try await eventually(timeout: 0.3) { try await session.status().state == "reading" }
            let resumed = try await session.status()
            #expect(resumed.state == "reading", "\(resumed)")
            // From the kept position: not from the sentence's start, not far ahead.
            #expect((resumed.position ?? 0) >= kept && (resumed.position ?? 0) <= kept + 2.5,
                    "resumed at \(secs(resumed.position)), kept \(secs(kept))")
            try await session.quiesce()
        }

        @Test("Play with no sound server: one notification and an Error signal; reading starts when the server is back, unless paused since")
        func playWithoutSoundServer() async throws {
            let session = try await world(.bare)
            if session.runningDaemon == nil { try await session.startDaemon() }
            try await session.quiesce()
            let notifications = try FakeNotificationServer(busAddress: session.busAddress)
            defer { notifications.stop() }
            let monitor = try await SignalMonitor(session: session, name: Lector.busName)
            defer { Task { await monitor.stop() } }
            await session.stopSoundServer(signal: SIGKILL)
            #expect(try await session.lector(["read", "--lang", "en", Lector.veryLong]).status == 0)
            let paused = try await session.waitForState("paused", timeout: 5)
            #expect(paused.state == "paused", "\(paused)\n\(session.daemonLogs())")
            let told = await poll(timeout: 3, { notifications.notifications }, until: { !$0.isEmpty })
            #expect(told.first?.summary == "No sound output", "\(told)")
            let errors = await poll(timeout: 3, { monitor.signals.filter { $0.member == "Error" } }, until: { !$0.isEmpty })
            #expect(errors.first?.line.contains("no sound output") == true, "\(errors)")

            // Back: reading starts by itself.
            let mark = session.recorder.mark()
            try await session.restartSoundServer()
            let heard = await session.recorder.waitForSpeech(after: mark, timeout: 8)
            #expect(heard != nil, "not read when the server came back\n\(session.daemonLogs())")
            #expect(try await session.waitForState("reading", timeout: 2).state == "reading")

            // Lost again, then paused by hand: the server's return leaves it paused.
            await session.stopSoundServer(signal: SIGKILL)
            _ = try await session.waitForState("paused", timeout: 5)
            _ = try await session.lector(["pause"])
            let reconnects = Self.logLines(session, containing: "reconnected to the sound server").count
            try await session.restartSoundServer()
            let reconnected = await eventually(timeout: 8) {
                Self.logLines(session, containing: "reconnected to the sound server").count > reconnects
            }
            #expect(reconnected, "\(session.daemonLogs())")
            try await Task.sleep(for: .milliseconds(500))  // the span under test: it stays paused
            #expect(try await session.status().state == "paused")
            _ = try await session.lector(["stop"])
        }

        @Test("sound server restarted while idle: the next read is heard")
        func soundServerRestartedWhileIdle() async throws {
            let session = try await world(.bare)
            if session.runningDaemon == nil { try await session.startDaemon() }
            try await session.quiesce()
            let reconnectsBefore = Self.logLines(session, containing: "reconnected to the sound server").count
            let warningsBefore = Self.logLines(session, containing: "Lector-WARNING").count
            await session.stopSoundServer(signal: SIGKILL)
            try await Task.sleep(for: .milliseconds(700))  // the span under test: idle, the loss changes nothing
            #expect(try await session.status().state == "stopped")
            try await session.restartSoundServer()
            let reconnected = await eventually(timeout: 8) {
                Self.logLines(session, containing: "reconnected to the sound server").count > reconnectsBefore
            }
            #expect(reconnected, "no reconnection: \(session.daemonLogs())")
            let (read, audio) = try await session.readAndRecord(["--lang", "en", "The sound is back again."])
            #expect(read.status == 0, "\(read)")
            #expect(audio.audibleDuration > 0.5, "\(audio.summary)\n\(session.daemonLogs())")
            #expect(Self.logLines(session, containing: "Lector-WARNING").count == warningsBefore, "\(session.daemonLogs())")
        }

        @Test("stuck sound server (SIGSTOP): stop and status answer within 1 s, SIGTERM ends the daemon within 2 s")
        func stuckSoundServer() async throws {
            let session = try await world(.bare)
            let recorder = session.recorder
            if session.runningDaemon == nil { try await session.startDaemon() }
            try await session.quiesce()
            let start = recorder.mark()
            #expect(try await session.lector(["read", "--lang", "en", Lector.veryLong]).status == 0)
            try #require(await recorder.waitForSpeech(after: start, timeout: 3) != nil, "no speech")
            try await Task.sleep(for: .milliseconds(1000))  // reads for 1 s

            let server = session.soundServerPID
            kill(server, SIGSTOP)
            defer { kill(server, SIGCONT) }
            try await Task.sleep(for: .milliseconds(500))  // the span under test: the server stuck for 0.5 s
            let status = try await session.lector(["status"], timeout: 5)
            #expect(status.status == 0 && status.seconds <= 1.0, "status: \(status)")
            let pause = try await session.lector(["pause"], timeout: 5)
            #expect(pause.status == 0 && pause.seconds <= 1.0, "pause: \(pause)")
            let stop = try await session.lector(["stop"], timeout: 5)
            #expect(stop.status == 0 && stop.seconds <= 1.0, "stop: \(stop)")
            let stopped = try await session.lector(["status"], timeout: 5)
            #expect(stopped.status == 0 && stopped.seconds <= 1.0 && LectorStatus(stopped).state == "stopped", "\(stopped)")
            let read = try await session.lector(["read", "--lang", "en", "Nobody hears this yet."], timeout: 5)
            #expect(read.status == 0 && read.seconds <= 1.0, "read: \(read)")
            let reading = try await session.lector(["status"], timeout: 5)
            #expect(reading.status == 0 && reading.seconds <= 1.0, "\(reading)")

            let daemon = try #require(session.runningDaemon)
            let term = ContinuousClock.now
            daemon.signal(SIGTERM)
            let exit = await daemon.waitForExit(timeout: 5)
            let took = seconds(ContinuousClock.now - term)
            #expect(exit == 0 && took <= 2.0, "SIGTERM with the server stopped: exit \(exit.map(String.init) ?? "none") after \(String(format: "%.3f", took)) s\n\(session.daemonLogs())")
            print("SIGTERM with a stuck sound server: exited in \(String(format: "%.3f", took)) s")
            kill(server, SIGCONT)
        }

        @Test("SIGTERM while reading ends the daemon within 2 s")
        func sigtermWhileReading() async throws {
            let session = try await world(.bare)
            let recorder = session.recorder
            let daemon = try await session.startDaemon()
            let start = recorder.mark()
            #expect(try await session.lector(["read", "--lang", "en", Lector.veryLong]).status == 0)
            try #require(await recorder.waitForSpeech(after: start, timeout: 3) != nil, "no speech")
            try await Task.sleep(for: .milliseconds(1000))  // reads for 1 s
            let term = ContinuousClock.now
            daemon.signal(SIGTERM)
            let exit = await daemon.waitForExit(timeout: 5)
            let took = seconds(ContinuousClock.now - term)
            #expect(exit == 0 && took <= 2.0, "exit \(exit.map(String.init) ?? "none") after \(String(format: "%.3f", took)) s")
            print("SIGTERM while reading: exited in \(String(format: "%.3f", took)) s")
        }
    }
}
