import Foundation
import Testing

extension Integration {
    /// Documents made by pandoc during the test (EPUB, ODT, DOCX, HTML, Markdown from the sample text), read
    /// with `lector read --file`, MPRIS OpenUri and `--format`; broken, DRM-protected and lying ones refused in
    /// one line while the daemon keeps answering.
    @Suite(.privateSession)
    struct Documents {
        static let markdown = """
            ---
            title: The Lighthouse Keeper
            author: Ada Keeper
            lang: en
            ---

            # Dusk

            The lighthouse keeper climbed the spiral stairs at dusk.[^1] The lamp needed oil.

            # Night

            Three fishing boats were still out past the reef.

            [^1]: As every evening.
            """

        /// Makes `book.FORMAT` in the session's folder with pandoc; returns its path.
        static func make(_ format: String, in session: PrivateSession, name: String? = nil) async throws -> String {
            let source = session.directory.appendingPathComponent("book.md")
            try Data(markdown.utf8).write(to: source)
            let target = session.directory.appendingPathComponent(name ?? "book.\(format)").path
            let args = format == "html" ? ["-s", source.path, "-o", target] : [source.path, "-o", target]
            let made = try await session.run("pandoc", args)
            try #require(made.status == 0, "pandoc: \(made)")
            return target
        }

        @Test("EPUB, ODT, DOCX and HTML files are heard, their text and title from the document",
              arguments: ["epub", "odt", "docx", "html"])
        func documentsAreRead(format: String) async throws {
            let session = try await world()
            let path = try await Self.make(format, in: session)
            let mark = session.recorder.mark()
            let read = try await session.lector(["read", "--file", path])
            #expect(read.status == 0 && read.stderr.isEmpty, "\(read)\n\(session.daemonLogs())")
            let first = await session.recorder.waitForSpeech(after: mark, timeout: 3)
            #expect(first != nil, "nothing heard")
            let bus = try BusConnection(address: session.busAddress)
            let text = bus.property("org.lector.Lector", "/org/lector/Lector", "org.lector.Lector1", "Text") ?? ""
            #expect(text.contains("Three fishing boats were still out past the reef."), "\(text)")
            #expect(text.contains("at dusk. The lamp"), "footnote marker read: \(text)")
            #expect(!text.contains("</") && !text.contains("<p") && !text.contains("PK"), "markup or zip bytes read: \(text)")
            let metadata = bus.property("org.mpris.MediaPlayer2.lector", "/org/mpris/MediaPlayer2", "org.mpris.MediaPlayer2.Player",
                                        "Metadata") ?? ""
            #expect(metadata.contains("'xesam:album': <'The Lighthouse Keeper'>"), "\(metadata)")
            #expect(metadata.contains("'xesam:artist': <['Ada Keeper']>"), "\(metadata)")
            try await session.quiesce()
        }

        @Test("MPRIS OpenUri reads an EPUB and lists the document types; --format reads piped HTML and Markdown")
        func openUriAndFormat() async throws {
            let session = try await world()
            let path = try await Self.make("epub", in: session)
            let bus = try BusConnection(address: session.busAddress)
            let mark = session.recorder.mark()
            let opened = bus.player("OpenUri", "('file://\(path)',)")
            #expect(opened.value != nil, "\(opened)\n\(session.daemonLogs())")
            #expect(await session.recorder.waitForSpeech(after: mark, timeout: 3) != nil, "nothing heard")
            let types = bus.property("org.mpris.MediaPlayer2.lector", "/org/mpris/MediaPlayer2", "org.mpris.MediaPlayer2",
                                     "SupportedMimeTypes") ?? ""
            for type in ["application/epub+zip", "text/html", "text/markdown", "application/vnd.oasis.opendocument.text"] {
                #expect(types.contains(type), "\(types)")
            }
            let html = try await session.lector(["read", "--format", "html"],
                                                stdin: Data("<html><body><nav>Menu</nav><p>Piped <b>web</b> page.</p></body></html>".utf8))
            #expect(html.status == 0, "\(html)")
            let text = bus.property("org.lector.Lector", "/org/lector/Lector", "org.lector.Lector1", "Text") ?? ""
            #expect(text.contains("Piped web page.") && !text.contains("Menu"), "\(text)")
            let md = try await session.lector(["read", "--format", "markdown"], stdin: Data("# Title\n\nSome *words*.\n".utf8))
            #expect(md.status == 0, "\(md)")
            let mdText = bus.property("org.lector.Lector", "/org/lector/Lector", "org.lector.Lector1", "Text") ?? ""
            #expect(mdText.contains("Title\\n\\nSome words.") || mdText.contains("Title\n\nSome words."), "\(mdText)")
            try await session.quiesce()
        }

        /// Three pages of PostScript with a running header, page numbers, a word hyphenated across lines, an
        /// outline (pdfmark) and Info title and author, made into a PDF by Ghostscript.
        static let postScript = """
            %!PS
            /Helvetica findfont 12 scalefont setfont
            /line { moveto show } def
            /page { /n exch def (The Lighthouse Keeper) 72 760 line n 3 string cvs 300 40 line } def
            [/Title (Dusk) /Page 1 /OUT pdfmark
            [/Title (Night) /Page 3 /OUT pdfmark
            [/Title (The Lighthouse Keeper) /Author (Ada Keeper) /DOCINFO pdfmark
            (Dusk) 72 700 line
            (The lighthouse keeper climbed the spiral stairs at dusk, as he had done every) 72 680 line
            (evening for thirty-one years. The lamp needed oil, the lens needed pol-) 72 666 line
            (ishing, and the logbook needed a line about the weather.) 72 652 line
            1 page showpage
            (Tonight the wind came from the north-east at twenty knots. Three fishing) 72 700 line
            (boats were still out past the reef; he could see their lights rising and) 72 686 line
            (falling like slow fireflies.) 72 672 line
            2 page showpage
            (Night) 72 700 line
            (When the last boat rounded the point, he allowed himself a cup of tea.) 72 680 line
            3 page showpage
            """

        @Test("PDF: heard without headers or page numbers, hyphenation joined; encrypted and scanned ones in one line")
        func pdf() async throws {
            let session = try await world()
            let ps = session.directory.appendingPathComponent("book.ps")
            try Data(Self.postScript.utf8).write(to: ps)
            let pdf = session.directory.appendingPathComponent("book.pdf").path
            let encrypted = session.directory.appendingPathComponent("encrypted.pdf").path
            let scanned = session.directory.appendingPathComponent("scanned.pdf").path
            let scan = session.directory.appendingPathComponent("scan.ps")
            try Data("%!PS\n0.5 setgray 72 72 400 600 rectfill showpage\n".utf8).write(to: scan)
            for (args, what) in [([ps.path, pdf], "pdf"), (["-sOwnerPassword=owner", "-sUserPassword=secret", ps.path, encrypted], "encrypted"),
                                 ([scan.path, scanned], "scanned")] {
                let made = try await session.run("ps2pdf", args)
                try #require(made.status == 0, "ps2pdf \(what): \(made)")
            }
            let mark = session.recorder.mark()
            let read = try await session.lector(["read", "--file", pdf])
            #expect(read.status == 0, "\(read)\n\(session.daemonLogs())")
            #expect(await session.recorder.waitForSpeech(after: mark, timeout: 3) != nil, "nothing heard")
            let bus = try BusConnection(address: session.busAddress)
            let text = bus.property("org.lector.Lector", "/org/lector/Lector", "org.lector.Lector1", "Text") ?? ""
            #expect(text.contains("polishing") && !text.contains("pol-"), "\(text)")
            #expect(!text.contains("The Lighthouse Keeper") && !text.contains("2") && !text.contains("3"), "\(text)")
            #expect(text.contains("Three fishing boats"), "\(text)")

            let locked = try await session.lector(["read", "--file", encrypted])
            #expect(locked.status == 1 && locked.stderr.contains("password"), "\(locked)")
            let wrong = try await session.lector(["read", "--password", "wrong", "--file", encrypted])
            #expect(wrong.status == 1 && wrong.stderr.contains("password is wrong"), "\(wrong)")
            let unlocked = try await session.lector(["read", "--password", "secret", "--file", encrypted])
            #expect(unlocked.status == 0, "\(unlocked)")
            let image = try await session.lector(["read", "--file", scanned])
            #expect(image.status == 1 && image.stderr.contains("no text layer"), "\(image)")
            try await session.quiesce()
        }

        @Test("chapters: listed with start times; chapter N, next/previous --chapter and next --paragraph move there")
        func chapters() async throws {
            let session = try await world()
            let sample = try String(contentsOf: Paths.packageRoot.appendingPathComponent("data/samples/en.txt"), encoding: .utf8)
            let md = "# Harbour\n\n\(sample)\n\n# Storm\n\nThe storm came at midnight.\n\nWaves broke on the rocks.\n\n# Morning\n\nThe sea was calm at dawn.\n"
            let source = session.directory.appendingPathComponent("chapters.md")
            try Data(md.utf8).write(to: source)
            let epub = session.directory.appendingPathComponent("chapters.epub").path
            let made = try await session.run("pandoc", [source.path, "--metadata", "title=Three Chapters", "-o", epub])
            try #require(made.status == 0, "\(made)")
            #expect(try await session.lector(["read", "--file", epub]).status == 0)
            let list = try await session.lector(["chapters"])
            let lines = list.stdout.split(separator: "\n")
            #expect(list.status == 0 && lines.count == 3, "\(list)")
            #expect(lines.map { $0.split(separator: "\t").last.map(String.init) ?? "" } == ["Harbour", "Storm", "Morning"], "\(list)")
            // H:MM:SS, after the title page, increasing.
            let times = lines.map { line in
                line.split(separator: "\t")[1].split(separator: ":").reduce(0) { $0 * 60 + (Int($1) ?? 0) }
            }
            #expect(times.count == 3 && times[0] < 5 && times[0] < times[1] && times[1] < times[2], "\(list)")

            #expect(try await session.lector(["chapter", "3"]).status == 0)
            #expect(try await session.waitForSentence(containing: "Morning", timeout: 3).sentence?.contains("Morning") == true)
            let mark = session.recorder.mark()
            #expect(try await session.lector(["previous", "--chapter"]).status == 0)
            #expect(try await session.waitForSentence(containing: "Storm", timeout: 3).sentence?.contains("Storm") == true)
            #expect(await session.recorder.waitForSpeech(after: mark, timeout: 2) != nil, "nothing heard after the jump")
            #expect(try await session.lector(["next", "--paragraph"]).status == 0)
            #expect(try await session.waitForSentence(containing: "midnight", timeout: 3).sentence?.contains("midnight") == true)
            #expect(try await session.lector(["next", "--chapter"]).status == 0)
            #expect(try await session.waitForSentence(containing: "Morning", timeout: 3).sentence?.contains("Morning") == true)
            let none = try await session.lector(["next", "--chapter"])
            #expect(none.status == 1 && none.stderr.contains("no next chapter"), "\(none)")
            let missing = try await session.lector(["chapter", "9"])
            #expect(missing.status == 1 && missing.stderr.contains("no chapter 9"), "\(missing)")
            // The bookmark: stopped in the second chapter, the same book read again goes on there.
            #expect(try await session.lector(["chapter", "2"]).status == 0)
            // Its second sentence being read: the first one was heard, and the bookmark moved there.
            _ = try await session.waitForSentence(containing: "midnight", timeout: 5)
            #expect(try await session.lector(["stop"]).status == 0)
            #expect(try await session.lector(["read", "--file", epub]).status == 0)
            let resumed = try await poll(timeout: 3, session.status, until: { $0.sentence != nil })
            #expect(resumed.sentence?.contains("midnight") == true || resumed.sentence?.contains("Waves") == true,
                    "not resumed at the bookmark: \(resumed)\n\(session.daemonLogs())")
            try await session.quiesce()
        }

        @Test("a long PDF is heard from its first pages while the rest is extracted, then read whole")
        func longPDF() async throws {
            let session = try await world()
            var ps = ["%!PS", "/Helvetica findfont 10 scalefont setfont",
                      "[/Title (Last Part) /Page 60 /OUT pdfmark"]
            for page in 1...60 {
                ps.append("72 760 moveto (A Long Report) show")
                for line in 0..<40 {
                    let words = page == 60 && line == 0 ? "The final page says goodbye."
                        : "Line \(line) of page \(page) tells of boats and lamps and the long grey sea."
                    ps.append("72 \(730 - line * 14) moveto (\(words)) show")
                }
                ps.append("300 40 moveto (\(page)) show showpage")
            }
            let source = session.directory.appendingPathComponent("long.ps")
            try Data(ps.joined(separator: "\n").utf8).write(to: source)
            let pdf = session.directory.appendingPathComponent("long.pdf").path
            let made = try await session.run("ps2pdf", [source.path, pdf], timeout: 60)
            try #require(made.status == 0, "\(made)")
            let mark = session.recorder.mark()
            let read = try await session.lector(["read", "--lang", "en", "--file", pdf])
            #expect(read.status == 0, "\(read)\n\(session.daemonLogs())")
            #expect(await session.recorder.waitForSpeech(after: mark, timeout: 3) != nil, "nothing heard")
            let bus = try BusConnection(address: session.busAddress)
            let whole = await poll(timeout: 10, {
                bus.property("org.lector.Lector", "/org/lector/Lector", "org.lector.Lector1", "Text") ?? ""
            }, until: { $0.contains("The final page says goodbye.") })
            #expect(whole.contains("The final page says goodbye."), "the rest never came: \(whole.suffix(300))\n\(session.daemonLogs())")
            #expect(!whole.contains("A Long Report"), "running header read")
            let chapters = try await session.lector(["chapters"])
            #expect(chapters.status == 0 && chapters.stdout.contains("Last Part"), "\(chapters)")
            #expect(try await session.lector(["chapter", "1"]).status == 0)
            #expect(try await session.waitForSentence(containing: "goodbye", timeout: 3).sentence?.contains("goodbye") == true)
            try await session.quiesce()
        }

        @Test("bad documents: truncated, DRM-protected, a zip bomb, external entities, 100,000 nested elements, an EPUB named .txt; one line each, daemon answers")
        func badDocuments() async throws {
            let session = try await world()
            let epub = try await Self.make("epub", in: session)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: epub))
            let truncated = session.directory.appendingPathComponent("truncated.epub")
            try bytes.prefix(bytes.count / 2).write(to: truncated)
            let cut = try await session.lector(["read", "--file", truncated.path])
            #expect(cut.status == 1 && cut.stderr.split(separator: "\n").count == 1 && cut.stderr.contains("cannot read"), "\(cut)")

            // DRM: an encryption.xml that encrypts a content document.
            let drmDir = session.directory.appendingPathComponent("drm")
            try FileManager.default.createDirectory(at: drmDir.appendingPathComponent("META-INF"), withIntermediateDirectories: true)
            try Data("""
                <encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" xmlns:enc="http://www.w3.org/2001/04/xmlenc#">
                <enc:EncryptedData><enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/>
                <enc:CipherData><enc:CipherReference URI="EPUB/text/ch001.xhtml"/></enc:CipherData></enc:EncryptedData></encryption>
                """.utf8).write(to: drmDir.appendingPathComponent("META-INF/encryption.xml"))
            let drm = session.directory.appendingPathComponent("drm.epub")
            try FileManager.default.copyItem(atPath: epub, toPath: drm.path)
            _ = try await session.run("sh", ["-c", "cd '\(drmDir.path)' && zip -q '\(drm.path)' META-INF/encryption.xml"])
            let refused = try await session.lector(["read", "--file", drm.path])
            #expect(refused.status == 1 && refused.stderr.contains("DRM"), "\(refused)")

            // A zip bomb: 200 MB of zeros in one entry.
            let bomb = session.directory.appendingPathComponent("bomb.docx")
            _ = try await session.run("sh", ["-c", "cd '\(session.directory.path)' && mkdir -p word && head -c 200000000 /dev/zero > word/document.xml && zip -q '\(bomb.path)' word/document.xml && rm word/document.xml"], timeout: 60)
            let boom = try await session.lector(["read", "--file", bomb.path])
            #expect(boom.status == 1 && boom.stderr.contains("too large"), "\(boom)")

            // A Word document whose XML names /etc/passwd as an external entity: never resolved.
            let xxeDir = session.directory.appendingPathComponent("xxe")
            try FileManager.default.createDirectory(at: xxeDir.appendingPathComponent("word"), withIntermediateDirectories: true)
            try Data("""
                <?xml version="1.0"?><!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]>
                <w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>
                <w:p><w:r><w:t>Entity here: &x; and nothing else.</w:t></w:r></w:p></w:body></w:document>
                """.utf8).write(to: xxeDir.appendingPathComponent("word/document.xml"))
            let xxe = session.directory.appendingPathComponent("xxe.docx")
            _ = try await session.run("sh", ["-c", "cd '\(xxeDir.path)' && zip -q '\(xxe.path)' word/document.xml"])
            #expect(try await session.lector(["read", "--file", xxe.path]).status == 0)
            let bus = try BusConnection(address: session.busAddress)
            let xxeText = bus.property("org.lector.Lector", "/org/lector/Lector", "org.lector.Lector1", "Text") ?? ""
            #expect(xxeText.contains("Entity here:") && !xxeText.contains("root:"), "\(xxeText)")

            // 100,000 nested elements: what comes before them is read, the daemon goes on.
            let deep = session.directory.appendingPathComponent("deep.html")
            try Data(("<html><body><p>Before the depths.</p>" + String(repeating: "<div>", count: 100_000) + "deep"
                      + String(repeating: "</div>", count: 100_000) + "</body></html>").utf8).write(to: deep)
            let deepRead = try await session.lector(["read", "--file", deep.path])
            #expect(deepRead.status == 0, "\(deepRead)")

            // An EPUB named .txt is read as the EPUB it is.
            let lying = session.directory.appendingPathComponent("notes.txt")
            try FileManager.default.copyItem(atPath: epub, toPath: lying.path)
            let liar = try await session.lector(["read", "--file", lying.path])
            #expect(liar.status == 0, "\(liar)")
            let text = bus.property("org.lector.Lector", "/org/lector/Lector", "org.lector.Lector1", "Text") ?? ""
            #expect(text.contains("Three fishing boats"), "\(text)")
            let status = try await session.status()
            #expect(status.exitStatus == 0, "the daemon stopped answering: \(status)\n\(session.daemonLogs())")

            try await session.quiesce()
        }
    }
}
