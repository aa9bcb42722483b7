import Foundation
import Testing

/// The files of the bad-inputs fixtures (their README excluded), sorted.
private let badInputFiles: [String] = {
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: Paths.badInputs.path) else { return [] }
    return names.filter { $0 != "README.md" && !$0.hasPrefix(".") }.sorted()
}()

extension Integration {
    /// Every file of `Tests/Fixtures/bad-inputs` through every way in: `lector read --file` and `lector read <FILE`
    /// (both hand the daemon the open file: SpeakFile), standard input from a pipe, a command-line argument
    /// (when it fits in one: 128 KiB) and Lector's D-Bus `Speak`.
    ///
    /// Each must either be read aloud (exit 0, or an utterance id, and speech is heard) or be refused with
    /// one line (`lector: …` on stderr and exit 1, or a D-Bus error with a one-line message). Afterwards
    /// the same daemon still owns its name and reads "hello".
    ///
    /// D-Bus strings must be valid UTF-8, so invalid UTF-8 cannot be sent as it is: a client repairs it
    /// (invalid bytes become U+FFFD) before calling Speak, as `BusClient.repairedText` does.
    @Suite(.privateSession)
    struct BadInputs {
        /// Inputs with nothing readable: they must be refused.
        static let mustFail: Set<String> = ["empty.txt", "whitespace-only.txt"]
        /// Inputs that may be accepted yet produce no sound: the engine crashes on the only sentence there is,
        /// and the daemon goes on (with the next sentence: there is none).
        static let maySilentlyFail: Set<String> = ["engine-crash-apostrophes.txt"]
        /// The longest text passed as one command-line argument (Linux limits one argument to 128 KiB).
        static let argumentLimit = 100_000

        enum Route: String, CaseIterable {
            case file = "--file", stdin = "standard input", stdinFile = "standard input from the file"
            case argument = "argument", dbus = "D-Bus Speak"
        }

        @Test("each bad input is read or refused with one line, and the daemon reads hello afterwards",
              arguments: badInputFiles)
        func badInput(_ name: String) async throws {
            let session = try await world()
            let owner = try #require(await session.nameOwner(Lector.busName), "no daemon")
            let path = Paths.badInputs.appendingPathComponent(name)
            let bytes = try Data(contentsOf: path)

            for route in Route.allCases {
                if route == .argument && bytes.count > Self.argumentLimit { continue }
                let mark = session.recorder.mark()
                let accepted: Bool
                let what = "\(name) through \(route.rawValue)"
                switch route {
                case .file, .stdin, .stdinFile, .argument:
                    let result: ProcessResult
                    switch route {
                    case .file:
                        result = try await session.lector(["read", "--lang", "en", "--file", path.path])
                    case .stdin:
                        result = try await session.lector(["read", "--lang", "en", "-"], stdin: bytes)
                    case .stdinFile:
                        // A regular file as standard input: handed to the daemon open (SpeakFile), not sent.
                        result = try await session.run(
                            "/bin/sh", ["-c", #""$0" read --lang en <"$1""#, Paths.lectorBinary, path.path])
                    default:
                        // Through a shell, so that the argument carries the file's bytes as they are.
                        result = try await session.run(
                            "/bin/sh", ["-c", #""$0" read --lang en "$(cat "$1")""#, Paths.lectorBinary, path.path])
                    }
                    #expect(result.status == 0 || result.status == 1, "\(what): \(result)")
                    if result.status == 1 {
                        #expect(result.stderrLines.count == 1 && result.stderr.hasPrefix("lector: "),
                                "\(what): not one line: \(result)")
                    }
                    accepted = result.status == 0
                case .dbus:
                    let address = session.busAddress
                    let text = BusClient.repairedText(bytes)
                    let reply = BusClient.speak(address: address, text: text, options: ["language": "en"])
                    switch reply {
                    case .value(let value):
                        #expect(value.hasPrefix("(uint64 ") || value.hasPrefix("("), "\(what): reply \(value)")
                        accepted = true
                    case .error(let errorName, let message):
                        #expect(!message.isEmpty && !message.contains("\n"), "\(what): \(errorName): \(message.debugDescription)")
                        #expect(errorName.hasPrefix("org.lector.Lector1.Error.") || errorName.hasPrefix("org.freedesktop.DBus.Error.InvalidArgs"),
                                "\(what): unexpected error \(errorName): \(message)")
                        accepted = false
                    }
                }

                if Self.mustFail.contains(name) {
                    #expect(!accepted, "\(what): nothing readable, yet accepted")
                }
                if accepted && !Self.maySilentlyFail.contains(name) {
                    let first = await session.recorder.waitForSpeech(after: mark, timeout: 3)
                    #expect(first != nil, "\(what): accepted but nothing was heard\n\(session.daemonLogs())")
                }
                try await session.quiesce()
                #expect(await session.nameOwner(Lector.busName) == owner, "\(what): the daemon lost its name or restarted\n\(session.daemonLogs())")
            }

            let (hello, audio) = try await session.readAndRecord(["--lang", "en", "hello"])
            #expect(hello.status == 0, "after \(name): \(hello)")
            #expect(audio.audibleDuration > 0.2, "after \(name): hello not heard: \(audio.summary)")
            #expect(await session.nameOwner(Lector.busName) == owner, "after \(name): the daemon changed\n\(session.daemonLogs())")
        }

        @Test("markup-lookalike text is read completely: <, > and & are never parsed as markup")
        func markupIsReadAsText() async throws {
            let session = try await world()
            let path = Paths.badInputs.appendingPathComponent("markup-lookalike.txt")
            let text = String(decoding: try Data(contentsOf: path), as: UTF8.self)
            let (read, audio) = try await session.readAndRecord(["--lang", "en", "--file", path.path])
            #expect(read.status == 0, "\(read)")
            // eSpeak NG's own command reads the same text as plain text; with every word spoken, Lector's
            // reading sounds as long (within 10 %). Dropping what looks like tags would cut about a third.
            let plain = try await session.espeakReference(text)
            #expect(audio.audibleDuration >= 0.9 * plain.audibleDuration,
                    "lector: \(audio.summary); espeak-ng plain: \(plain.summary)")
        }
    }
}
