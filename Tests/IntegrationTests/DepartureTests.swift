import Foundation
import Testing

extension Integration.SavedReading {
    /// A `lector read --wait` that reaches an idle daemon as it exits: served by that daemon or by the one the
    /// command starts when the first refuses it (`Error.Exiting`) or leaves without replying; never accepted
    /// and then dropped. The daemon is frozen (SIGSTOP) past its idle exit with the call queued on its socket,
    /// then thawed: its exit and the call come due in the same main-loop iteration, every time.
    @Test("lector read as an idle daemon exits: exit 0, the text read to its end and saved, whichever daemon serves it")
    func readAtTheIdleExit() async throws {
        let session = try await world(.bare)
        if await session.nameOwner(Lector.busName) != nil { try await Self.endDaemon(session, signal: SIGTERM) }
        // Every daemon of this world, those the command starts too, exits 0.3 s after it stops.
        let config = session.directory.appendingPathComponent("config/lector/config")
        try FileManager.default.createDirectory(at: config.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("[daemon]\nidle-exit=0.005\n".utf8).write(to: config)
        defer { try? FileManager.default.removeItem(at: config) }
        for round in 0..<4 {
            let daemon = try await session.startDaemon()
            // A first text read to its end: the engine's worker is up, and the idle exit is armed from then.
            let warm = try await session.lector(["read", "--wait", "--lang", "en", "Warm."])
            #expect(warm.status == 0, "round \(round): \(warm)")
            kill(daemon.pid, SIGSTOP)
            try await Task.sleep(for: .milliseconds(400))  // the idle exit is past due
            let text = "Round \(round) is read to its end."
            async let read = session.lector(["read", "--wait", "--lang", "en", text])
            try await Task.sleep(for: .milliseconds(100 + 20 * round))  // the call waits on the frozen daemon
            kill(daemon.pid, SIGCONT)
            let result = try await read
            #expect(result.status == 0, "round \(round): \(result); \(daemon.stderr.suffix(600))")
            // Whichever daemon read it stops and exits 0.3 s later with the text saved.
            let gone = await eventually(timeout: 15, every: .milliseconds(20)) { await session.nameOwner(Lector.busName) == nil }
            #expect(gone, "round \(round): a daemon stayed")
            _ = await daemon.waitForExit(timeout: 5)
            let saved = (try? String(contentsOf: Self.stateFile(session, "text"), encoding: .utf8)) ?? ""
            #expect(saved.contains(text), "round \(round): the saved text is \(saved.prefix(80).debugDescription)")
        }
    }
}
