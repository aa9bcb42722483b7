import Foundation
import Testing

extension Integration.Documents {
    /// `Get` of one property of Lector's interface while a given text is loaded: the time `gdbus call` takes
    /// (its own start included), and its output's size in bytes (piped to `wc -c`, not kept).
    static func get(_ session: PrivateSession, _ property: String) async throws -> (seconds: Double, bytes: Int) {
        let start = ContinuousClock.now
        let result = try await session.run("sh", ["-c", """
            gdbus call --session --dest \(Lector.busName) --object-path /org/lector/Lector \
              --method org.freedesktop.DBus.Properties.Get org.lector.Lector1 \(property) | wc -c
            """], timeout: 60)
        let seconds = Double((ContinuousClock.now - start).components.attoseconds) / 1e18
            + Double((ContinuousClock.now - start).components.seconds)
        return (seconds, Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0)
    }

    @Test("a book of 100,000 chapters: Get(State) costs what State holds, and Chapters is built in one pass")
    func hundredThousandChapters() async throws {
        let session = try await world()
        let book = session.directory.appendingPathComponent("chapters.md")
        let chapters = (1...100_000).map { "# Chapter \($0)\n\nThe text of chapter \($0) is short.\n" }
        try Data(chapters.joined(separator: "\n").utf8).write(to: book)
        let read = try await session.lector(["read", "--file", book.path], timeout: 60)
        try #require(read.status == 0, "\(read)")
        _ = try await session.waitForState("reading", timeout: 20)
        var states: [Double] = []
        for _ in 0..<5 { states.append(try await Self.get(session, "State").seconds) }
        let all = try await Self.get(session, "Chapters")
        print(String(format: "100,000 chapters: Get(State) %.3f s at most (%@), Get(Chapters) %.3f s for %d bytes",
                     states.max() ?? 0, states.map { String(format: "%.3f", $0) }.joined(separator: " "), all.seconds, all.bytes))
        // Generous: a gdbus process per call; it took seconds when every Get built every property.
        #expect(states.max() ?? 0 < 0.5, "\(states)")
        #expect(all.bytes > 100_000 * 20, "Chapters: \(all.bytes) bytes")
        // A daemon that starts with this book saved: how long until it answers (printed, not bounded).
        _ = try await session.lector(["stop"])
        try await Integration.SavedReading.endDaemon(session, signal: SIGTERM)
        let start = ContinuousClock.now
        try await session.startDaemon()
        _ = try await session.lector(["status"], timeout: 120)
        let restored = ContinuousClock.now - start
        print("a daemon restoring the 100,000-chapter book answers after \(restored)")
        #expect(restored < .seconds(5), "it took 20 s when a restored text was cut whole first")
        // The tests after this one start with a short saved reading.
        _ = try await session.lector(["read", "--wait", "--lang", "en", "Short."])
    }

    @Test("a 32 MiB text file on a bus that takes 32 MiB messages: Get(Text) gets at most 30 MiB and the daemon stays on it")
    func textOverTheBusLimit() async throws {
        let session = try await world()
        // A bus of its own: Debian's session bus with dbus-daemon's built-in message limit (32 MiB; Debian's
        // session.conf raises it to 1 GB). A message over it makes the bus disconnect its sender.
        let standard = try String(contentsOfFile: "/usr/share/dbus-1/session.conf", encoding: .utf8)
        let config = session.directory.appendingPathComponent("small-bus.conf")
        try Data(standard
            .replacingOccurrences(of: "<listen>unix:tmpdir=/tmp</listen>",
                                  with: "<listen>unix:path=\(session.directory.path)/small-bus</listen>")
            .replacingOccurrences(of: "<limit name=\"max_message_size\">1000000000</limit>",
                                  with: "<limit name=\"max_message_size\">33554432</limit>").utf8).write(to: config)
        try #require(String(decoding: try Data(contentsOf: config), as: UTF8.self).contains(">33554432<"), "session.conf changed")
        let bus = try session.spawn("dbus-daemon", ["--config-file=\(config.path)", "--nofork", "--nopidfile", "--print-address=1"],
                                    tag: "small-bus")
        defer { bus.stopNow() }
        let address = await poll(timeout: 10, { bus.stdout.trimmingCharacters(in: .whitespacesAndNewlines) },
                                 until: { !$0.isEmpty || !bus.isRunning })
        try #require(!address.isEmpty, "dbus-daemon: \(bus.stderr)")
        // Its own state folder: the session's may hold a large saved reading (the book of the test before).
        let environment = ["DBUS_SESSION_BUS_ADDRESS": address,
                           "XDG_STATE_HOME": session.directory.appendingPathComponent("small-bus-state").path]
        let daemon = try session.spawn(Paths.lectorBinary, ["daemon"], tag: "small-bus-daemon", environment: environment)
        defer { daemon.stopNow() }

        let file = session.directory.appendingPathComponent("large.txt")
        let sentence = Data("A sentence of a very long text is here, and it is read. ".utf8)
        var data = Data(capacity: 32 << 20)
        while data.count + sentence.count <= 32 << 20 { data += sentence }
        data += Data(repeating: UInt8(ascii: "a"), count: (32 << 20) - data.count)  // the largest file Lector reads
        try data.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let read = try await session.lector(["read", "--file", file.path], timeout: 60, environment: environment)
        try #require(read.status == 0, "\(read)")
        let start = ContinuousClock.now
        let text = try await session.run("sh", ["-c", """
            gdbus call --session --dest \(Lector.busName) --object-path /org/lector/Lector \
              --method org.freedesktop.DBus.Properties.Get org.lector.Lector1 Text | wc -c
            """], timeout: 60, environment: environment)
        let bytes = Int(text.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        print("Get(Text) of a 32 MiB text: \(bytes) bytes of gdbus output in \(ContinuousClock.now - start)")
        #expect(bytes > 30 << 20 && bytes < (30 << 20) + 4_096, "\(bytes) bytes; \(text.stderr.prefix(300))")
        let status = try await session.lector(["status"], environment: environment)
        #expect(daemon.isRunning && status.status == 0, "the daemon left the bus: \(status); \(daemon.stderr.suffix(600))")
        _ = try await session.lector(["stop"], environment: environment)
    }
}
