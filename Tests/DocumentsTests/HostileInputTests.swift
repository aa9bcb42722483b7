import ArchiveKit
@testable import Documents
import Testing
import XMLKit

/// XML and zips built to attack a parser: nothing outside the bytes is read, nothing explodes.
@Suite struct HostileInputTests {
    @Test func externalEntitiesAreNeverResolved() throws {
        let xml = """
            <?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd"><!ENTITY n SYSTEM "http://127.0.0.1:9/">]>
            <x>before&e;&n;after</x>
            """
        let root = try MarkupParser.xml(Array(xml.utf8))
        #expect(root.textContent == "beforeafter")
    }

    @Test func anExternalDTDIsNotLoaded() throws {
        let xml = "<?xml version=\"1.0\"?><!DOCTYPE x SYSTEM \"file:///etc/passwd\"><x>text</x>"
        #expect(try MarkupParser.xml(Array(xml.utf8)).textContent == "text")
    }

    @Test func billionLaughsDoNotExpand() {
        var xml = "<?xml version=\"1.0\"?><!DOCTYPE x [<!ENTITY a0 \"lol\">"
        for i in 1...9 { xml += "<!ENTITY a\(i) \"" + String(repeating: "&a\(i - 1);", count: 10) + "\">" }
        xml += "]><x>&a9;</x>"
        let text = (try? MarkupParser.xml(Array(xml.utf8)))?.textContent ?? ""
        #expect(text.count < 1000)
    }

    /// libxml2 stops at depth 256 unless told otherwise, keeping what came before: deeper markup is read
    /// (flattened past `MarkupParser.maximumDepth`), with everything after it.
    @Test func markupNestedDeeperThanLibxml2sDefaultIsReadWhole() throws {
        let depth = 200_000
        let nested = String(repeating: "<span>", count: depth) + "Deep inside." + String(repeating: "</span>", count: depth)
        let html = "<html><body><p>Before.</p>\(nested)<p>After.</p></body></html>"
        let page = try HTMLImporter.read(Array(html.utf8))
        #expect(page.text == "Before.\n\nDeep inside.\n\nAfter.")
        let xhtml = "<?xml version=\"1.0\"?><html xmlns=\"http://www.w3.org/1999/xhtml\"><body><p>Before.</p>\(nested)<p>After.</p></body></html>"
        #expect(try MarkupParser.xml(Array(xhtml.utf8)).textContent == "Before.Deep inside.After.")
    }

    /// XML that declares entities is parsed within libxml2's limits (lifting them would let entity
    /// amplification in attributes cost seconds and hundreds of MB): nesting past them is refused, not cut.
    @Test func deepXMLDeclaringEntitiesIsRefusedNotCut() {
        let nested = String(repeating: "<a>", count: 300) + "deep" + String(repeating: "</a>", count: 300)
        let xml = "<?xml version=\"1.0\"?><!DOCTYPE x [<!ENTITY e \"e\">]><x>\(nested)<b>after</b></x>"
        #expect { try MarkupParser.xml(Array(xml.utf8), recover: true) } throws: { ($0 as? MarkupError)?.stoppedEarly == true }
    }

    @Test func garbageAndTruncatedZipsAreOneError() {
        #expect(throws: ArchiveError.self) { try ZipReader(Array("not a zip".utf8)) }
        #expect(throws: ArchiveError.self) { try ZipReader([0x50, 0x4B, 0x03, 0x04, 0, 0]) }
    }
}
