import Foundation
import Testing

extension Integration {
    /// A page made by pandoc with a German `div` and a French `span` inside English text: the daemon reads each
    /// marked stretch in its language (the French phrase inside an English paragraph, which detection calls
    /// English, as a piece of its own), reports it per sentence, and an audiobook follows the same marks.
    @Suite(.privateSession)
    struct LanguageMarks {
        static let markdown = """
            ---
            title: Two Languages
            lang: en
            ---

            The train to the coast was late again this morning.

            ::: {lang=de}
            Der Zug nach Hamburg hatte an diesem Morgen zwanzig Minuten Verspätung.
            :::

            The driver only said [nous sommes désolés pour le retard]{lang=fr} and walked away.

            Nobody on the platform seemed surprised by it.
            """

        /// Makes `NAME.FORMAT` from `markdown` with pandoc in the session's folder; returns its path.
        static func make(_ markdown: String, _ name: String, format: String = "html", in session: PrivateSession) async throws -> String {
            let source = session.directory.appendingPathComponent("\(name).md")
            try Data(markdown.utf8).write(to: source)
            let target = session.directory.appendingPathComponent("\(name).\(format)").path
            let made = try await session.run("pandoc", ["-s", source.path, "-o", target])
            try #require(made.status == 0, "pandoc: \(made)")
            return target
        }

        /// The languages of the sentences of `markdown` made into each format (OpenDocument text reads the title as
        /// a paragraph; pandoc's Word writer writes no `w:lang` for a span, so Word is left to the unit tests).
        static let heard = [
            "html": ["en", "de", "en", "fr", "en", "en"],
            "odt": ["en", "en", "de", "en", "fr", "en", "en"],
        ]

        @Test("each marked stretch is read in its language: Sentence signals, lector status and MPRIS follow it",
              arguments: ["html", "odt"])
        func marksChooseTheVoice(format: String) async throws {
            let session = try await world()
            let page = try await Self.make(Self.markdown, "page", format: format, in: session)
            let monitor = try await SignalMonitor(session: session, name: Lector.busName)
            defer { Task { await monitor.stop() } }
            let mark = session.recorder.mark()
            let read = try await session.lector(["read", "--file", page])
            #expect(read.status == 0 && read.stderr.isEmpty, "\(read)")
            #expect(await session.recorder.waitForSpeech(after: mark, timeout: 3) != nil, "nothing heard")
            var statusLanguages: [String] = [], mpris: [String] = []
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                let metadata = try await session.run("playerctl", ["-p", "lector", "metadata", "xesam:language"], timeout: 10)
                let status = try await session.status()
                if status.state == "stopped" { break }
                Languages.note(status.language, in: &statusLanguages)
                if metadata.status == 0 { Languages.note(metadata.stdout.trimmingCharacters(in: .whitespacesAndNewlines), in: &mpris) }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(try await session.status().state == "stopped", "not finished within 60 s")
            let sentences = monitor.signals.filter { $0.interface == Lector.interface && $0.member == "Sentence" }
            let signalled = sentences.flatMap { $0.arguments.compactMap { if case .string(let s) = $0 { s } else { nil } } }
            #expect(signalled == Self.heard[format], "Sentence signals: \(signalled)\n\(session.daemonLogs())")
            // Sampled: the French piece lasts about a second, so it may fall between two samples.
            #expect(statusLanguages.starts(with: ["en", "de", "en"]) && statusLanguages.last == "en"
                    && Set(statusLanguages).isSubset(of: ["en", "de", "fr"]), "lector status: \(statusLanguages)")
            #expect(mpris.starts(with: ["en", "de", "en"]) && mpris.last == "en", "xesam:language: \(mpris)")
        }

        /// The start of a long EPUB is read before the rest is extracted, with the marks it holds; the whole
        /// takes its place with the marks after it, and the book is not read again from its beginning.
        @Test("a long EPUB, read from its start while the rest is extracted, follows the marks in the start and after it and is not read again")
        func longEPUB() async throws {
            let session = try await world()
            let paragraph = "The keeper wrote in his log that the sea was calm, the wind came from the west, and the lamp burned without a flicker all night long."
            let markdown = "---\ntitle: A Long Log\nlang: en\n---\n\n# Calm\n\nThe keeper said [bonsoir la mer]{lang=fr} at dusk.\n\n"
                + Array(repeating: paragraph, count: 150).joined(separator: "\n\n")
                + "\n\n# Storm\n\nThe keeper said [bonne nuit à tous]{lang=fr} and went to sleep.\n"
            let source = session.directory.appendingPathComponent("long.md")
            try Data(markdown.utf8).write(to: source)
            let epub = session.directory.appendingPathComponent("long.epub").path
            let made = try await session.run("pandoc", [source.path, "-o", epub])
            try #require(made.status == 0, "pandoc: \(made)")
            let monitor = try await SignalMonitor(session: session, name: Lector.busName)
            defer { Task { await monitor.stop() } }
            // Phrases in English sentences, which detection calls English: only their marks say French.
            func frenchPieces() -> Int {
                monitor.signals.filter { $0.member == "Sentence" && $0.arguments.contains(.string("fr")) }.count
            }
            let read = try await session.lector(["read", "--file", epub])
            #expect(read.status == 0 && read.stderr.isEmpty, "\(read)")
            // The first chapter is the start, sent ahead of the rest: its French phrase is heard in French.
            let inStart = await eventually(timeout: 10) { frenchPieces() >= 1 }
            #expect(inStart, "the start's mark was not followed\n\(session.daemonLogs())")
            // The whole book is in place once both chapters are listed.
            let listed = await eventually(timeout: 10) {
                (try? await session.lector(["chapters"]).stdout.contains("Storm")) == true
            }
            #expect(listed, "\(session.daemonLogs())")
            let jump = try await session.lector(["chapter", "2"])
            #expect(jump.status == 0, "\(jump)")
            let afterStart = await eventually(timeout: 10) { frenchPieces() >= 2 }
            #expect(afterStart, "the mark after the start was not followed\n\(session.daemonLogs())")
            #expect(!session.daemonLogs(limit: 20_000).contains("changed while it was read"), "\(session.daemonLogs())")
            _ = try await session.lector(["stop"])
            try await session.quiesce()
        }

        @Test("--lang given by the user beats the marks")
        func userLanguageBeatsMarks() async throws {
            let session = try await world()
            let page = try await Self.make(Self.markdown, "page", in: session)
            let monitor = try await SignalMonitor(session: session, name: Lector.busName)
            defer { Task { await monitor.stop() } }
            let read = try await session.lector(["read", "--lang", "en", "--file", page])
            #expect(read.status == 0 && read.stderr.isEmpty, "\(read)")
            let heard = await eventually(timeout: 5) {
                monitor.signals.contains { $0.member == "Sentence" && $0.arguments.contains(.string("en")) }
            }
            #expect(heard, "no Sentence signal")
            _ = try await session.lector(["next"])
            _ = try await session.lector(["next"])
            #expect(await eventually(timeout: 5) { monitor.signals.filter { $0.member == "Sentence" }.count >= 3 })
            let languages = monitor.signals.filter { $0.member == "Sentence" }.flatMap { $0.arguments.compactMap { if case .string(let s) = $0 { s } else { nil } } }
            #expect(Set(languages) == ["en"], "\(languages)")
            _ = try await session.lector(["stop"])
            try await session.quiesce()
        }

        @Test("an audiobook of a page follows its marks: a paragraph marked German is the German voice's audio")
        func audiobookFollowsMarks() async throws {
            let session = try await world(.bare)
            // English words marked German: detection would say English, the mark says German.
            let page = try await Self.make("::: {lang=de}\nThe train was late.\n:::\n", "marked", in: session)
            var pcm: [String: Data] = [:]
            for (name, args) in [("page", ["--file", page]), ("de", ["--lang", "de", "The train was late."]),
                                 ("en", ["--lang", "en", "The train was late."])] {
                let wav = session.directory.appendingPathComponent("\(name).wav").path
                let render = try await session.lector(["read", "--quiet", "--output", wav] + args, timeout: 60)
                #expect(render.status == 0 && render.stderr.isEmpty, "\(name): \(render)")
                let raw = session.directory.appendingPathComponent("\(name).raw").path
                let decoded = try await session.run("ffmpeg", ["-v", "error", "-y", "-i", wav, "-f", "s16le", raw])
                #expect(decoded.status == 0, "\(decoded)")
                pcm[name] = try Data(contentsOf: URL(fileURLWithPath: raw))
            }
            #expect((pcm["page"]?.count ?? 0) > 10_000, "no audio")
            #expect(pcm["page"] == pcm["de"], "the marked page is not read with the German voice")
            #expect(pcm["page"] != pcm["en"])
        }
    }
}
