import SpeechCore
import Testing

@Suite("DocumentWorkerWire")
struct DocumentWorkerWireTests {
    @Test func aHandoffCarriesTheFormatAndAnyPasswordWholeNewlinesIncluded() throws {
        let plain = try #require(DocumentWorkerWire.handoff(format: "epub", password: nil))
        #expect(DocumentWorkerWire.parseHandoff(plain)! == ("epub", nil))
        let odd = "pa\nss\u{0}wörd"
        let locked = try #require(DocumentWorkerWire.handoff(format: "pdf", password: odd))
        #expect(DocumentWorkerWire.parseHandoff(locked)! == ("pdf", odd))
        let empty = try #require(DocumentWorkerWire.handoff(format: "pdf", password: ""))
        #expect(DocumentWorkerWire.parseHandoff(empty)! == ("pdf", ""))
    }

    @Test func whatCannotBeAHandoffIsRefused() {
        #expect(DocumentWorkerWire.handoff(format: "", password: nil) == nil)
        #expect(DocumentWorkerWire.handoff(format: "p\ndf", password: nil) == nil)
        #expect(DocumentWorkerWire.handoff(format: "pdf", password: String(repeating: "x", count: 5_000)) == nil)
        #expect(DocumentWorkerWire.parseHandoff([]) == nil)
        #expect(DocumentWorkerWire.parseHandoff(Array("\nsecret".utf8)) == nil)
    }

    @Test func aStartCarriesItsTitleAndMarksAndIsTakenOnlyOnceWhole() throws {
        let start = DocumentStart(text: "Calm. Il dit bonsoir. Fin.", title: "A\tLog",
                                  languages: [LanguageSpan(range: 5..<21, language: "fr")])
        let bytes = ImportedDocument.encodedStart(start) + Array("lector-document 1\n".utf8)
        let (decoded, used) = try #require(ImportedDocument.decodeStart(bytes))
        #expect(decoded == DocumentStart(text: start.text, title: "A Log", languages: start.languages))
        #expect(used == bytes.count - "lector-document 1\n".utf8.count)
        for cut in [0, 10, 30, used - 1] {
            #expect(ImportedDocument.decodeStart(Array(bytes[..<cut])) == nil, "taken when cut at \(cut)")
        }
        let untitled = ImportedDocument.encodedStart(DocumentStart(text: "Only text.", title: nil))
        #expect(ImportedDocument.decodeStart(untitled)?.start == DocumentStart(text: "Only text.", title: nil))
        // Spans out of order are not the worker's output.
        let disordered = DocumentStart(text: "abcdefgh", title: nil, languages: [LanguageSpan(range: 4..<6, language: "de"),
                                                                             LanguageSpan(range: 1..<3, language: "fr")])
        #expect(ImportedDocument.decodeStart(ImportedDocument.encodedStart(disordered)) == nil)
    }
}
