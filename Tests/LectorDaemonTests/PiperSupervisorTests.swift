import Testing
@testable import LectorDaemon

/// `PiperSupervisor`: when a Piper voice falls back to eSpeak NG, and when the Piper worker is given back.
@Suite struct PiperSupervisorTests {
    typealias Action = PiperSupervisor.Action

    @Test("a voice whose requests are lost twice falls back at the second, with one line; others are unaffected")
    func twoFailures() {
        var s = PiperSupervisor(idle: 1_000)
        let r1 = s.usesPiper("piper:a", files: "1@1")
        #expect(r1)
        let first = s.lost("piper:a", reason: "crashed", files: "1@1", fallback: "English")
        #expect(first.reread == false && first.actions.isEmpty)
        let r2 = s.lost("piper:b", reason: "crashed", files: "2@2", fallback: "German")
        #expect(r2.reread == false)
        let second = s.lost("piper:a", reason: "hung", files: "1@1", fallback: "English")
        #expect(second.reread)
        #expect(second.actions == [.log("the Piper worker failed 2 times with piper:a (last: hung); reading with eSpeak NG's English instead")])
        let r3 = s.usesPiper("piper:a", files: "1@1")
        #expect(!r3)
        let r4 = s.usesPiper("piper:b", files: "2@2")
        #expect(r4)
        // Later losses of the voice (requests already at the worker) are read by eSpeak NG without a line.
        let later = s.lost("piper:a", reason: "hung", files: "1@1", fallback: "English")
        #expect(later.reread && later.actions.isEmpty)
    }

    @Test("an unusable voice falls back at once with one line, and is tried again once its files change")
    func unusable() {
        var s = PiperSupervisor()
        let once = s.unusable("piper:a", reason: "cannot be loaded", files: "1@1", fallback: "English")
        #expect(once == [.log("cannot be loaded; reading with eSpeak NG's English instead")])
        let r5 = s.unusable("piper:a", reason: "cannot be loaded", files: "1@1", fallback: "English")
        #expect(r5.isEmpty)
        let r6 = s.usesPiper("piper:a", files: "1@1")
        #expect(!r6)
        let r7 = s.usesPiper("piper:a", files: nil)
        #expect(!r7)
        let r8 = s.usesPiper("piper:a", files: "5@9")
        #expect(r8)
        #expect(s.failures["piper:a"] == nil)
    }

    @Test("a worker that cannot start gives up Piper for every voice, with one line, and ends the worker")
    func piperUnavailable() {
        var s = PiperSupervisor()
        let actions = s.piperUnavailable("not installed")
        #expect(actions == [.log("Piper voices cannot be used: not installed; reading with eSpeak NG voices instead"), .endWorker])
        let r9 = s.piperUnavailable("again")
        #expect(r9.isEmpty)
        let r10 = s.usesPiper("piper:any", files: "1@1")
        #expect(!r10)
        let r11 = s.lost("piper:any", reason: "x", files: nil, fallback: "English")
        #expect(r11 == (true, []))
    }

    @Test("the idle timer runs only while no Piper request is pending, whatever ended the last",
          arguments: [
              // (pending counts in turn, worker runs, the actions of the last)
              ([1], true, [Action.cancelIdle]),
              ([1, 2], true, []),
              ([1, 0], true, [.armIdle(milliseconds: 500)]),
              ([1, 0], false, []),
              ([0], true, []),
              ([2, 1, 0], true, [.armIdle(milliseconds: 500)]),
              ([1, 0, 1], true, [.cancelIdle]),
          ])
    func idle(counts: [Int], workerRuns: Bool, last: [Action]) {
        var s = PiperSupervisor(idle: 500)
        var actions: [Action] = []
        for count in counts { actions = s.piperRequests(count, workerRuns: workerRuns) }
        #expect(actions == last)
    }

    @Test("the idle timer ends only a worker with no Piper request pending")
    func idleFired() {
        let s = PiperSupervisor(idle: 500)
        #expect(s.idleFired(pending: 1).isEmpty)
        #expect(s.idleFired(pending: 0) == [.endWorker])
        #expect(PiperSupervisor.idleMilliseconds == 60_000)
    }
}
