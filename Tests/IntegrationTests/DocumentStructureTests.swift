import Foundation
import Testing

extension Integration {
    /// Document structure that would cost time quadratic in its size, or be dropped without a word: an EPUB
    /// whose chapters are not zipped in spine order, markup nested deeper than libxml2's default limit. The
    /// documents are made during the test (files written, then zipped with `zip`), read through the daemon.
    @Suite(.privateSession)
    struct DocumentStructure {
        /// An EPUB 3 of `chapters` one-paragraph chapters in `folder`, zipped by `zip` with the chapters in
        /// the reverse of their spine order; returns its path.
        static func reversedEPUB(chapters: Int, in session: PrivateSession) async throws -> String {
            let root = session.directory.appendingPathComponent("reversed")
            let text = root.appendingPathComponent("EPUB/text")
            try FileManager.default.createDirectory(at: text, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: root.appendingPathComponent("META-INF"), withIntermediateDirectories: true)
            try Data("application/epub+zip".utf8).write(to: root.appendingPathComponent("mimetype"))
            try Data("""
                <?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
                <rootfiles><rootfile full-path="EPUB/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>
                """.utf8).write(to: root.appendingPathComponent("META-INF/container.xml"))
            var manifest = "", spine = "", names: [String] = []
            for n in 1...chapters {
                let name = String(format: "ch%05d.xhtml", n)
                names.append("EPUB/text/" + name)
                manifest += "<item id=\"c\(n)\" href=\"text/\(name)\" media-type=\"application/xhtml+xml\"/>"
                spine += "<itemref idref=\"c\(n)\"/>"
                try Data("""
                    <?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>\(n)</title></head>
                    <body><h1>Chapter \(n)</h1><p>This is the text of chapter number \(n).</p></body></html>
                    """.utf8).write(to: text.appendingPathComponent(name))
            }
            try Data("""
                <?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
                <metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="id">reversed</dc:identifier>
                <dc:title>Reversed</dc:title><dc:language>en</dc:language></metadata>
                <manifest>\(manifest)</manifest><spine>\(spine)</spine></package>
                """.utf8).write(to: root.appendingPathComponent("EPUB/content.opf"))
            let epub = session.directory.appendingPathComponent("reversed.epub").path
            let list = (["mimetype", "META-INF/container.xml", "EPUB/content.opf"] + names.reversed()).joined(separator: "\n")
            let zipped = try await session.run("sh", ["-c", "cd '\(root.path)' && zip -q -X -D '\(epub)' -@"],
                                               stdin: Data(list.utf8), timeout: 120)
            try #require(zipped.status == 0, "zip: \(zipped)")
            return epub
        }

        @Test("an EPUB of 4,000 chapters zipped in reverse spine order is read whole, to its last chapter")
        func reversedEPUBIsReadWhole() async throws {
            let session = try await world()
            let epub = try await Self.reversedEPUB(chapters: 4_000, in: session)
            let read = try await session.lector(["read", "--lang", "en", "--file", epub])
            #expect(read.status == 0, "\(read)\n\(session.daemonLogs())")
            let bus = try BusConnection(address: session.busAddress)
            let whole = await poll(timeout: 30, {
                bus.property("org.lector.Lector", "/org/lector/Lector", "org.lector.Lector1", "Text") ?? ""
            }, until: { $0.contains("chapter number 4000.") })
            #expect(whole.contains("This is the text of chapter number 1.") && whole.contains("chapter number 4000."),
                    "the book was not read whole: \(whole.suffix(200))\n\(session.daemonLogs())")
            #expect(!session.daemonLogs().contains("read only the start"), "\(session.daemonLogs())")
            let chapters = try await session.lector(["chapters"])
            #expect(chapters.stdout.split(separator: "\n").count == 4_000, "\(chapters.stdout.suffix(300))")
            try await session.quiesce()
        }

        @Test("200,000 nested elements in HTML and in an EPUB's chapter: the nested text and what follows are read")
        func deepNestingIsReadWhole() async throws {
            let session = try await world()
            let depth = 200_000
            let nested = String(repeating: "<span>", count: depth) + "Deep inside the spans." + String(repeating: "</span>", count: depth)
            let html = session.directory.appendingPathComponent("deep.html")
            try Data("<html><body><p>Before the depths.</p>\(nested)<p>After the depths.</p></body></html>".utf8).write(to: html)
            let read = try await session.lector(["read", "--lang", "en", "--file", html.path])
            #expect(read.status == 0, "\(read)\n\(session.daemonLogs())")
            let bus = try BusConnection(address: session.busAddress)
            let text = bus.property("org.lector.Lector", "/org/lector/Lector", "org.lector.Lector1", "Text") ?? ""
            #expect(text.contains("Deep inside the spans.") && text.contains("After the depths."), "\(text.prefix(300))")

            // Only nesting: no text before or after it.
            let only = session.directory.appendingPathComponent("only.html")
            try Data("<html><body>\(nested)</body></html>".utf8).write(to: only)
            let onlyRead = try await session.lector(["read", "--lang", "en", "--file", only.path])
            #expect(onlyRead.status == 0, "\(onlyRead)")

            let epub = try await Self.reversedEPUB(chapters: 2, in: session)
            let chapter = session.directory.appendingPathComponent("reversed/EPUB/text/ch00001.xhtml")
            try Data("""
                <?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>1</title></head>
                <body><p>Before the depths.</p>\(nested)<p>After the depths of the chapter.</p></body></html>
                """.utf8).write(to: chapter)
            let updated = try await session.run("sh", ["-c", "cd '\(session.directory.path)/reversed' && zip -q '\(epub)' EPUB/text/ch00001.xhtml"])
            try #require(updated.status == 0, "\(updated)")
            let book = try await session.lector(["read", "--lang", "en", "--file", epub])
            #expect(book.status == 0, "\(book)\n\(session.daemonLogs())")
            let bookText = bus.property("org.lector.Lector", "/org/lector/Lector", "org.lector.Lector1", "Text") ?? ""
            #expect(bookText.contains("Deep inside the spans.") && bookText.contains("After the depths of the chapter.")
                    && bookText.contains("chapter number 2."), "\(bookText.prefix(300))")
            try await session.quiesce()
        }
    }
}
