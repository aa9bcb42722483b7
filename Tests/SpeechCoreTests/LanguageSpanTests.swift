import Testing
@testable import SpeechCore

/// Language spans from nested marked elements: inner marks override outer ones, empty tags say "unknown",
/// unmarked elements inherit, and the result is flat.
@Suite struct LanguageSpanTests {
    @Test func nestedMarksOverrideTheOuterOneForTheirExtent() {
        var b = LanguageSpanBuilder()
        b.enter("en", at: 0)           // <html lang=en>
        b.enter(nil, at: 0)            // <p>
        b.leave(at: 10)
        b.enter("de", at: 12)          // <p lang=de>
        b.enter("fr", at: 20)          // <span lang=fr>
        b.leave(at: 25)
        b.leave(at: 30)
        b.enter(nil, at: 32)           // <p> again in English
        b.leave(at: 40)
        b.leave(at: 40)
        #expect(b.spans(upTo: 40) == [
            LanguageSpan(range: 0..<12, language: "en"), LanguageSpan(range: 12..<20, language: "de"),
            LanguageSpan(range: 20..<25, language: "fr"), LanguageSpan(range: 25..<30, language: "de"),
            LanguageSpan(range: 30..<40, language: "en"),
        ])
    }

    @Test func anEmptyTagIsUnknownAndUnmarkedTextIsInNoSpan() {
        var b = LanguageSpanBuilder()
        b.enter(nil, at: 0)
        b.enter("de", at: 5)
        b.enter(" ", at: 8)            // lang="": unknown inside
        b.leave(at: 10)
        b.leave(at: 15)
        b.leave(at: 20)
        #expect(b.spans(upTo: 20) == [LanguageSpan(range: 5..<8, language: "de"), LanguageSpan(range: 10..<15, language: "de")])
    }

    @Test func theSameLanguageMarkedAgainIsOneSpanAndOpenElementsCloseAtTheEnd() {
        var b = LanguageSpanBuilder()
        b.enter("fr", at: 0)
        b.enter("fr", at: 3)
        b.leave(at: 6)
        #expect(b.spans(upTo: 9) == [LanguageSpan(range: 0..<9, language: "fr")])
        #expect(b.current == "fr")
    }

    @Test func findsTheSpanAtAnOffset() {
        var s = TextStructure()
        s.languages = [LanguageSpan(range: 2..<5, language: "de"), LanguageSpan(range: 8..<9, language: "fr")]
        #expect(s.languageSpan(at: 1) == nil)
        #expect(s.languageSpan(at: 2)?.language == "de")
        #expect(s.languageSpan(at: 5) == nil)
        #expect(s.languageSpan(at: 8)?.language == "fr")
        #expect(s.languageSpan(at: 9) == nil)
    }

    @Test func spansTravelOnTheDocumentWorkersWire() {
        var s = TextStructure(title: "T", language: "en")
        s.languages = [LanguageSpan(range: 0..<3, language: "de"), LanguageSpan(range: 4..<7, language: "fr\tCA")]
        let doc = ImportedDocument(text: "abc def", structure: s)
        let decoded = ImportedDocument(encoded: doc.encoded)
        #expect(decoded?.structure.languages == [LanguageSpan(range: 0..<3, language: "de"), LanguageSpan(range: 4..<7, language: "fr CA")])
        let overlapping = "lector-document 1\nspan\t0\t5\tde\nspan\t3\t6\tfr\ntext\t7\nabc def"
        #expect(ImportedDocument(encoded: Array(overlapping.utf8)) == nil)
    }
}


extension LanguageSpanTests {
    /// Each span's text.
    static func pieces(_ spans: [LanguageSpan], _ text: String) -> [String] {
        let scalars = Array(text.unicodeScalars)
        return spans.map { String(String.UnicodeScalarView(scalars[$0.range])) }
    }

    @Test func punctuationClingingToASpanIsMovedIntoIt() {
        let text = "He said «bonjour». Then (hola), and «ciao»x."
        let spans = [LanguageSpan(range: 9..<16, language: "fr"), LanguageSpan(range: 25..<29, language: "es"),
                     LanguageSpan(range: 37..<41, language: "it")]
        #expect(Self.pieces(spans, text) == ["bonjour", "hola", "ciao"])
        // "ciao" is followed by a letter after its closing mark: only the opening one moves.
        #expect(Self.pieces(LanguageSpan.absorbingPunctuation(spans, in: text), text) == ["«bonjour».", "(hola),", "«ciao"])
    }

    @Test func punctuationHeldByAnotherSpanStaysThere() {
        let text = "«Oui».«Non»"
        let spans = [LanguageSpan(range: 0..<6, language: "en"), LanguageSpan(range: 7..<10, language: "fr")]
        let moved = LanguageSpan.absorbingPunctuation(spans, in: text)
        #expect(Self.pieces(moved, text) == ["«Oui».", "Non»"])
        #expect(LanguageSpan.absorbingPunctuation([], in: text).isEmpty)
    }
}
