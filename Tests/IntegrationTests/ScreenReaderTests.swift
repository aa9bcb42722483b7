import Foundation
import Testing

extension Integration {
    /// What a screen reader does with Lector: AT-SPI's queries over the reader window's text while it reads
    /// (every attribute query at every offset, and at the caret as it moves), a real Orca (Debian's) reading the
    /// focused window, and Orca speaking a GTK editor's keys through Lector's Speech Dispatcher module.
    @Suite(.privateSession)
    struct ScreenReader {
        static let document = """
            Alpha opens the text. The second sentence is here, and it goes on for a while with many words to read.

            A new paragraph starts here. Its words are read one by one while the window marks each of them.

            """

        @Test("every AT-SPI text query over the whole text and at the moving caret is answered; the window lives")
        func everyAttributeQuery() async throws {
            let session = try await world()
            let desk = try await Desk.open(session)
            defer { desk.close() }
            _ = try await session.lector(["read", Self.document])
            _ = try await session.waitForState("reading", timeout: 10)
            // The word highlight is on before the sweep: its tag is what a query reads.
            _ = await poll(timeout: 5, { (try? await desk.drive(["text"]))?["caret"] as? Int ?? 0 }, until: { $0 > 0 })
            let sweep = try await desk.drive(["sweep", "3"])
            #expect(desk.window.isRunning, "the window died under AT-SPI queries: \(desk.window.stderr.suffix(800))")
            #expect(sweep["failed"] as? [String] == [], "\(sweep)")
            #expect((sweep["queries"] as? Int ?? 0) > 1000, "\(sweep)")
            let runs = sweep["caretRuns"] as? [[String]] ?? []
            #expect(runs.contains { $0.contains("underline:single") && $0.contains { $0.hasPrefix("bg-color:") } },
                    "the highlighted word's attributes at the caret: \(runs)")
            #expect(!desk.window.stderr.contains("is not readable"), "\(desk.window.stderr.suffix(800))")
        }

        @Test("Orca with the reader window focused while it reads: the window lives, Orca reads its text")
        func orcaReadsTheWindow() async throws {
            let session = try await world()
            // Orca speaks through speech-dispatcher's own eSpeak NG module (as `lector speechd enable` keeps it):
            // through Lector, its words would replace the text being read.
            let server = try await SpeechDispatcher.startServer(session, defaultModule: "espeak-ng")
            defer { server.stopNow() }
            let desk = try await Desk.open(session)
            defer { desk.close() }
            _ = try await session.lector(["read", Self.document])
            _ = try await session.waitForState("reading", timeout: 10)
            let orca = try Orca.start(session, environment: desk.environment, tag: "window")
            defer { orca.process.stopNow(grace: 2) }
            #expect(await orca.waitForSpeech(containing: "Screen reader on", timeout: 30) != nil, orca.debugTail)
            _ = try await desk.drive(["focus", "second sentence"])
            let read = await orca.waitForSpeech(containing: "Text being read", timeout: 15)
            #expect(read != nil, orca.debugTail)
            #expect(orca.spoken().contains { $0.contains("Alpha opens the text") || $0.contains("second sentence") },
                    "Orca did not read the text: \(orca.spoken())")
            // The reading goes on under Orca for a few seconds: Orca follows the caret and asks for attributes.
            try await Task.sleep(for: .seconds(4))
            _ = try await desk.drive(["sweep", "1"])
            #expect(desk.window.isRunning, "the window died under Orca: \(desk.window.stderr.suffix(800))")
            #expect(try await session.status().state == "reading")
        }

        @Test("Orca in a GTK editor speaks each key through Lector's module, and it is heard")
        func orcaSpeaksThroughLector() async throws {
            let session = try await world()
            try #require(Paths.executable("gnome-text-editor") != nil, "gnome-text-editor is not installed")
            let server = try await SpeechDispatcher.startServer(session)
            defer { server.stopNow() }
            let (xserver, display) = try await Desk.xserver(session, tag: "editor")
            defer { xserver.stopNow(grace: 2) }
            let environment = display.merging(["GSETTINGS_BACKEND": "memory"]) { $1 }
            let editor = try session.spawn("gnome-text-editor", ["--standalone"], tag: "editor", environment: environment)
            defer { editor.stopNow(grace: 2) }
            let window = await poll(timeout: 20, {
                (try? await session.run("xdotool", ["search", "--onlyvisible", "--class", "gnome-text-editor"],
                                        environment: environment))?.stdout.split(separator: "\n").first.map(String.init) ?? ""
            }, until: { !$0.isEmpty })
            try #require(!window.isEmpty, "no editor window: \(editor.stderr.suffix(500))")
            let orca = try Orca.start(session, environment: environment, tag: "editor")
            defer { orca.process.stopNow(grace: 2) }
            #expect(await orca.waitForSpeech(containing: "Screen reader on", timeout: 30) != nil, orca.debugTail)
            // Orca announces the focused window once it has the editor's accessible tree; a focus change that
            // comes while it still builds it (a loaded machine) goes unannounced, so the focus moves to the root
            // window and back, up to three times.
            let root = (try? await session.run("xdotool", ["search", "--maxdepth", "0", "--name", ""],
                                               environment: environment))?.stdout
                .split(separator: "\n").first.map(String.init)
            var announced: String?
            for _ in 0..<3 where announced == nil {
                if let root { _ = try? await session.run("xdotool", ["windowfocus", "--sync", root], environment: environment) }
                _ = try await session.run("xdotool", ["windowfocus", "--sync", window], environment: environment)
                announced = await orca.waitForSpeech(containing: "Text Editor", timeout: 8)
            }
            #expect(announced != nil, orca.debugTail)
            let mark = session.recorder.mark()
            _ = try await session.run("xdotool", ["type", "--delay", "250", "hi there"], environment: environment)
            let heard = await session.recorder.waitForSpeech(after: mark, timeout: 10)
            #expect(heard != nil, "nothing heard of the keys typed")
            // Orca's last words went through Lector: the last key echoed ("e"), or after it the window's new
            // title ("hi there - Text Editor"), which Orca announces only when the title change reaches it in time.
            let text = await poll(timeout: 10, { (try? await SpeechDispatcher.text(session)) ?? "" },
                                  until: { $0.contains("hi there") })
            #expect(text.contains("hi there") || text.contains("'e'"), "Lector's last text: \(text); Orca said \(orca.spoken().suffix(6))")
            #expect(orca.spoken().contains { $0.hasPrefix("t ") } && orca.spoken().contains { $0.hasPrefix("h ") },
                    "Orca did not echo the keys: \(orca.spoken().suffix(8))")
        }
    }
}

/// A real Orca on a test's X server, its settings in the session folder, its speech taken from its debug log
/// ("SPEECH OUTPUT: '…'" lines).
struct Orca {
    let process: BackgroundProcess
    let debug: URL

    /// Starts Orca with `environment` (the X server's); its preferences are fresh (speech on, through
    /// speech-dispatcher's default module).
    static func start(_ session: PrivateSession, environment: [String: String], tag: String) throws -> Orca {
        let folder = session.directory.appendingPathComponent("orca-\(tag)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let debug = folder.appendingPathComponent("debug.out")
        let env = environment.merging(["GSETTINGS_BACKEND": "memory"]) { $1 }
        let process = try session.spawn("orca", ["-u", folder.path, "--debug-file=\(debug.path)"], tag: "orca-\(tag)",
                                        environment: env)
        return Orca(process: process, debug: debug)
    }

    /// What Orca spoke so far, in order.
    func spoken() -> [String] {
        let log = (try? String(contentsOf: debug, encoding: .utf8)) ?? ""
        return log.split(separator: "\n").compactMap { line in
            guard let at = line.range(of: "SPEECH OUTPUT: '") else { return nil }
            let rest = line[at.upperBound...]
            return String(rest[..<(rest.lastIndex(of: "'") ?? rest.endIndex)])
        }
    }

    /// Waits until Orca spoke something holding `needle`; returns it (nil at the time-out).
    func waitForSpeech(containing needle: String, timeout: Double) async -> String? {
        await poll(timeout: timeout, every: .milliseconds(100), { spoken().first { $0.contains(needle) } },
                   until: { $0 != nil })
    }

    /// The end of what Orca spoke and logged, for a failure's message.
    var debugTail: Comment {
        Comment(rawValue: "Orca said \(spoken().suffix(8)); its log: \(process.stderr.suffix(600))")
    }
}
