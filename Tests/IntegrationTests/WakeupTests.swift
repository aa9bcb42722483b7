import Foundation
import Testing

extension Integration.SavedReading {
    /// Context switches of every thread of process `pid` (voluntary and not, `/proc/PID/task/*/status`):
    /// each is a wake-up or a preemption; a process that nothing wakes adds none.
    static func contextSwitches(_ pid: Int32) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.reduce(0) { total, task in
            let status = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)) ?? ""
            return total + status.split(separator: "\n").reduce(0) { sum, line in
                guard line.hasPrefix("voluntary_ctxt_switches:") || line.hasPrefix("nonvoluntary_ctxt_switches:") else { return sum }
                return sum + (Int(line.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? "") ?? 0)
            }
        }
    }

    @Test("paused, and stopped, the daemon is not woken at all: its threads switch no context in 3 s")
    func noWakeupsWhilePausedOrStopped() async throws {
        let session = try await world(.bare)
        if await session.nameOwner(Lector.busName) != nil { try await Self.endDaemon(session, signal: SIGTERM) }
        let daemon = try await session.startDaemon(["--idle-exit", "0"])
        defer { daemon.stopNow() }
        _ = try await session.lector(["read", "--lang", "en", Lector.veryLong])
        _ = try await session.waitForState("reading", timeout: 10)
        try await Task.sleep(for: .seconds(2))
        var counts: [String: Int] = [:]
        for (state, command) in [("paused", "pause"), ("stopped", "stop")] {
            _ = try await session.lector([command])
            _ = try await session.waitForState(state, timeout: 5)
            // The stream is let go 3 s after a pause, the worker's idle minute is far: then nothing is due.
            try await Task.sleep(for: .seconds(4))
            let before = Self.contextSwitches(daemon.pid)
            try await Task.sleep(for: .seconds(3))
            counts[state] = Self.contextSwitches(daemon.pid) - before
        }
        print("daemon context switches in 3 s: paused \(counts["paused"] ?? -1), stopped \(counts["stopped"] ?? -1)")
        #expect(counts["paused"] == 0 && counts["stopped"] == 0, "\(counts)")
    }
}
