import Foundation
import Testing

/// A stand-in for the Piper worker's Python (`LECTOR_PIPER_PYTHON`) that speaks the worker protocol and
/// misbehaves as `LECTOR_TEST_FAKE_PIPER` says: `heartbeats` answers each request with empty audio frames every
/// 100 ms for ever, `endless` with audio (a tone) for ever, `exits` exits with status 3; `speaks` behaves,
/// answering each request with 0.6 s of a tone and its end.
enum FakePiper {
    static let script = """
    #!/usr/bin/python3
    import math, os, struct, sys, time
    mode = os.environ["LECTOR_TEST_FAKE_PIPER"]
    out, inp = sys.stdout.buffer, sys.stdin.buffer
    def send(kind, payload):
        out.write(struct.pack("<BI", kind, len(payload)) + payload)
        out.flush()
    def read_exact(n):
        data = b""
        while len(data) < n:
            chunk = inp.read(n - len(data))
            if not chunk:
                sys.exit(0)
            data += chunk
        return data
    rate = int(sys.argv[sys.argv.index("--sample-rate") + 1])
    tone = b"".join(struct.pack("<h", int(8000 * math.sin(i * 2 * math.pi * 440 / rate))) for i in range(rate // 10))
    send(0x81, struct.pack("<q", rate))
    while True:
        kind, length = struct.unpack("<BI", read_exact(5))
        payload = read_exact(length)
        if kind not in (2, 3):
            continue
        if mode == "exits":
            sys.exit(3)
        tag = struct.pack("<I", struct.unpack_from("<I", payload)[0])
        if mode == "speaks":
            for _ in range(6):
                send(0x82, tag + tone)
            send(0x84, tag + struct.pack("<q", 6 * (rate // 10)))
            continue
        while True:
            if mode == "heartbeats":
                send(0x82, tag)
                time.sleep(0.1)
            else:
                send(0x82, tag + tone)
    """

    /// Writes the stand-in and a voice for it (`piper:en_US-fake-medium`) into `session`'s folders; returns the
    /// daemon's environment.
    static func install(_ session: PrivateSession, mode: String, voice: Bool = true) throws -> [String: String] {
        let python = session.directory.appendingPathComponent("fake-piper-python")
        try Data(script.utf8).write(to: python)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: python.path)
        let voices = session.directory.appendingPathComponent("data/lector/voices")
        try? FileManager.default.removeItem(at: voices)
        if voice { try addVoice(session) }
        return ["LECTOR_PIPER_PYTHON": python.path, "LECTOR_TEST_FAKE_PIPER": mode,
                "XDG_DATA_HOME": session.directory.appendingPathComponent("data").path]
    }

    /// Puts `piper:en_US-fake-medium` into Lector's own voices folder of `session`.
    static func addVoice(_ session: PrivateSession) throws {
        let voices = session.directory.appendingPathComponent("data/lector/voices")
        try FileManager.default.createDirectory(at: voices, withIntermediateDirectories: true)
        try Data("not a model".utf8).write(to: voices.appendingPathComponent("en_US-fake-medium.onnx"))
        try Data("{}".utf8).write(to: voices.appendingPathComponent("en_US-fake-medium.onnx.json"))
    }
}

extension Integration {
    /// A Piper worker that never ends a request (only signs of life, or audio without end) or cannot work: each
    /// request is cut within what its text can take, and after two failures the voice's language is read with
    /// eSpeak NG, with one line.
    @Suite(.privateSession) struct PiperWorkerFaults {
        static let voice = "piper:en_US-fake-medium"

        @Test("a Piper worker sending only signs of life, audio without end, or exiting: cut, then eSpeak NG after two failures, one line",
              arguments: [("heartbeats", "made no progress"), ("endless", "more audio than its text can take"), ("exits", "exited with status 3")])
        func neverEnding(mode: String, reason: String) async throws {
            let session = try await world(.bare)
            let env = try FakePiper.install(session, mode: mode)
            while let running = session.runningDaemon { await running.stop() }
            _ = await eventually(timeout: 5) { await session.nameOwner(Lector.busName) == nil }
            let daemon = try await session.startDaemon(environment: env)
            defer { Task { await daemon.stop() } }
            let text = "One.\n\nTwo.\n\nThree is read by eSpeak NG, the fallback."
            let mark = session.recorder.mark()
            let started = ContinuousClock.now
            #expect(try await session.lector(["read", "--voice", Self.voice, text], environment: env).status == 0)
            let stopped = await eventually(timeout: 150, every: .milliseconds(200)) { (try? await session.status().state) == "stopped" }
            let took = ContinuousClock.now - started
            print("fake Piper \(mode): reading ended after \(took)")
            let heard = AudioAnalysis(session.recorder.samples(from: mark))
            // The session's earlier daemons logged too: this daemon's lines are the ones with its pid.
            let logs = session.daemonLogs(limit: 20_000)
            let lines = logs.split(separator: "\n").filter { $0.contains("(lector:\(daemon.pid))") }
            #expect(stopped, "\(mode): still reading after \(took)\n\(logs)")
            let skipped = lines.filter { $0.contains("skipped it") }
            #expect(skipped.count == 1 && skipped[0].contains("sentence 1") && skipped[0].contains(reason), "\(mode): \(skipped)\n\(logs)")
            let fallbacks = lines.filter { $0.contains("reading with eSpeak NG's") }
            #expect(fallbacks.count == 1 && fallbacks.first?.contains("failed 2 times with \(Self.voice)") == true,
                    "\(mode): \(fallbacks)\n\(logs)")
            // Sentences 2 and 3 read by eSpeak NG (the stand-in's tone is heard too where it sends audio).
            #expect(heard.audibleDuration > 2, "\(mode): \(heard.summary)")
            #expect(try await session.status().exitStatus == 0, "the daemon stopped answering")
        }
    }
}

extension Integration {
    /// Piper voices installed while the daemon runs, and the Piper worker given back after its idle time
    /// (`LECTOR_TEST_PIPER_IDLE_MS`) whatever ended its last request, with a stand-in worker that behaves.
    @Suite(.privateSession) struct PiperLifetime {
        static let voice = "piper:en_US-fake-medium"

        /// The daemon's children that run the Piper worker (the stand-in is run as its Python).
        static func piperWorkers(_ daemon: Int32) -> [Int32] {
            Load.children(daemon).filter { pid in
                let cmdline = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))) ?? Data()
                return String(decoding: cmdline, as: UTF8.self).contains("lector-piper-worker")
            }
        }

        @Test("a Piper voice installed while the daemon runs is listed and read at once; lector stop gives the worker back after its idle time")
        func installedWhileRunning() async throws {
            let session = try await world(.bare)
            var env = try FakePiper.install(session, mode: "speaks", voice: false)
            env["LECTOR_TEST_PIPER_IDLE_MS"] = "2000"
            while let running = session.runningDaemon { await running.stop() }
            _ = await eventually(timeout: 5) { await session.nameOwner(Lector.busName) == nil }
            let daemon = try await session.startDaemon(environment: env)
            defer { Task { await daemon.stop() } }
            let before = try await session.lector(["voices", "--lang", "en"], environment: env)
            #expect(before.status == 0 && !before.stdout.contains(Self.voice), "\(before)")
            let unknown = try await session.lector(["read", "--voice", Self.voice, "Hello."], environment: env)
            #expect(unknown.status == 1 && unknown.stderr.contains("unknown voice"), "\(unknown)")

            try FakePiper.addVoice(session)
            let listed = try await session.lector(["voices", "--lang", "en"], environment: env)
            #expect(listed.stdout.contains("\t\(Self.voice)\t"), "\(listed)")
            let text = (1...40).map { "Sentence number \($0) is read by the stand-in." }.joined(separator: "\n\n")
            let read = try await session.lector(["read", "--voice", Self.voice, text], environment: env)
            #expect(read.status == 0 && read.stderr.isEmpty, "\(read)\n\(session.daemonLogs())")
            let reading = await eventually(timeout: 15) { (try? await session.status().fields["voice"]) == "en_US-fake-medium" }
            #expect(reading, "not read by the Piper voice\n\(session.daemonLogs())")
            #expect(Self.piperWorkers(daemon.pid).count == 1, "Piper workers: \(Self.piperWorkers(daemon.pid))")

            #expect(try await session.lector(["stop"]).status == 0)
            let stopped = ContinuousClock.now
            let gone = await eventually(timeout: 20) { Self.piperWorkers(daemon.pid).isEmpty }
            print("Piper worker after lector stop: gone after \(ContinuousClock.now - stopped) (idle time 2 s)")
            #expect(gone, "the Piper worker is still there 20 s after lector stop\n\(session.daemonLogs())")
            #expect(try await session.status().exitStatus == 0, "the daemon stopped answering")
        }
    }
}
