import GLibKit
import Testing
@testable import LectorDaemon

/// `SynthesisBudget`, `WorkClock` and `WorkerExit`: what a request may take of the Piper worker, and what the
/// end of a worker means for its request.
@Suite struct SynthesisBudgetTests {
    @Test("a request's audio is bounded by its text: generous for ordinary text, more for symbols, scaled by rate",
          arguments: [
              // (text, rate wpm, at least s, at most s)
              ("Hello there.", 175, 9.0, 11.0),
              (String(repeating: "word ", count: 200), 175, 400.0, 406.0),
              (String(repeating: "word ", count: 200), 350, 200.0, 203.0),
              (String(repeating: "word ", count: 200), 1000, 157.0, 158.0),  // clamped to 450 wpm, as the worker
              ("∑∑∑∑", 175, 17.0, 17.3),
          ])
    func audioLimit(text: String, rate: Int, atLeast: Double, atMost: Double) {
        let seconds = Double(SynthesisBudget.audioLimit(text: text, rate: rate, sampleRate: 22_050)) / 22_050
        #expect(seconds >= atLeast && seconds <= atMost, "\(seconds) s")
        // Far more than the text takes: at least 5 times the 6-scalars-a-word estimate at 175 wpm.
        let estimate = Double(text.unicodeScalars.count) / 6 / Double(rate) * 60
        #expect(seconds > estimate * 5)
    }

    @Test("audio past the limit is an overrun with one line; up to it, progress")
    func overrun() {
        var budget = SynthesisBudget(text: "Hi.", rate: 175, sampleRate: 1_000)
        let limit = budget.audioLimit
        let below = budget.audio(limit - 1), at = budget.audio(1)
        #expect(below == .progress && at == .progress)
        guard case .overrun(let line) = budget.audio(1) else { Issue.record("no overrun"); return }
        #expect(line.contains("more audio than its text can take") && line.contains("3 characters") && !line.contains("\n"))
    }

    @Test("signs of life are progress only within the allowance, which grows with the text and the model load",
          arguments: [
              // (scalars, loads model, µs at work, progress)
              (10, false, 2_900_000, true),
              (10, false, 3_100_000, false),
              (10, true, 22_900_000, true),
              (10, true, 23_100_000, false),
              (100, false, 11_900_000, true),
              (100, false, 12_100_000, false),
          ])
    func heartbeats(scalars: Int, loadsModel: Bool, at: Int64, progress: Bool) {
        var budget = SynthesisBudget(text: String(repeating: "a", count: scalars), rate: 175, sampleRate: 22_050)
        #expect(budget.heartbeat(at: 5) == .progress)  // before its first frame
        budget.begin(at: 0, loadsModel: loadsModel)
        budget.begin(at: 50_000_000, loadsModel: false)  // later calls change nothing
        #expect(budget.heartbeat(at: at) == (progress ? .progress : .notProgress))
        budget.restart()
        let restarted = budget
        #expect(!restarted.hasBegun && restarted.samples == 0 && restarted.heartbeat(at: at) == .progress)
    }

    @Test("the work clock stops while the output is held")
    func workClock() {
        var clock = WorkClock(now: 100)
        #expect(clock.reading(at: 150) == 50)
        clock.hold(at: 200)
        clock.hold(at: 250)
        #expect(clock.reading(at: 1_000) == 100)
        clock.release(at: 1_000)
        clock.release(at: 1_100)
        #expect(clock.reading(at: 1_200) == 300)
    }

    @Test("the end of a worker: its line, whether it is a failure, whether it came from outside",
          arguments: [
              (WorkerKill?.some(.stalled), GLibKit.ExitStatus.signaled(9), "stopped responding (nothing for 2000 ms)", true, true),
              (.some(.stuckOnCancel), .signaled(9), "was replaced", false, false),
              (.some(.malformed("bad kind")), .signaled(9), "malformed frame (bad kind)", true, false),
              (.some(.noProgress), .signaled(9), "made no progress", true, false),
              (.some(.overran("too much audio")), .signaled(9), "too much audio", true, false),
              (nil, .exited(3), "exited with status 3", true, false),
              (nil, .signaled(6), "Piper crashed (signal 6)", true, false),
              (nil, .signaled(9), "was killed", true, true),
          ])
    func workerExit(killed: WorkerKill?, status: GLibKit.ExitStatus, line: String, failure: Bool, fromOutside: Bool) {
        let end = WorkerExit(killed: killed, status: status, stallLimit: 2_000_000, engine: "Piper")
        #expect(end.reason.contains(line), "\(end.reason)")
        #expect(end.failure == failure && end.fromOutside == fromOutside)
    }
}
