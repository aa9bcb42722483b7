import Foundation
import Testing

extension Integration {
    /// Nothing lost: the text and the sentence heard survive the daemon (kept in $XDG_STATE_HOME/lector/).
    @Suite(.privateSession)
    struct SavedReading {
        /// 30 short sentences (about 2.5 s each at the default rate), each naming its number.
        static let numbered = (1...30).map { "This is sentence number \($0) of a long text." }.joined(separator: " ")

        static func stateFile(_ session: PrivateSession, _ name: String = "reading") -> URL {
            session.directory.appendingPathComponent("state/lector/\(name)")
        }

        /// The pid of the process owning Lector's bus name, nil when none does.
        static func daemonPID(_ session: PrivateSession) async -> Int32? {
            guard let result = try? await session.run(
                "gdbus",
                ["call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
                 "--method", "org.freedesktop.DBus.GetConnectionUnixProcessID", Lector.busName], timeout: 5),
                result.status == 0
            else { return nil }
            return result.stdout.split(separator: " ").last.flatMap { Int32($0.filter(\.isNumber)) }
        }

        /// Ends the daemon that owns the name (whoever started it) with `signal` and waits until it is gone.
        static func endDaemon(_ session: PrivateSession, signal: Int32) async throws {
            let pid = try #require(await daemonPID(session), "no daemon")
            kill(pid, signal)
            let deadline = ContinuousClock.now + .seconds(5)
            _ = await eventually(timeout: 5, every: .milliseconds(20)) { !processExists(pid) }
            #expect(!processExists(pid), "daemon \(pid) did not end on signal \(signal)")
            let left = max(0, seconds(deadline - ContinuousClock.now))
            _ = await eventually(timeout: left, every: .milliseconds(20)) { await session.nameOwner(Lector.busName) == nil }
        }

        /// Reads `numbered` until sentence `n` (1-based) is heard, then waits `extra` seconds; returns the status.
        static func readUntilSentence(_ session: PrivateSession, _ n: Int, extra: Double = 1.2) async throws -> LectorStatus {
            #expect(try await session.lector(["read", "--lang", "en-US", numbered]).status == 0)
            let status = try await session.waitForSentence(containing: "number \(n) ", timeout: 30)
            try #require(status.sentence?.contains("number \(n) ") == true, "\(status)\n\(session.daemonLogs())")
            try await Task.sleep(for: .milliseconds(Int(extra * 1000)))  // reads on for `extra` s
            return try await session.status()
        }

        @Test("after a crash (SIGKILL), lector resume starts a daemon that goes on from the last sentence heard")
        func resumeAfterCrash() async throws {
            let session = try await world(.daemon)
            let before = try await Self.readUntilSentence(session, 3)
            try #require(before.state == "reading", "\(before)")
            #expect(FileManager.default.fileExists(atPath: Self.stateFile(session).path))
            try await Self.endDaemon(session, signal: SIGKILL)

            let mark = session.recorder.mark()
            let resume = try await session.lector(["resume"])
            #expect(resume.status == 0, "\(resume)")
            let heard = await session.recorder.waitForSpeech(after: mark, timeout: 3)
            #expect(heard != nil, "nothing heard after resume\n\(session.daemonLogs())")
            let after = try await session.status()
            #expect(after.state == "reading", "\(after)")
            #expect(after.sentence == before.sentence, "resumed at \(after), crashed at \(before)")
            #expect(after.language == "en-US", "\(after)")
            try await session.quiesce()
        }

        @Test("after a logout (SIGTERM while paused), lector toggle goes on from the paused sentence")
        func toggleAfterLogout() async throws {
            let session = try await world(.daemon)
            _ = try await Self.readUntilSentence(session, 2, extra: 0.5)
            #expect(try await session.lector(["pause"]).status == 0)
            let paused = try await session.status()
            try await Self.endDaemon(session, signal: SIGTERM)
            let saved = try String(contentsOf: Self.stateFile(session), encoding: .utf8)
            #expect(saved.contains("state paused"), "\(saved)")

            // A new daemon: stopped, the text loaded, the sentence kept.
            let mark = session.recorder.mark()
            try await session.startDaemon()
            let loaded = try await session.status()
            #expect(loaded.state == "stopped" && loaded.sentence == paused.sentence, "\(loaded) after \(paused)")
            await session.recorder.waitForSamples(after: mark, seconds: 0.5)
            #expect(AudioAnalysis(session.recorder.samples(from: mark)).firstSpeech == nil, "a restored daemon spoke by itself")
            #expect(try await session.lector(["toggle"]).status == 0)
            #expect(await session.recorder.waitForSpeech(after: mark, timeout: 3) != nil, "nothing heard after toggle")
            let after = try await session.status()
            #expect(after.state == "reading" && after.sentence == paused.sentence, "\(after) after \(paused)")
            try await session.quiesce()
        }

        @Test("the state is written at most once a second while reading, and not at all while idle")
        func writesAreRare() async throws {
            let session = try await world(.daemon)
            let file = Self.stateFile(session)
            /// Inode and modification time (ns): every atomic write is a new file written at a new instant.
            func inode() -> [Int]? {
                var st = stat()
                guard stat(file.path, &st) == 0 else { return nil }
                return [Int(st.st_ino), st.st_mtim.tv_sec, st.st_mtim.tv_nsec]
            }
            _ = try await Self.readUntilSentence(session, 1, extra: 0)
            var seen: [[Int]] = []
            let start = ContinuousClock.now
            while ContinuousClock.now - start < .seconds(6) {
                if let i = inode(), i != seen.last { seen.append(i) }  // every atomic write is a new file
                try await Task.sleep(for: .milliseconds(50))  // the watch's sampling period
            }
            #expect(seen.count >= 2 && seen.count <= 8, "\(seen.count) writes in 6 s of reading")
            print("state file written \(seen.count - 1) times in 6 s of reading")
            #expect(try await session.lector(["stop"]).status == 0)
            try await Task.sleep(for: .milliseconds(1500))  // Stop's own write lands; from then on the daemon is idle
            let idle = inode()
            try await Task.sleep(for: .milliseconds(3000))  // the span under test: 3 s idle
            #expect(inode() == idle, "written while idle")
            #expect(try String(contentsOf: file, encoding: .utf8).contains("state stopped"))
        }

        @Test("stopped for --idle-exit seconds, the daemon exits with its state saved; the next command brings it back with it")
        func idleExit() async throws {
            let session = try await world(.bare)
            if await session.nameOwner(Lector.busName) != nil { try await Self.endDaemon(session, signal: SIGTERM) }
            let daemon = try await session.startDaemon(["--idle-exit", "1"])
            let text = "Idle daemons leave. The widget goes with them."
            let read = try await session.lector(["read", "--wait", "--lang", "en", text])
            #expect(read.status == 0, "\(read)")
            // Stopped at the end: about 1 s later the daemon is gone, its name with it.
            let exited = await daemon.waitForExit(timeout: 5)
            #expect(exited == 0, "\(daemon.stderr.suffix(800))")
            #expect(daemon.stderr.contains("exiting (the state is saved)"), "\(daemon.stderr.suffix(800))")
            #expect(await session.nameOwner(Lector.busName) == nil)
            #expect(try await session.status().exitStatus == 3)  // status does not start a daemon
            // toggle starts one, which has the text back and reads it again.
            #expect(try await session.lector(["toggle"]).status == 0)
            let status = try await session.waitForSentence(containing: "Idle daemons", timeout: 5)
            #expect(status.state == "reading", "\(status)")
            _ = try await session.lector(["stop"])
        }

        @Test("a corrupt state file: one log line, the daemon starts empty")
        func corruptStateFile() async throws {
            let session = try await world(.bare)
            if await session.nameOwner(Lector.busName) != nil { try await Self.endDaemon(session, signal: SIGKILL) }
            try FileManager.default.createDirectory(
                at: Self.stateFile(session).deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data("lector-reading 1\ntext nothing\nstate paused\nsentence x\n\u{0}\u{ff}".utf8).write(to: Self.stateFile(session))
            let daemon = try await session.startDaemon()
            let status = try await session.status()
            #expect(status.exitStatus == 0 && status.state == "stopped" && status.sentence == "", "\(status)")
            let toggle = try await session.lector(["toggle"])
            #expect(toggle.status == 1 && toggle.stderr.contains("nothing to play"), "\(toggle)")
            let lines = daemon.stderr.split(separator: "\n").filter { $0.contains("cannot restore") }
            #expect(lines.count == 1, "\(daemon.stderr)")

            // An unreadable text file (a directory in its place) is refused the same way.
            try? FileManager.default.removeItem(at: Self.stateFile(session, "text"))
            try FileManager.default.createDirectory(at: Self.stateFile(session, "text"), withIntermediateDirectories: true)
            try Data("lector-reading 1\ntext k\nstate paused\nsentence 0\noffset 0\nrate 175\npitch 50\n".utf8)
                .write(to: Self.stateFile(session))
            try await Self.endDaemon(session, signal: SIGKILL)
            let second = try await session.startDaemon()
            #expect(try await session.status().state == "stopped")
            #expect(second.stderr.split(separator: "\n").filter { $0.contains("cannot restore") }.count == 1, "\(second.stderr)")
            try FileManager.default.removeItem(at: Self.stateFile(session, "text"))
        }
    }
}

extension Integration.SavedReading {
    @Test("after a logout while reading, MPRIS Play on the new daemon goes on from the last sentence heard")
    func mprisPlayAfterLogout() async throws {
        let session = try await world(.daemon)
        let before = try await Self.readUntilSentence(session, 2)
        try await Self.endDaemon(session, signal: SIGTERM)
        try await session.startDaemon()
        let mark = session.recorder.mark()
        let play = try await session.run(
            "gdbus",
            ["call", "--session", "--dest", "org.mpris.MediaPlayer2.lector", "--object-path", "/org/mpris/MediaPlayer2",
             "--method", "org.mpris.MediaPlayer2.Player.Play"], timeout: 10)
        #expect(play.status == 0, "\(play)")
        #expect(await session.recorder.waitForSpeech(after: mark, timeout: 3) != nil, "nothing heard after Play")
        let after = try await session.status()
        #expect(after.state == "reading" && after.sentence == before.sentence, "\(after) after \(before)")
        try await session.quiesce()
    }
}
