import Foundation
import Testing

extension Integration {
    /// The engine fails in every way it can: it aborts in the middle of a text, is killed again and again,
    /// stops answering, or is busy with a long text nobody wants any more. Each costs at most the sentence it
    /// was on; the daemon keeps answering, runs one worker at a time and leaves no zombie.
    @Suite(.privateSession)
    struct EngineFaults {
        /// `LECTOR_TEST_WORKER_FAULT` (Sources/Synthesis/Worker.swift): abort or hang on texts containing a word.
        static func fault(_ spec: String) -> [String: String] { ["LECTOR_TEST_WORKER_FAULT": spec] }

        /// The real eSpeak NG 1.51 crash vector of Tests/Fixtures/bad-inputs, as one sentence.
        static var crashingSentence: String {
            get throws {
                let url = Paths.badInputs.appendingPathComponent("engine-crash-apostrophes.txt")
                return try String(contentsOf: url, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            }
        }

        /// The daemon's children, zombies included, with their state letter (`R`, `S`, `T`, `Z`, …).
        static func childStates(_ pid: Int32) -> [(pid: Int32, state: Character)] {
            Load.children(pid, includingZombies: true).compactMap { child in
                guard let stat = try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8),
                      let close = stat.lastIndex(of: ")") else { return nil }
                let rest = stat[stat.index(after: close)...].drop(while: { $0 == " " })
                return rest.first.map { (child, $0) }
            }
        }

        /// User and system CPU time of `pid` so far, in seconds (/proc/PID/stat, clock ticks of 1/100 s).
        static func cpuSeconds(_ pid: Int32) -> Double {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return 0 }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            // After the name: state is field 3, utime 14 and stime 15 (proc(5)), so indexes 11 and 12 here.
            return (Double(fields[11]) ?? 0) / 100 + (Double(fields[12]) ?? 0) / 100
        }

        /// What a watch over a reading saw: the worst answer time, the most workers at once, the sentences heard.
        struct Watch {
            var slowestAnswer = 0.0
            var unanswered = 0
            var mostWorkers = 0
            var sentences: Set<Int> = []
            var finalState = ""
        }

        /// Polls the daemon every 20 ms until it is stopped (or `timeout` passes): each State call is timed,
        /// the workers alive are counted, and the sentence being read is noted.
        static func watch(_ bus: BusConnection, daemon: Int32, timeout: Double) async -> Watch {
            var seen = Watch()
            let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
            while ContinuousClock.now < deadline {
                let asked = ContinuousClock.now
                let state = bus.lectorState
                seen.slowestAnswer = max(seen.slowestAnswer, seconds(ContinuousClock.now - asked))
                guard let state else { seen.unanswered += 1; continue }
                seen.finalState = state
                seen.mostWorkers = max(seen.mostWorkers, Load.children(daemon).count)
                if state == "reading", let sentence = bus.lectorSentence { seen.sentences.insert(sentence.index) }
                if state == "stopped" { break }
                try? await Task.sleep(for: .milliseconds(20))  // the watch's sampling period
            }
            return seen
        }

        @Test("eSpeak NG aborts on the second of four sentences: one log line, the two after it heard, one worker, every call answered")
        func abortInTheMiddle() async throws {
            let session = try await world(.bare)
            let daemon = try await session.startDaemon()
            defer { Task { await daemon.stop() } }
            let bus = try BusConnection(address: session.busAddress)
            // Paragraphs, so that the crash vector (which starts with a small letter) is a sentence of its own.
            let text = "The first sentence is fine.\n\n\(try Self.crashingSentence).\n\nThe third sentence comes after the crash. "
                + "The fourth sentence ends it."
            #expect(try await session.lector(["read", "--lang", "en", text]).status == 0)
            let seen = await Self.watch(bus, daemon: daemon.pid, timeout: 30)
            print("abort in the middle: slowest answer \(String(format: "%.3f", seen.slowestAnswer)) s, \(seen.unanswered) unanswered, at most \(seen.mostWorkers) workers, sentences \(seen.sentences.sorted())")
            #expect(seen.unanswered == 0 && seen.slowestAnswer < 1, "slowest answer \(seen.slowestAnswer) s, \(seen.unanswered) unanswered\n\(session.daemonLogs())")
            #expect(seen.mostWorkers <= 1, "\(seen.mostWorkers) workers at once")
            #expect(seen.sentences.isSuperset(of: [2, 3]), "sentences heard: \(seen.sentences.sorted())\n\(session.daemonLogs())")
            #expect(seen.finalState == "stopped", "\(seen)")
            let lines = daemon.stderr.split(separator: "\n").filter { $0.contains("skipped it") }
            #expect(lines.count == 1 && lines.first?.contains("sentence 2") == true, "\(lines)")
        }

        @Test("the worker killed 50 times in a row: one worker at a time, no zombie, every call answered, then reading works")
        func killedFiftyTimes() async throws {
            let session = try await world(.bare)
            let daemon = try await session.startDaemon()
            defer { Task { await daemon.stop() } }
            let bus = try BusConnection(address: session.busAddress)
            var kills = 0, mostWorkers = 0, slowest = 0.0
            var killed: Set<Int32> = []
            var waits: [Double] = []
            let began = ContinuousClock.now
            let deadline = began + .seconds(120)
            while kills < 50 && ContinuousClock.now < deadline {
                // A new text each time: its first sentence needs a worker, started on demand or after a back-off.
                let speak = BusClient.speak(address: session.busAddress, text: "Number \(kills). \(Lector.longRun)",
                                            options: ["language": "en"])
                #expect(speak.value != nil, "\(speak)")
                var worker: Int32?
                let asked = ContinuousClock.now
                let wait = asked + .seconds(5)
                while worker == nil && ContinuousClock.now < wait {
                    let asked = ContinuousClock.now
                    let state = bus.lectorState
                    slowest = max(slowest, seconds(ContinuousClock.now - asked))
                    #expect(state != nil, "the daemon does not answer")
                    let alive = Load.children(daemon.pid)
                    mostWorkers = max(mostWorkers, alive.count)
                    worker = alive.first { !killed.contains($0) }
                    if worker == nil { try await Task.sleep(for: .milliseconds(5)) }  // sampling: each turn is timed
                }
                guard let worker else { continue }
                waits.append(seconds(ContinuousClock.now - asked))
                kill(worker, SIGKILL)
                killed.insert(worker)
                kills += 1
            }
            print("50 kills: \(kills) in \(String(format: "%.1f", seconds(ContinuousClock.now - began))) s, at most \(mostWorkers) workers, slowest answer \(String(format: "%.3f", slowest)) s, waits for a new worker \(waits.map { String(format: "%.2f", $0) })")
            #expect(kills == 50, "only \(kills) kills in 120 s\n\(session.daemonLogs())")
            // Back-off: once failures pile up, a new worker waits up to a second; never a busy loop.
            let late = waits.dropFirst(10)
            #expect(!late.isEmpty && late.min()! >= 0.5, "waits for a new worker: \(waits)")
            let cpu = Self.cpuSeconds(daemon.pid)
            #expect(cpu < 0.5 * seconds(ContinuousClock.now - began), "the daemon used \(cpu) s of CPU")
            #expect(mostWorkers <= 1 && slowest < 1, "\(mostWorkers) workers at once; slowest answer \(slowest) s")
            _ = try await session.lector(["stop"])
            let (read, audio) = try await session.readAndRecord(["--lang", "en", "Hello again."])
            #expect(read.status == 0 && audio.audibleDuration > 0.2, "\(read) \(audio.summary)\n\(session.daemonLogs())")
            let zombies = Self.childStates(daemon.pid).filter { $0.state == "Z" }
            #expect(zombies.isEmpty, "zombies: \(zombies)")
            #expect(Load.children(daemon.pid).count <= 1)
            #expect(daemon.isRunning)
        }

        @Test("three sentences in a row crash the engine: reading stops with one error, one notification, the rest not skipped through")
        func failuresInARowStop() async throws {
            let session = try await world(.bare)
            let server = try FakeNotificationServer(busAddress: session.busAddress)
            defer { server.stop() }
            let daemon = try await session.startDaemon(environment: Self.fault("abort:Boom"))
            defer { Task { await daemon.stop() } }
            let bus = try BusConnection(address: session.busAddress)
            let text = "Boom one. Boom two. Boom three. Boom four. Boom five. Boom six. The seventh is fine."
            #expect(try await session.lector(["read", "--lang", "en", text]).status == 0)
            let seen = await Self.watch(bus, daemon: daemon.pid, timeout: 20)
            #expect(seen.finalState == "stopped" && !seen.sentences.contains(6), "\(seen)\n\(session.daemonLogs())")
            let crashes = daemon.stderr.split(separator: "\n").filter { $0.contains("skipped it") }
            #expect(crashes.count == 3, "\(crashes)")
            #expect(daemon.stderr.contains("failed on 3 sentences in a row"), "\(session.daemonLogs())")
            _ = await eventually(timeout: 0.3) { !server.notifications.isEmpty }
            #expect(server.notifications.count == 1, "\(server.notifications)")
            // The text is kept: toggle reads it again (and stops again the same way).
            #expect(try await session.status().fields["utterance"] != nil)
        }

        @Test("an engine that stops answering is replaced: its sentence skipped with one line, the next heard; Stop and a new text heard within 1 s")
        func hungEngine() async throws {
            let session = try await world(.bare)
            let daemon = try await session.startDaemon(environment: Self.fault("hang:Stuck"))
            defer { Task { await daemon.stop() } }
            let bus = try BusConnection(address: session.busAddress)
            #expect(try await session.lector(["read", "--lang", "en", "Before the hang. Stuck right here. After the hang comes this."]).status == 0)
            let seen = await Self.watch(bus, daemon: daemon.pid, timeout: 20)
            #expect(seen.sentences.contains(2) && seen.finalState == "stopped", "\(seen)\n\(session.daemonLogs())")
            #expect(seen.unanswered == 0 && seen.slowestAnswer < 1, "\(seen)")
            let lines = daemon.stderr.split(separator: "\n").filter { $0.contains("skipped it") }
            #expect(lines.count == 1 && lines.first?.contains("stopped responding") == true && lines.first?.contains("on sentence 2") == true, "\(lines)")

            // Stuck on the first sentence of a text; Stop, then a new text.
            #expect(try await session.lector(["read", "--lang", "en", "Stuck at once. Never heard."]).status == 0)
            // Time for the request to reach the hung engine: nothing outside the daemon shows that it has.
            try await Task.sleep(for: .milliseconds(200))
            #expect(try await session.lector(["stop"]).status == 0)
            let mark = session.recorder.mark()
            #expect(try await session.lector(["read", "--lang", "en", "A new text is heard at once."]).status == 0)
            let heard = await session.recorder.waitForSpeech(after: mark, timeout: 5)
            print("hung engine: after Stop, a new text heard after \(secs(heard))")
            #expect(heard != nil && heard! < 1.0, "new text heard after \(secs(heard))\n\(session.daemonLogs())")
        }

        @Test("a SIGSTOPped worker: after Stop, a new text is heard within 1 s, from a new worker")
        func stoppedWorker() async throws {
            let session = try await world(.bare)
            let daemon = try await session.startDaemon()
            defer { Task { await daemon.stop() } }
            let start = session.recorder.mark()
            #expect(try await session.lector(["read", "--lang", "en", Lector.sentences]).status == 0)
            _ = await session.recorder.waitForSpeech(after: start, timeout: 5)
            let worker = try #require(Load.children(daemon.pid).first, "no worker")
            // Stopped while it waits for a request (it has synthesized what reading needs for now), so that the
            // new text's request is the one it never answers.
            _ = await eventually(timeout: 10, every: .milliseconds(10)) {
                (try? String(contentsOfFile: "/proc/\(worker)/wchan", encoding: .utf8))?.hasSuffix("pipe_read") == true
            }
            kill(worker, SIGSTOP)
            defer { kill(worker, SIGKILL) }
            #expect(try await session.lector(["stop"]).status == 0)
            let mark = session.recorder.mark()
            #expect(try await session.lector(["read", "--lang", "en", "A new text is heard at once."]).status == 0)
            let heard = await session.recorder.waitForSpeech(after: mark, timeout: 5)
            print("SIGSTOPped worker: after Stop, a new text heard after \(secs(heard))")
            #expect(heard != nil && heard! < 1.0, "new text heard after \(secs(heard))\n\(session.daemonLogs())")
            #expect(!Load.children(daemon.pid).contains(worker), "the stopped worker is still the daemon's child")
        }

        @Test("Stop in a long SSML paragraph: the next text is heard at once, and the paragraph's audio never piles up in memory")
        func longSSMLParagraph() async throws {
            let session = try await world(.bare)
            let daemon = try await session.startDaemon()
            defer { Task { await daemon.stop() } }
            let sentence = "This paragraph goes on and on, one sentence after another, for a very long time. "
            let body = String(repeating: sentence, count: 5_000)  // ~400 KB, hours of speech, one SSML unit
            let file = session.directory.appendingPathComponent("long.ssml")
            try "<speak><p>\(body)</p></speak>".write(to: file, atomically: true, encoding: .utf8)
            let start = session.recorder.mark()
            #expect(try await session.lector(["read", "--lang", "en", "--file", file.path]).status == 0)
            #expect(await session.recorder.waitForSpeech(after: start, timeout: 10) != nil, "\(session.daemonLogs())")
            // Synthesis runs hundreds of times faster than playback: without a bound in samples, the
            // paragraph's audio would take tens of MB a second.
            var peak = 0
            for _ in 0..<40 {  // the span under test: 4 s of reading, sampled every 0.1 s
                peak = max(peak, Load.residentKiB(daemon.pid))
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(peak < 60_000, "daemon RSS \(peak) KiB while reading a 400 KB paragraph")
            #expect(try await session.lector(["stop"]).status == 0)
            let mark = session.recorder.mark()
            #expect(try await session.lector(["read", "--lang", "en", "Heard at once."]).status == 0)
            let heard = await session.recorder.waitForSpeech(after: mark, timeout: 10)
            print("400 KB SSML paragraph: daemon peak RSS \(peak) KiB over 4 s; after Stop, the next text heard after \(secs(heard))")
            #expect(heard != nil && heard! < 0.5, "next text heard after \(secs(heard))\n\(session.daemonLogs())")
        }
    }
}
