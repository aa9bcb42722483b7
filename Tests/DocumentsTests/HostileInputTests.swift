import ArchiveKit
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

    @Test func garbageAndTruncatedZipsAreOneError() {
        #expect(throws: ArchiveError.self) { try ZipReader(Array("not a zip".utf8)) }
        #expect(throws: ArchiveError.self) { try ZipReader([0x50, 0x4B, 0x03, 0x04, 0, 0]) }
    }
}
