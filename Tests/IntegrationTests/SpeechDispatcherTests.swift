import Foundation
import Testing

extension Integration {
    /// Speech Dispatcher's clients speak through Lector: the real speech-dispatcher (Debian's 0.11), configured
    /// in the private session to use the module built beside `lector` as its default, its clients (`spd-say`,
    /// the Python `speechd` library), and what the sink played.
    @Suite(.privateSession, .enabled(if: Paths.executable("speech-dispatcher") != nil && Paths.executable("spd-say") != nil))
    struct SpeechDispatcher {
        /// Writes the private speechd.conf and starts speech-dispatcher in the foreground (no idle exit), then
        /// waits for its socket. `defaultModule` is "lector" (the module built beside `lector`) or "espeak-ng"
        /// (speech-dispatcher's own eSpeak NG module); both are loaded. The caller stops it.
        static func startServer(_ session: PrivateSession, defaultModule: String = "lector",
                                environment: [String: String] = [:]) async throws -> BackgroundProcess {
            let config = session.directory.appendingPathComponent("config/speech-dispatcher")
            try FileManager.default.createDirectory(at: config.appendingPathComponent("modules"), withIntermediateDirectories: true)
            let module = URL(fileURLWithPath: Paths.lectorBinary).deletingLastPathComponent()
                .appendingPathComponent("lector-speechd-module").path
            let conf = """
                LogLevel 3
                LogDir "\(session.directory.path)"
                DefaultVolume 100
                SymbolsPreproc "char"
                SymbolsPreprocFile "symbols.dic"
                AudioOutputMethod "pulse"
                AddModule "lector" "\(module)" "lector.conf"
                AddModule "espeak-ng" "sd_espeak-ng" "espeak-ng.conf"
                DefaultModule \(defaultModule)
                """
            try conf.write(to: config.appendingPathComponent("speechd.conf"), atomically: true, encoding: .utf8)
            try "".write(to: config.appendingPathComponent("modules/lector.conf"), atomically: true, encoding: .utf8)
            // A socket left by the server of an earlier test would be taken for this one's.
            let socket = session.directory.appendingPathComponent("speech-dispatcher/speechd.sock").path
            try? FileManager.default.removeItem(atPath: socket)
            let server = try session.spawn("speech-dispatcher", ["-s", "-t", "0"], tag: "speechd", environment: environment)
            let up = await eventually(timeout: 10) { FileManager.default.fileExists(atPath: socket) }
            if !up { throw HarnessError("speech-dispatcher did not start: \(server.stderr)") }
            return server
        }

        /// The `lector` daemon's current text.
        static func text(_ session: PrivateSession) async throws -> String {
            let r = try await session.run("gdbus", ["call", "--session", "--dest", "org.lector.Lector", "--object-path",
                                                    "/org/lector/Lector", "--method", "org.freedesktop.DBus.Properties.Get",
                                                    "org.lector.Lector1", "Text"], timeout: 10)
            return r.stdout
        }

        @Test("spd-say -w is heard through Lector and returns when the speech has been heard")
        func spdSayIsHeard() async throws {
            let session = try await world()
            let server = try await Self.startServer(session)
            defer { server.stopNow() }
            let start = session.recorder.mark()
            let said = try await session.run("spd-say", ["-w", "Hello from Speech Dispatcher."], timeout: 30)
            #expect(said.status == 0, "\(said)")
            let heard = AudioAnalysis(session.recorder.samples(from: start))
            #expect(heard.speechWindowSeconds > 0.8, "\(heard.summary)")
            // It returned once the end was heard, not before: the end of speech is within the last 0.6 s.
            #expect(heard.duration - (heard.lastSpeech ?? 0) < 0.6, "\(heard.summary)")
            #expect(try await Self.text(session).contains("Hello from Speech Dispatcher."))
            let list = try await session.run("spd-say", ["-o", "lector", "-L"], timeout: 30)
            #expect(list.stdout.contains("English"), "\(list)")
        }

        @Test("lector speechd enable: spd-say speaks through Lector, Orca keeps eSpeak NG; disable puts everything back")
        func enableAndDisable() async throws {
            let session = try await world()
            let config = session.directory.appendingPathComponent("config/speech-dispatcher/speechd.conf").path
            try? FileManager.default.removeItem(atPath: config)
            let enable = try await session.lector(["speechd", "enable"])
            #expect(enable.status == 0 && enable.stdout.contains("speaks through Lector"), "\(enable)")
            #expect(try await session.lector(["speechd", "status"]).stdout == "enabled\n")
            let socket = session.directory.appendingPathComponent("speech-dispatcher/speechd.sock").path
            try? FileManager.default.removeItem(atPath: socket)
            let server = try session.spawn("speech-dispatcher", ["-s", "-t", "0"], tag: "speechd-enabled")
            defer { server.stopNow() }
            #expect(await eventually(timeout: 10) { FileManager.default.fileExists(atPath: socket) }, "\(server.stderr)")
            let said = try await session.run("spd-say", ["-w", "Through Lector by default."], timeout: 30)
            #expect(said.status == 0, "\(said)")
            #expect(try await Self.text(session).contains("Through Lector by default."))
            let start = session.recorder.mark()
            let orca = try await session.run("/usr/bin/python3", ["-c", """
                import speechd, threading
                done = threading.Event()
                c = speechd.SSIPClient('orca')
                c.speak('A screen reader speaks.', callback=lambda kind, index_mark=None: done.set(),
                        event_types=(speechd.CallbackType.END, speechd.CallbackType.CANCEL))
                done.wait(20); c.close()
                """], timeout: 40)
            #expect(orca.status == 0, "\(orca)")
            let heard = AudioAnalysis(session.recorder.samples(from: start))
            #expect(heard.speechWindowSeconds > 0.5, "Orca's speech through eSpeak NG: \(heard.summary)")
            #expect(try await !Self.text(session).contains("screen reader"), "Orca's speech must not go through Lector")
            let disable = try await session.lector(["speechd", "disable"])
            #expect(disable.status == 0, "\(disable)")
            #expect(!FileManager.default.fileExists(atPath: config), "the file enable created is removed")
        }

        @Test("Python speechd: BEGIN, the index mark and END come in order, the mark when its place is heard")
        func pythonCallbacksFollowWhatIsHeard() async throws {
            let session = try await world()
            let server = try await Self.startServer(session)
            defer { server.stopNow() }
            let script = """
                import speechd, threading, time
                done = threading.Event(); events = []
                def cb(kind, index_mark=None):
                    events.append((time.monotonic(), kind, index_mark))
                    if kind in (speechd.CallbackType.END, speechd.CallbackType.CANCEL): done.set()
                c = speechd.SSIPClient('lector-test')
                c.set_data_mode(speechd.DataMode.SSML)
                t0 = time.monotonic()
                c.speak('<speak>One, two, three, four, five, six, seven. <mark name="middle"/>Eight, nine, ten.</speak>',
                        callback=cb, event_types=(speechd.CallbackType.BEGIN, speechd.CallbackType.END,
                                                  speechd.CallbackType.INDEX_MARK, speechd.CallbackType.CANCEL))
                done.wait(30); c.close()
                for t, k, m in events: print('%.3f %s %s' % (t - t0, k, m or ''))
                """
            let start = session.recorder.mark()
            let run = try await session.run("/usr/bin/python3", ["-c", script], timeout: 40)
            #expect(run.status == 0, "\(run)")
            let lines = run.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
            #expect(lines.map { $0[1] } == ["begin", "index_marks", "end"], "\(run.stdout)")
            guard lines.count == 3, let begin = Double(lines[0][0]), let mark = Double(lines[1][0]),
                  let end = Double(lines[2][0]) else { return }
            #expect(lines[1].count == 3 && lines[1][2] == "middle", "\(run.stdout)")
            // What was heard: the first sentence, a pause, the second. The mark comes when the second starts
            // being heard (after the first sentence's audio), END after the last audio.
            let heard = AudioAnalysis(session.recorder.samples(from: start))
            let first = heard.firstSpeech ?? 0, last = heard.lastSpeech ?? 0
            #expect(mark - begin > 0.5 * (last - first), "mark \(mark - begin) s after BEGIN; \(heard.summary)")
            #expect(end - begin > 0.8 * (last - first), "END \(end - begin) s after BEGIN; \(heard.summary)")
        }

        @Test("Speech Dispatcher's PAUSE and RESUME: silent at once, and the same reading goes on where it paused")
        func pauseAndResumeAreExact() async throws {
            let session = try await world()
            let server = try await Self.startServer(session)
            defer { server.stopNow() }
            let script = """
                import speechd, threading, time
                done = threading.Event(); events = []
                def cb(kind, index_mark=None):
                    events.append(kind)
                    if kind in (speechd.CallbackType.END, speechd.CallbackType.CANCEL): done.set()
                c = speechd.SSIPClient('lector-pause')
                c.speak('First we speak for a while. Then we pause. After the pause we go on to the end.', callback=cb,
                        event_types=(speechd.CallbackType.BEGIN, speechd.CallbackType.END, speechd.CallbackType.PAUSE,
                                     speechd.CallbackType.RESUME, speechd.CallbackType.CANCEL))
                time.sleep(1.5); c.pause(); time.sleep(2.0); c.resume()
                done.wait(30); c.close()
                print(' '.join(events))
                """
            let start = session.recorder.mark()
            let python = try session.spawn("/usr/bin/python3", ["-c", script], tag: "pause")
            defer { python.stopNow() }
            #expect(await session.recorder.waitForSpeech(after: start, timeout: 10) != nil)
            let first = try await session.status().fields["utterance"]
            #expect(await python.waitForExit(timeout: 40) == 0, "\(python.stderr)")
            #expect(python.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "begin pause resume end", "\(python.stdout)")
            // Resumed, not read again: the same utterance, and one silence of about the pause's length.
            let last = try await session.status().fields["utterance"]
            #expect(last == first, "utterance \(String(describing: first)) then \(String(describing: last))")
            let heard = AudioAnalysis(session.recorder.samples(from: start))
            #expect(heard.longestSilence > 1.6 && heard.longestSilence < 2.6, "\(heard.summary)")
        }

        @Test("playerctl pause silences spd-say at once, play goes on; spd-say -C cancels")
        func mediaKeysAndCancel() async throws {
            let session = try await world(.mprisQuiet)
            let server = try await Self.startServer(session)
            defer { server.stopNow() }
            let long = "This is a long text for Speech Dispatcher. " + String(repeating: "It goes on and on for a while. ", count: 12)
            let start = session.recorder.mark()
            let say = try session.spawn("spd-say", ["-w", long], tag: "spd-say")
            defer { say.stopNow() }
            #expect(await session.recorder.waitForSpeech(after: start, timeout: 10) != nil)
            let pause = try await session.run("playerctl", ["-p", "lector", "pause"], timeout: 10)
            #expect(pause.status == 0, "\(pause)")
            let paused = session.recorder.mark()
            await session.recorder.waitForSamples(after: paused, seconds: 1.2)
            let during = AudioAnalysis(session.recorder.samples(from: paused))
            #expect(during.isSilent(from: 0.25), "\(during.summary)")
            #expect(say.isRunning, "spd-say should still wait while Lector is paused")
            _ = try await session.run("playerctl", ["-p", "lector", "play"], timeout: 10)
            let resumed = session.recorder.mark()
            #expect(await session.recorder.waitForSpeech(after: resumed, timeout: 3) != nil)
            let cancel = try await session.run("spd-say", ["-C"], timeout: 10)
            #expect(cancel.status == 0, "\(cancel)")
            let cancelled = session.recorder.mark()
            #expect(await say.waitForExit(timeout: 5) != nil, "spd-say -w should return once cancelled")
            await session.recorder.waitForSamples(after: cancelled, seconds: 1)
            let afterCancel = AudioAnalysis(session.recorder.samples(from: cancelled))
            #expect(afterCancel.isSilent(from: 0.4), "\(afterCancel.summary)")
        }

        @Test("priorities: important interrupts text, a notification does not; eight clients at once are all read")
        func prioritiesAndManyClients() async throws {
            let session = try await world()
            let server = try await Self.startServer(session)
            defer { server.stopNow() }
            let long = String(repeating: "A text read at text priority goes on. ", count: 10)
            let text = try session.spawn("spd-say", ["-w", "-P", "text", long], tag: "text")
            defer { text.stopNow() }
            #expect(await eventually(timeout: 10) { (try? await Self.text(session))?.contains("text priority") == true })
            _ = try await session.run("spd-say", ["-P", "notification", "A notification."], timeout: 10)
            try await Task.sleep(for: .milliseconds(500))
            #expect(try await Self.text(session).contains("text priority"), "a notification must not interrupt text")
            _ = try await session.run("spd-say", ["-w", "-P", "important", "Important message."], timeout: 20)
            #expect(try await Self.text(session).contains("Important message."))
            _ = try await session.run("spd-say", ["-C"], timeout: 10)
            _ = await text.waitForExit(timeout: 10)

            let before = session.recorder.mark()
            let clients = try (1...8).map { n in
                // Priority message: queued and all said (text would keep only the latest, by SSIP's rules).
                try session.spawn("spd-say", ["-w", "-P", "message", "Client \(n)."], tag: "client-\(n)")
            }
            for (n, client) in clients.enumerated() {
                let status = await client.waitForExit(timeout: 40)
                #expect(status == 0, "client \(n + 1): \(client.stderr)")
            }
            let status = try await session.status()
            #expect(status.fields["state"] == "stopped", "\(status)")
            // Each client's few words were heard, one after another (about 0.5 s of speech each).
            let heard = AudioAnalysis(session.recorder.samples(from: before))
            #expect(heard.speechWindowSeconds > 8 * 0.3, "\(heard.summary)")
        }

        @Test("a client flooding SPEAK: the daemon keeps answering and the last text is read")
        func floodingKeepsTheDaemonAnswering() async throws {
            let session = try await world()
            let server = try await Self.startServer(session)
            defer { server.stopNow() }
            let script = """
                import speechd
                c = speechd.SSIPClient('flood')
                c.set_priority(speechd.Priority.MESSAGE)
                for i in range(300): c.speak('Flood %d.' % i)
                c.close()
                """
            let flood = try session.spawn("/usr/bin/python3", ["-c", script], tag: "flood")
            defer { flood.stopNow() }
            var slowest = 0.0
            for _ in 0..<10 {
                let s = try await session.lector(["status"], timeout: 10)
                slowest = max(slowest, s.seconds)
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(slowest < 1.0, "lector status took \(slowest) s during the flood")
            #expect(await flood.waitForExit(timeout: 20) == 0, "\(flood.stderr)")
            _ = try await session.run("spd-say", ["-C"], timeout: 10)
            let start = session.recorder.mark()
            let after = try await session.run("spd-say", ["-w", "After the flood."], timeout: 30)
            #expect(after.status == 0, "\(after)")
            let heard = AudioAnalysis(session.recorder.samples(from: start))
            #expect(heard.speechWindowSeconds > 0.3, "\(heard.summary)")
        }
    }
}

extension Integration.SpeechDispatcher {
    /// The median RMS of the 10 ms windows that are speech, dBFS.
    static func medianSpeechLevel(_ heard: AudioAnalysis) -> Double {
        let speech = heard.windowRMS.filter { $0 >= AudioAnalysis.speechRMS }.sorted()
        guard !speech.isEmpty else { return -.infinity }
        return 20 * log10(speech[speech.count / 2] / 32_768)
    }

    @Test("at speech-dispatcher's default volume, Lector's module is as loud as speech-dispatcher's own eSpeak NG module")
    func loudnessMatchesEspeakModule() async throws {
        let session = try await world()
        let server = try await Self.startServer(session)
        defer { server.stopNow() }
        let text = "The same sentence is read by both modules, at the same volume, one after the other."
        var levels: [String: Double] = [:]
        for module in ["lector", "espeak-ng"] {
            let start = session.recorder.mark()
            let said = try await session.run("spd-say", ["-w", "-o", module, "-l", "en", text], timeout: 30)
            #expect(said.status == 0, "\(module): \(said)")
            _ = await session.recorder.waitForSilence(after: start, lasting: 0.3, timeout: 5)
            levels[module] = Self.medianSpeechLevel(AudioAnalysis(session.recorder.samples(from: start)))
        }
        let lector = levels["lector"] ?? -.infinity, espeak = levels["espeak-ng"] ?? -.infinity
        print(String(format: "median speech RMS: Lector's module %.1f dBFS, speech-dispatcher's eSpeak NG module %.1f dBFS", lector, espeak))
        #expect(abs(lector - espeak) < 2, "Lector \(lector) dBFS, eSpeak NG module \(espeak) dBFS")
    }
}
