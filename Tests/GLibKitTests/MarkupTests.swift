import Testing
@testable import GLibKit

@Suite struct MarkupTests {
    @Test func wellFormedGivesItsEvents() throws {
        let events = try Markup.events(#"<?xml version="1.0"?><speak xml:lang="en">a &amp; b<break time="1s"/></speak>"#)
        let kinds = events.map(\.kind)
        #expect(kinds.contains(.start(name: "speak", attributes: [.init(name: "xml:lang", value: "en")])))
        #expect(kinds.contains(.text("a & b")))
        #expect(kinds.contains(.start(name: "break", attributes: [.init(name: "time", value: "1s")])))
        #expect(kinds.last == .end(name: "speak"))
        #expect(kinds.contains { if case .passthrough(let p) = $0 { return p.hasPrefix("<?xml") } else { return false } })
        #expect(Markup.check("<speak>fine</speak>") == nil)
    }

    @Test func malformedGivesLineAndColumn() throws {
        let error = try #require(Markup.check("<speak>\n  <p>Hello <b>world</p>\n</speak>"))
        #expect(error.line == 2)
        #expect(error.column > 1)
        #expect(error.message.contains("“p”") && error.message.contains("“b”"), "\(error.message)")
        #expect(!error.message.hasPrefix("Error on line"))
        #expect(error.description.hasPrefix("line 2, column "))
    }

    @Test func unknownEntitiesAndEmptyDocumentsAreErrors() {
        #expect(Markup.check("<speak>&nbsp;</speak>")?.message.contains("nbsp") == true)
        #expect(Markup.check("") != nil)
        #expect(Markup.check("<speak>unclosed") != nil)
    }

    @Test func escapesText() {
        #expect(Markup.escape("a < b & \"c\" > d") == "a &lt; b &amp; &quot;c&quot; &gt; d")
    }
}
