import Foundation
import Testing

extension Integration {
    /// What a listener hears of documents and files as people have them: only text, and only the words they
    /// want (no running headers, navigation, front matter); files that are not text refused in one line.
    @Suite(.privateSession)
    struct DocumentsHeard {
        static func text(_ session: PrivateSession) throws -> String {
            try BusConnection(address: session.busAddress).lectorText ?? ""
        }

        @Test("DOCX and ODT tables made by pandoc: a row is one sentence, cells separated; headings gain no full stop",
              arguments: ["docx", "odt"])
        func tablesAreReadByRows(format: String) async throws {
            let session = try await world()
            let source = session.directory.appendingPathComponent("table.md")
            try Data("""
                # Counts

                | File | Lines | Words |
                |------|------:|------:|
                | README | 120 | 900 |
                | COPYING | 674 | 5600 |

                The table ends here.
                """.utf8).write(to: source)
            let document = session.directory.appendingPathComponent("table.\(format)").path
            let made = try await session.run("pandoc", [source.path, "-o", document])
            try #require(made.status == 0, "pandoc: \(made)")
            let read = try await session.lector(["read", "--lang", "en", "--file", document])
            #expect(read.status == 0, "\(read)\n\(session.daemonLogs())")
            let text = try Self.text(session)
            #expect(text.hasPrefix("Counts\n\nFile, Lines, Words\nREADME, 120, 900\nCOPYING, 674, 5600\n\nThe table ends here."),
                    "\(text)")
            try await session.quiesce()
        }

        @Test("Markdown as people write it: front matter is the title, authors and language, never read; footnotes, tables, task lists")
        func markdownAsPeopleWriteIt() async throws {
            let session = try await world()
            let file = session.directory.appendingPathComponent("notes.md")
            try Data("""
                ---
                title: "Keeper's Notes"
                author: [Ada Keeper, Ben Rower]
                lang: en-GB
                ---

                # Evening

                The lamp was lit at dusk.[^oil] The boats came home.

                - [x] Fill the lamp
                - [ ] Wind the clock

                | Boat | Crew |
                |------|-----:|
                | Gull | 3 |

                [^oil]: Whale oil, in those days.
                """.utf8).write(to: file)
            let read = try await session.lector(["read", "--file", file.path])
            #expect(read.status == 0, "\(read)\n\(session.daemonLogs())")
            let text = try Self.text(session)
            #expect(text == "Evening\n\nThe lamp was lit at dusk. The boats came home.\n\nFill the lamp\nWind the clock\n\n"
                    + "Boat, Crew\n\nGull, 3\n\nWhale oil, in those days.", "\(text)")
            let bus = try BusConnection(address: session.busAddress)
            let metadata = bus.property("org.mpris.MediaPlayer2.lector", "/org/mpris/MediaPlayer2", "org.mpris.MediaPlayer2.Player",
                                        "Metadata") ?? ""
            #expect(metadata.contains("Keeper's Notes") && metadata.contains("'xesam:artist': <['Ada Keeper', 'Ben Rower']>"), "\(metadata)")
            try await session.quiesce()
        }

        @Test("a file that is neither text nor a document is refused in one line (SpeakFile, OpenUri), unless --format text insists")
        func binariesAreRefused() async throws {
            let session = try await world()
            let program = session.directory.appendingPathComponent("program")
            try FileManager.default.copyItem(atPath: Paths.lectorBinary, toPath: program.path)
            let gzip = session.directory.appendingPathComponent("notes.txt.gz")
            let zipped = try await session.run("sh", ["-c", "printf 'Some words to squeeze.\\n' | gzip -c > '\(gzip.path)'"])
            try #require(zipped.status == 0, "\(zipped)")
            for (file, type) in [(program.path, "application/x-executable"), (gzip.path, "application/gzip")] {
                let read = try await session.lector(["read", "--file", file])
                #expect(read.status == 1 && read.stderr.split(separator: "\n").count == 1 && read.stderr.contains(type)
                        && read.stderr.contains("--format text"), "\(read)")
            }
            let opened = try await session.run(
                "gdbus", ["call", "--session", "--dest", "org.mpris.MediaPlayer2.lector", "--object-path", "/org/mpris/MediaPlayer2",
                          "--method", "org.mpris.MediaPlayer2.Player.OpenUri", program.absoluteString], timeout: 10)
            #expect(opened.status != 0 && opened.stderr.contains("not a text document"), "\(opened)")
            #expect(try await session.status().state != "playing")

            // Text coloured with terminal escapes is text (GIO takes ESC for binary).
            let coloured = session.directory.appendingPathComponent("build.log")
            try Data("\u{1B}[1mBuild finished.\u{1B}[0m Every test passed.\n".utf8).write(to: coloured)
            let log = try await session.lector(["read", "--lang", "en", "--file", coloured.path])
            let logText = try Self.text(session)
            #expect(log.status == 0 && logText.contains("Build finished. Every test passed."), "\(log)\n\(logText)")

            let insisted = try await session.lector(["read", "--lang", "en", "--format", "text", "--file", program.path])
            #expect(insisted.status == 0, "\(insisted)")
            try await session.quiesce()
        }
    }
}
