@testable import Documents
import MarkdownKit
import SpeechCore
import Testing

/// Markdown as people write it: YAML front matter as metadata, GitHub's tables, task lists and footnotes,
/// raw HTML blocks (cmark-gfm and libyaml).
@Suite struct MarkdownTests {
    static func read(_ markdown: String) throws -> ImportedDocumentView {
        ImportedDocumentView(try DocumentWorker.importDocument(Array(markdown.utf8), format: "markdown").get())
    }

    /// The parts of an imported document the tests look at.
    struct ImportedDocumentView {
        var text: String, title: String?, authors: [String], language: String?, chapters: [String]
        init(_ d: ImportedDocument) {
            text = d.text
            title = d.structure.title
            authors = d.structure.authors
            language = d.structure.language
            chapters = d.structure.chapters.map(\.title)
        }
    }

    @Test func frontMatterIsMetadataNeverRead() throws {
        let doc = try Self.read("""
            ---
            title: "The Lighthouse: A Story"
            author:
              - name: Ada Keeper
              - Ben Rower
            lang: en-GB
            tags: [sea, light]
            ---

            # Dusk

            The keeper climbed the stairs.
            """)
        #expect(doc.text == "Dusk\n\nThe keeper climbed the stairs.")
        #expect(doc.title == "The Lighthouse: A Story" && doc.authors == ["Ada Keeper", "Ben Rower"] && doc.language == "en-GB")
        let flow = try Self.read("---\ntitle: Notes\nauthor: [A. One, B. Two]\n...\nBody.\n")
        #expect(flow.text == "Body." && flow.title == "Notes" && flow.authors == ["A. One", "B. Two"])
    }

    @Test func whatIsNotAYAMLMappingStaysMarkdown() {
        #expect(FrontMatter.split("---\n\nSome words\n---\n\nText.\n").0 == FrontMatter())
        #expect(FrontMatter.split("---\nkey: [unclosed\n---\nText.\n").1.hasPrefix("---\nkey"))
        #expect(FrontMatter.split("Text first.\n---\ntitle: x\n---\n").0 == FrontMatter())
        #expect(FrontMatter.split("---\ntitle: never closed\n").0 == FrontMatter())
    }

    @Test func footnotesTablesTaskListsAndHTMLBlocks() throws {
        let doc = try Self.read("""
            The keeper climbed the stairs.[^1] The lamp needed oil.

            - [x] Fill the lamp
            - [ ] Wind the clock

            | File | Lines |
            |------|------:|
            | README | 120 |

            <div align="center"><p>Held in <b>HTML</b>.</p></div>

            <script>alert("never")</script>

            [^1]: As every evening.
            """)
        #expect(doc.text == """
            The keeper climbed the stairs. The lamp needed oil.

            Fill the lamp
            Wind the clock

            File, Lines

            README, 120

            Held in HTML.

            As every evening.
            """)
    }
}
