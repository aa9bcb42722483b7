import Testing
@testable import Documents
import SpeechCore

/// `lang` and `xml:lang` marks of HTML and XHTML become language spans of the text.
@Suite struct LanguageMarkTests {
    /// The text of each span with its language, white space trimmed.
    static func pieces(_ doc: ImportedDocument) -> [String] {
        let scalars = Array(doc.text.unicodeScalars)
        return doc.structure.languages.map { span in
            let piece = String(String.UnicodeScalarView(scalars[span.range]))
            return span.language + ": " + piece.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
        }
    }

    @Test func elementsInOtherLanguagesInsideAnEnglishPage() throws {
        let doc = try HTMLImporter.read(Array("""
            <!DOCTYPE html><html lang="en"><head><title>T</title></head><body><main>
            <p>The first paragraph is English.</p>
            <p lang="de">Der zweite Absatz ist Deutsch. <span lang="fr">Mais ceci est français.</span> Und wieder Deutsch.</p>
            <p>Back to English.</p></main></body></html>
            """.utf8))
        // The root's language is the document's (a default where detection is unsure), not a mark.
        #expect(Self.pieces(doc) == ["de: Der zweite Absatz ist Deutsch.", "fr: Mais ceci est français.", "de: Und wieder Deutsch."])
        #expect(doc.structure.language == "en")
        let spans = doc.structure.languages
        #expect(zip(spans, spans.dropFirst()).allSatisfy { $0.range.upperBound == $1.range.lowerBound })
    }

    @Test func unmarkedTextIsInNoSpanAndAnEmptyLangSaysUnknown() throws {
        let doc = try HTMLImporter.read(Array("""
            <html><body lang="de"><p lang="">No language is said here.</p><div lang="es"><p>Hola a todos.</p>
            <p lang="">Unknown again.</p><p>Adiós.</p></div></body></html>
            """.utf8))
        #expect(Self.pieces(doc) == ["es: Hola a todos.", "es: Adiós."])
        #expect(doc.structure.language == nil)
    }

    @Test func xmlLangBeatsLangAndTheArticleInheritsItsAncestorsLanguage() throws {
        let doc = try HTMLImporter.read(Array("""
            <html xmlns="http://www.w3.org/1999/xhtml" lang="en" xml:lang="it"><body><div lang="de"><nav>Menü</nav>
            <article><p>Ein Artikel.</p><p xml:lang="fr" lang="en">Un article.</p></article></div></body></html>
            """.utf8))
        #expect(Self.pieces(doc) == ["de: Ein Artikel.", "fr: Un article."])
    }

    @Test func headingsListsAndTablesKeepTheirMarks() throws {
        let doc = try HTMLImporter.read(Array("""
            <html lang="en"><body><h1 lang="de">Kapitel eins</h1><ul><li>One</li><li lang="fr">Deux</li></ul></body></html>
            """.utf8))
        #expect(doc.text == "Kapitel eins.\n\nOne.\nDeux.")
        #expect(Self.pieces(doc) == ["de: Kapitel eins.", "fr: Deux."])
    }
}
