import Testing
import GLibKit
import SpeechCore
import Synthesis
import LectorCommon
@testable import LectorDaemon

@Suite struct SSMLDocumentTests {
    @Test func topLevelParagraphsAreUnitsAndBreaksJoinThePrevious() throws {
        let doc = try SSMLDocument.parse("""
            <?xml version="1.0"?>
            <speak version="1.1" xml:lang="de">
              <p>Hello <prosody rate="slow">big world</prosody>.</p>
              <!-- a comment -->
              <break time="1s"/>
              <p>After the break &amp; more.</p>
              Loose text <emphasis>here</emphasis>.
            </speak>
            """)
        #expect(doc.language == "de")
        #expect(doc.units.map(\.text) == ["Hello big world.", "After the break & more.", "Loose text here."])
        #expect(doc.units[0].markup == #"<speak version="1.1" xml:lang="de"><p>Hello <prosody rate="slow">big world</prosody>.</p><break time="1s"></break></speak>"#)
        #expect(doc.units[1].markup.contains(#"xml:lang="de"><p>After the break &amp; more.</p></speak>"#), "\(doc.units[1].markup)")
        for unit in doc.units { #expect(SSMLText.content(of: unit.markup).text == unit.text) }
        let (text, sentences, _) = doc.sentences
        #expect(text == "Hello big world.\nAfter the break & more.\nLoose text here.")
        for s in sentences {
            #expect(String(String.UnicodeScalarView(Array(text.unicodeScalars)[s.range])) == s.text)
            #expect(s.markup != nil)
        }
    }

    @Test func marksArePlacedInTheTextTheyPrecede() throws {
        let doc = try SSMLDocument.parse(#"<speak><mark name="a"/>Hello.<mark name="__spd_1"/> World &amp; <mark name="b"/>you.<mark name="end"/></speak>"#)
        #expect(doc.units.map(\.text) == ["Hello. World & you."])
        #expect(doc.units[0].markup.contains(#"<mark name="__spd_1"/>"#))
        #expect(doc.sentences.marks == [IndexMark(name: "a", offset: 0), IndexMark(name: "__spd_1", offset: 6),
                                        IndexMark(name: "b", offset: 15), IndexMark(name: "end", offset: 19)])
        let blocks = try SSMLDocument.parse(#"<speak><s>One.</s><mark name="m"/><s>Two.</s></speak>"#)
        #expect(blocks.sentences.text == "One.\nTwo.")
        #expect(blocks.sentences.marks == [IndexMark(name: "m", offset: 4)])
    }

    @Test func aMegabyteWithAMarkAfterEverySentenceIsParsedInLinearTime() throws {
        // What speech-dispatcher sends for a 1 MB text: one <speak> with a mark after each sentence.
        let sentence = "A sentence of the long text goes on for a while.<mark name=\"__spd_0\"/> "
        let source = "<speak>" + String(repeating: sentence, count: (1 << 20) / sentence.utf8.count) + "</speak>"
        let clock = ContinuousClock()
        let started = clock.now
        let doc = try SSMLDocument.parse(source)
        #expect(doc.sentences.marks.count > 10_000)
        #expect(clock.now - started < .seconds(10), "parsing took \(clock.now - started)")
    }

    @Test func audioIsReplacedByItsFallbackAndNoReferenceIsKept() throws {
        let doc = try SSMLDocument.parse(#"<speak xml:base="http://example.com/"><audio src="bell.wav">Ding<desc>a bell</desc></audio> dong.<lexicon uri="http://example.com/l.pls" xml:id="l"/></speak>"#)
        #expect(doc.units.map(\.text) == ["Ding dong."])
        let markup = doc.units[0].markup
        #expect(!markup.contains("audio") && !markup.contains("bell") && !markup.contains("http") && !markup.contains("lexicon"), "\(markup)")
    }

    @Test func doctypeIsRefusedWithItsPosition() {
        #expect(throws: MarkupError(line: 2, column: 1, message: "DOCTYPE and entity declarations are not allowed in SSML")) {
            try SSMLDocument.parse("<?xml version=\"1.0\"?>\n<!DOCTYPE speak [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>\n<speak>&x;</speak>")
        }
    }

    @Test func malformedAndNonSpeakDocumentsAreRefused() throws {
        let error = try #require(throws: MarkupError.self) { () throws -> Void in _ = try SSMLDocument.parse("<speak>\n<p>open</speak>") }
        #expect(error.line == 2)
        #expect(throws: MarkupError.self) { try SSMLDocument.parse("<html>Hi</html>") }
        #expect(throws: MarkupError.self) { try SSMLDocument.parse(#"<speak><break time="1s"/></speak>"#) }
    }

    @Test func aTrailingBreakJoinsTheLastUnitALeadingOneTheFirst() throws {
        let doc = try SSMLDocument.parse(#"<speak><p>One.</p><break time="2s"/></speak>"#)
        #expect(doc.units.map(\.text) == ["One."])
        #expect(doc.units[0].markup == #"<speak><p>One.</p><break time="2s"></break></speak>"#)
        let leading = try SSMLDocument.parse(#"<speak><break time="2s"/> <p>One.</p><p>Two.</p></speak>"#)
        #expect(leading.units.map(\.markup) == [#"<speak><break time="2s"></break><p>One.</p></speak>"#, "<speak><p>Two.</p></speak>"])
    }

    @Test func twentyThousandEmptyParagraphsJoinTheirNeighbourInLinearTime() throws {
        let count = 20_000
        let empties = String(repeating: "<p/>", count: count)
        let start = ContinuousClock.now
        let after = try SSMLDocument.parse("<speak><p>One.</p>" + empties + "<p>Two.</p></speak>")
        let before = try SSMLDocument.parse("<speak>" + empties + "<p>One.</p></speak>")
        let elapsed = ContinuousClock.now - start
        let joined = String(repeating: "<p></p>", count: count)
        #expect(after.units == [.init(text: "One.", markup: "<speak><p>One.</p>" + joined + "</speak>"),
                                .init(text: "Two.", markup: "<speak><p>Two.</p></speak>")])
        #expect(before.units == [.init(text: "One.", markup: "<speak>" + joined + "<p>One.</p></speak>")])
        // Linear in the document: a fraction of a second even in a debug build; the bound is generous.
        #expect(elapsed < .seconds(10), "\(elapsed)")
    }

    @Test func controlCharactersFromReferencesAreCleanedLikePlainText() throws {
        // U+0001 starts an eSpeak NG embedded command ("20A": amplitude 20); ESC [ … m is a terminal escape;
        // U+0085 (NEL) is a C1 control.
        let doc = try SSMLDocument.parse(#"<speak><p>Quiet &#1;20A now&#x1B;[31m red&#133;here.</p><p><prosody rate="&#1;20S" pitch="x&#x7F;y">Two&#9;tabs&#10;line.</prosody></p></speak>"#)
        #expect(doc.units.map(\.text) == ["Quiet  20A now red here.", "Two\ttabs\nline."])
        #expect(doc.units[1].markup == "<speak><p><prosody rate=\" 20S\" pitch=\"x y\">Two\ttabs\nline.</prosody></p></speak>")
        for unit in doc.units {
            // Nothing a control character could come back from: no character reference, no control character.
            #expect(!unit.markup.contains("&#"), "\(unit.markup)")
            let controls = unit.markup.unicodeScalars.filter { ($0.value < 0x20 && $0 != "\t" && $0 != "\n") || (0x7F...0x9F).contains($0.value) }
            #expect(controls.isEmpty, "\(unit.markup.debugDescription)")
            #expect(SSMLText.content(of: unit.markup).text == unit.text)
        }
    }

    @Test func detection() {
        #expect(Input.looksLikeSSML("<speak>hi</speak>"))
        #expect(Input.looksLikeSSML("\u{FEFF}  <?xml version=\"1.0\"?>\n<speak>hi</speak>"))
        #expect(!Input.looksLikeSSML("<?xml version=\"1.0\"?><html/>"))
        #expect(!Input.looksLikeSSML("a < b & c > d"))
    }
}
