import Foundation
import Testing

extension Integration {
    /// The files Lector reads back when it starts (`$XDG_STATE_HOME/lector/reading`, `text`, `bookmarks`,
    /// `ducked`, and `$XDG_CONFIG_HOME/lector/config`) are not trusted: a link to a device, a FIFO, a huge file
    /// or a directory in their place is refused in one line each, and the daemon starts empty, at once and
    /// small. What the daemon writes there reads back whole, whatever the title and URL it was given.
    @Suite(.privateSession)
    struct StateFiles {
        /// What is put in place of a file.
        enum Hostile: String, CaseIterable {
            case deviceLink = "a symbolic link to /dev/zero"
            case fifo = "a FIFO"
            case huge = "a 200 MB (sparse) regular file"
            case directory = "a directory"

            func make(at url: URL) throws {
                let fm = FileManager.default
                try fm.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try? fm.removeItem(at: url)
                switch self {
                case .deviceLink: try fm.createSymbolicLink(atPath: url.path, withDestinationPath: "/dev/zero")
                case .fifo: try #require(mkfifo(url.path, 0o600) == 0, "mkfifo \(url.path)")
                case .huge:
                    try #require(fm.createFile(atPath: url.path, contents: Data("lector-reading 2\n".utf8)))
                    try #require(truncate(url.path, 200_000_000) == 0, "truncate \(url.path)")
                case .directory: try fm.createDirectory(at: url, withIntermediateDirectories: true)
                }
            }
        }

        /// The peak resident memory (VmHWM) of the daemon `pid`, in bytes (0 when it cannot be read).
        static func peakMemory(_ pid: Int32) -> Int {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                  let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
                  let kB = Int(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
            return kB * 1024
        }

        /// Generous bound on a daemon's peak memory when it starts with nothing to restore (debug builds
        /// included; the `/dev/zero` link took 1.5 GB in 2 s before it was refused).
        static let memoryBound = 150 << 20

        static func stateFile(_ session: PrivateSession, _ name: String) -> URL {
            session.directory.appendingPathComponent("state/lector/\(name)")
        }

        static func configFile(_ session: PrivateSession) -> URL {
            session.directory.appendingPathComponent("config/lector/config")
        }

        /// Ends every daemon of the session (one that hung at start too) and removes the state and config files.
        static func reset(_ session: PrivateSession) async throws {
            while let daemon = session.runningDaemon { await daemon.stop(signal: SIGKILL, grace: 1) }
            if await session.nameOwner(Lector.busName) != nil {
                try await Integration.SavedReading.endDaemon(session, signal: SIGKILL)
            }
            for name in ["reading", "text", "bookmarks", "ducked"] { try? FileManager.default.removeItem(at: stateFile(session, name)) }
            try? FileManager.default.removeItem(at: configFile(session))
        }

        /// Starts a daemon with `files` made `hostile`; expects it to own its name (within the harness's
        /// 10 s), to log exactly one line naming each file, to start empty, and to stay small.
        static func expectRefused(_ hostile: Hostile, _ files: [URL], _ session: PrivateSession) async throws {
            for file in files { try hostile.make(at: file) }
            let start = ContinuousClock.now
            let daemon = try await session.startDaemon()
            let owned = ContinuousClock.now - start
            print("\(hostile.rawValue) as \(files.map(\.lastPathComponent)): bus name owned after \(owned)")
            let status = try await session.status()
            #expect(status.exitStatus == 0 && status.state == "stopped" && status.sentence == "", "\(status)")
            let toggle = try await session.lector(["toggle"])
            #expect(toggle.status == 1 && toggle.stderr.contains("nothing to play"), "\(toggle)")
            let log = daemon.stderr.split(separator: "\n")
            for file in files {
                let path = file.path.replacingOccurrences(of: session.directory.path, with: "")
                let lines = log.filter { $0.contains(path) }
                #expect(lines.count == 1, "\(hostile.rawValue) as \(path): \(lines.count) log lines\n\(daemon.stderr)")
            }
            let peak = peakMemory(daemon.pid)
            print("peak memory: \(peak >> 20) MiB")
            #expect(peak > 0 && peak < memoryBound, "peak memory \(peak >> 20) MiB")
        }

        /// Each kind of hostile file in place of every file read at start: first `reading` with the config,
        /// bookmarks and ducked list; then `text` behind a valid `reading`.
        static func check(_ hostile: Hostile) async throws {
            let session = try await world(.bare)
            try await Self.reset(session)
            try await expectRefused(
                hostile, [stateFile(session, "reading"), configFile(session), stateFile(session, "bookmarks"),
                          stateFile(session, "ducked")], session)
            try await Self.reset(session)
            try FileManager.default.createDirectory(
                at: stateFile(session, "reading").deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data("lector-reading 1\ntext k\nstate paused\nsentence 0\noffset 0\nrate 175\npitch 50\n".utf8)
                .write(to: stateFile(session, "reading"))
            try await expectRefused(hostile, [stateFile(session, "text")], session)
            try await Self.reset(session)
        }

        @Test("a link to /dev/zero in place of reading, text, config, bookmarks, ducked: one line each, started empty")
        func deviceLinks() async throws { try await Self.check(.deviceLink) }

        @Test("a FIFO in place of reading, text, config, bookmarks, ducked: one line each, started empty")
        func fifos() async throws { try await Self.check(.fifo) }

        @Test("a 200 MB file in place of reading, text, config, bookmarks, ducked: one line each, started empty")
        func hugeFiles() async throws { try await Self.check(.huge) }

        @Test("a directory in place of reading, text, config, bookmarks, ducked: one line each, started empty")
        func directories() async throws { try await Self.check(.directory) }

        /// Speaks `numbered` with `options`, waits until sentence `n` (1-based) is heard, then pauses.
        static func speakAndPause(_ session: PrivateSession, options: [String: String], at n: Int) async throws -> LectorStatus {
            let reply = BusClient.speak(address: session.busAddress, text: Integration.SavedReading.numbered, options: options)
            if case .error(let name, let message) = reply { Issue.record("Speak: \(name): \(message)") }
            let status = try await session.waitForSentence(containing: "number \(n) ", timeout: 30)
            try #require(status.sentence?.contains("number \(n) ") == true, "\(status)\n\(session.daemonLogs())")
            #expect(try await session.lector(["pause"]).status == 0)
            return try await session.waitForState("paused", timeout: 5)
        }

        /// The `key value` lines of a state file, values decoded as the daemon escapes them.
        static func fields(_ url: URL) throws -> [(key: String, value: String)] {
            let text = try String(contentsOf: url, encoding: .utf8)
            return text.split(separator: "\n").map { line in
                let key = String(line.prefix { $0 != " " })
                var value = ""
                var escaped = line.dropFirst(key.count + 1).unicodeScalars[...]
                while let c = escaped.popFirst() {
                    guard c == "\\", let e = escaped.popFirst() else { value.unicodeScalars.append(c); continue }
                    switch e {
                    case "n": value += "\n"
                    case "r": value += "\r"
                    case "t": value += "\t"
                    case "x":
                        let hex = String(String.UnicodeScalarView(escaped.prefix(2)))
                        escaped = escaped.dropFirst(2)
                        value.unicodeScalars.append(Unicode.Scalar(UInt8(hex, radix: 16)!))
                    default: value.unicodeScalars.append(e)
                    }
                }
                return (key, value)
            }
        }

        @Test("a 70 KB title, and a title and URL with line breaks, survive a restart exactly, with the text and sentence")
        func longAndHostileFieldsRoundTrip() async throws {
            let session = try await world(.bare)
            try await Self.reset(session)
            try await session.startDaemon()
            let title = (1...6000).map { "Chapter \($0)\n" }.joined() + "tab\there, back\\slash \\n, bell \u{7}, CR\r\nend"
            let url = "file:///tmp/book.txt\ntext injected\nstate reading\\n\r\u{1}"
            try #require(title.utf8.count > 70_000)
            // Listened to: the title is also the stream's name (media.name), cut for the sound server, which
            // drops a client whose stream properties are too large.
            let paused = try await Self.speakAndPause(
                session, options: ["title": title, "url": url, "language": "en-US"], at: 3)
            let lector = try session.bus(Lector.busName)
            func text() throws -> String? {
                try lector.call(path: Lector.objectPath, interface: "org.freedesktop.DBus.Properties", "Get",
                                [.string(Lector.interface), .string("Text")])[0].unboxed.string
            }
            try await session.ensureMPRIS()
            let before = try session.bus().metadata
            try await Integration.SavedReading.endDaemon(session, signal: SIGTERM)

            // One line per field: nothing injected, and title and URL kept whole.
            let saved = try Self.fields(Self.stateFile(session, "reading"))
            let known: Set = ["lector-reading", "text", "state", "sentence", "offset", "language", "voice", "rate", "pitch", "title", "url"]
            #expect(saved.allSatisfy { known.contains($0.key) }, "\(saved.map(\.key))")
            #expect(saved.filter { $0.key == "title" }.map(\.value) == [title])
            #expect(saved.filter { $0.key == "url" }.map(\.value) == [url])
            #expect(saved.filter { $0.key == "state" }.map(\.value) == ["paused"])

            try await session.startDaemon()
            let restored = try await session.status()
            #expect(restored.state == "stopped" && restored.sentence == paused.sentence, "\(restored) after \(paused)\n\(session.daemonLogs())")
            #expect(try text() == Integration.SavedReading.numbered)
            try await session.ensureMPRIS()
            let after = try session.bus().metadata
            #expect(after["xesam:album"]?.string == before["xesam:album"]?.string && before["xesam:album"]?.string != nil,
                    "title: \(after["xesam:album"]?.string?.prefix(80) ?? "none") after \(before["xesam:album"]?.string?.prefix(80) ?? "none")")
            #expect(after["xesam:url"]?.string == before["xesam:url"]?.string && before["xesam:url"]?.string != nil,
                    "url: \(after["xesam:url"]?.string ?? "none") after \(before["xesam:url"]?.string ?? "none")")
            try await Self.reset(session)
        }

        @Test("a URL with a line break and tabs adds no line to bookmarks, and its bookmark works after a restart")
        func bookmarkURLCannotInjectLines() async throws {
            let session = try await world(.bare)
            try await Self.reset(session)
            try await session.startDaemon()
            let url = "file:///tmp/lector-book.txt\n0\t9\tfile:///tmp/injected.txt\t"
            let paused = try await Self.speakAndPause(session, options: ["url": url, "language": "en-US"], at: 3)
            try await Integration.SavedReading.endDaemon(session, signal: SIGTERM)
            let lines = try String(contentsOf: Self.stateFile(session, "bookmarks"), encoding: .utf8).split(separator: "\n")
            #expect(lines.count == 1, "\(lines)")
            #expect(lines.first?.split(separator: "\t").count == 3, "\(lines)")

            // A new daemon, the reading forgotten: the same text from the same URL starts at its bookmark.
            try FileManager.default.removeItem(at: Self.stateFile(session, "reading"))
            try await session.startDaemon()
            let reply = BusClient.speak(address: session.busAddress, text: Integration.SavedReading.numbered,
                                        options: ["url": url, "language": "en-US"])
            if case .error(let name, let message) = reply { Issue.record("Speak: \(name): \(message)") }
            let resumed = try await session.waitForState("reading", timeout: 5)
            #expect(resumed.sentence == paused.sentence, "\(resumed) after \(paused)\n\(session.daemonLogs())")
            try await Self.reset(session)
        }
    }
}
