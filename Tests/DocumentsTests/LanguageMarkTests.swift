import Testing
@testable import Documents
import SpeechCore
import XMLKit

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

    @Test func paragraphsInOneLanguageAreOneSpanAndNoSpanHoldsOnlyWhiteSpace() throws {
        let doc = try HTMLImporter.read(Array("""
            <html><body lang="de"><p>Eins.</p><p>Zwei.</p><p lang="fr">Trois.</p><div lang="es"> </div><p>Vier.</p></body></html>
            """.utf8))
        #expect(Self.pieces(doc) == ["de: Eins. Zwei.", "fr: Trois.", "de: Vier."])
        #expect(doc.structure.languages.count == 3)
    }

    @Test func punctuationAroundAMarkedPhraseIsReadWithIt() throws {
        let doc = try HTMLImporter.read(Array("""
            <html lang="en"><body><p>He said «<i lang="fr">bonjour</i>». Then he left.</p></body></html>
            """.utf8))
        #expect(Self.pieces(doc) == ["fr: «bonjour»."])
    }

    @Test func headingsListsAndTablesKeepTheirMarks() throws {
        let doc = try HTMLImporter.read(Array("""
            <html lang="en"><body><h1 lang="de">Kapitel eins</h1><ul><li>One</li><li lang="fr">Deux</li></ul></body></html>
            """.utf8))
        #expect(doc.text == "Kapitel eins\n\nOne\nDeux")
        #expect(Self.pieces(doc) == ["de: Kapitel eins", "fr: Deux"])
    }
}

/// OpenDocument's `fo:language` in automatic styles and Word's `w:lang` in run properties are the same marks.
@Suite struct OfficeLanguageMarkTests {
    /// The text and spans `walker` built.
    static func document(_ walker: DocumentWalker) -> ImportedDocument {
        var structure = TextStructure()
        structure.languages = walker.languageSpans
        return ImportedDocument(text: walker.builder.text, structure: structure)
    }

    @Test func openDocumentAutomaticStylesMarkSpansAndTheDefaultStyleIsTheDocumentsLanguage() throws {
        let content = """
            <office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
              xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
              xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0"><office:automatic-styles>
            <style:style style:name="P1" style:family="paragraph"><style:text-properties fo:language="de" fo:country="DE"/></style:style>
            <style:style style:name="T1" style:family="text"><style:text-properties fo:language="fr" fo:country="none"/></style:style>
            <style:style style:name="T2" style:family="text"><style:text-properties fo:language="zxx" fo:country="none"/></style:style>
            </office:automatic-styles><office:body><office:text>
            <text:p text:style-name="Standard">English text.</text:p>
            <text:p text:style-name="P1">Deutscher Text. <text:span text:style-name="T1">Texte français.</text:span> <text:span text:style-name="T2">Code.</text:span></text:p>
            </office:text></office:body></office:document-content>
            """
        let styles = """
            <office:document-styles xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
              xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0">
            <office:styles><style:default-style style:family="paragraph"><style:text-properties fo:language="en" fo:country="GB"/>
            </style:default-style></office:styles></office:document-styles>
            """
        let walker = ODTImporter.walk(try MarkupParser.xml(Array(content.utf8)))
        #expect(LanguageMarkTests.pieces(Self.document(walker)) == ["de-DE: Deutscher Text.", "fr: Texte français."])
        #expect(ODTImporter.defaultLanguage(try MarkupParser.xml(Array(styles.utf8))) == "en-GB")
    }

    @Test func wordRunAndParagraphLanguagesMarkSpansAndTheDocumentDefaultsAreTheDocumentsLanguage() throws {
        let w = "xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\""
        let document = """
            <w:document \(w)><w:body>
            <w:p><w:r><w:t>English text.</w:t></w:r></w:p>
            <w:p><w:pPr><w:rPr><w:lang w:val="de-DE"/></w:rPr></w:pPr><w:r><w:t xml:space="preserve">Deutscher Text. </w:t></w:r>
            <w:r><w:rPr><w:lang w:val="fr-FR"/></w:rPr><w:t>Texte français.</w:t></w:r></w:p>
            </w:body></w:document>
            """
        let styles = "<w:styles \(w)><w:docDefaults><w:rPrDefault><w:rPr><w:lang w:val=\"en-US\" w:eastAsia=\"zh-CN\"/></w:rPr></w:rPrDefault></w:docDefaults></w:styles>"
        let walker = DOCXImporter.walk(try MarkupParser.xml(Array(document.utf8)))
        #expect(LanguageMarkTests.pieces(Self.document(walker)) == ["de-DE: Deutscher Text.", "fr-FR: Texte français."])
        #expect(DOCXImporter.defaultLanguage(try MarkupParser.xml(Array(styles.utf8))) == "en-US")
    }
}
