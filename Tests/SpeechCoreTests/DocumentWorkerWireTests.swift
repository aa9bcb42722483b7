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
}
