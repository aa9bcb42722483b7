import Testing
@testable import Documents
import SpeechCore

/// The HTML and Markdown importers on small documents: what is read, in which order, and the structure.
@Suite struct HTMLImporterTests {
    static func read(_ html: String) throws -> ImportedDocument {
        try HTMLImporter.read(Array(html.utf8))
    }

    @Test func readsTheArticleWithoutNavigationScriptsAndFootnoteMarkers() throws {
        let doc = try Self.read("""
            <!DOCTYPE html><html lang="en-GB"><head><title>The Lighthouse</title>
            <meta name="author" content="Ada Keeper"><script>alert(1)</script><style>p{}</style></head>
            <body><header>Site menu</header><nav><a href="/">Home</a></nav>
            <main><h1>Keeping the light</h1><p>The lamp burns all night.<sup><a href="#fn1">1</a></sup> It is bright.</p>
            <ul><li>Oil</li><li>Wicks</li></ul>
            <table><tr><th>Day</th><th>Hours</th></tr><tr><td>Monday</td><td>12</td></tr></table>
            <p><img src="x.png" alt="A lighthouse at dusk"></p><h2>The keeper</h2><p>She rows ashore.</p></main>
            <aside>Advertisement</aside><footer>Copyright</footer></body></html>
            """)
        #expect(doc.text == """
            Keeping the light

            The lamp burns all night. It is bright.

            Oil
            Wicks

            Day, Hours
            Monday, 12

            A lighthouse at dusk

            The keeper

            She rows ashore.
            """)
        #expect(doc.structure.title == "The Lighthouse")
        #expect(doc.structure.authors == ["Ada Keeper"])
        #expect(doc.structure.language == "en-GB")
        #expect(doc.structure.chapters.map(\.title) == ["Keeping the light", "The keeper"])
        #expect(doc.structure.chapters.map(\.level) == [1, 2])
        let scalars = Array(doc.text.unicodeScalars)
        for chapter in doc.structure.chapters {
            let at = String(String.UnicodeScalarView(scalars[chapter.start..<(chapter.start + chapter.title.unicodeScalars.count)]))
            #expect(at == chapter.title)
        }
        #expect(TextCleaner.clean(doc.text) == doc.text)
    }

    @Test func withoutMainOrArticleTheDensestBlockIsRead() throws {
        let doc = try Self.read("""
            <html><body><div class="menu"><p>Home</p><p>About</p></div>
            <div class="story"><p>The keeper lit the lamp at dusk, as he did every evening.</p>
            <p>The boats came home one by one across the dark water.</p></div>
            <div class="links"><p>Share</p></div></body></html>
            """)
        #expect(doc.text == "The keeper lit the lamp at dusk, as he did every evening.\n\nThe boats came home one by one across the dark water.")
    }

    /// Past libxml2's 256 levels: the nested text is read, flattened, nothing crashes.
    @Test func deepNestingIsReadFlattened() throws {
        let html = "<p>Before the depths.</p>" + String(repeating: "<div>", count: 100_000) + "deep text"
            + String(repeating: "</div>", count: 100_000)
        let doc = try Self.read(html)
        #expect(doc.text == "Before the depths.\n\ndeep text")
    }

    @Test func markdownBecomesHeadingsAndParagraphs() throws {
        let result = DocumentWorker.importDocument(Array("# One\n\nFirst *para*.\n\n## Two\n\n- a\n- b\n".utf8), format: "markdown")
        let doc = try result.get()
        #expect(doc.text == "One\n\nFirst para.\n\nTwo\n\na\nb")
        #expect(doc.structure.chapters.map(\.title) == ["One", "Two"])
    }

    @Test func theWireFormatRoundTrips() {
        let doc = ImportedDocument(text: "Héllo\n\nWörld", structure: TextStructure(
            title: "T\tx", authors: ["A", "B"], language: "de", chapters: [Chapter(title: "W", start: 7, level: 2)]))
        let back = ImportedDocument(encoded: doc.encoded)
        #expect(back?.text == doc.text)
        #expect(back?.structure.title == "T x")
        #expect(back?.structure.chapters == doc.structure.chapters)
        #expect(ImportedDocument(encoded: Array(doc.encoded.dropLast())) == nil)
    }
}
