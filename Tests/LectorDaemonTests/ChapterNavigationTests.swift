import SpeechCore
import Testing
@testable import LectorDaemon

/// Where paragraphs start, for `Move paragraph`, and the content types that make a file a document.
@Suite struct ChapterNavigationTests {
    @Test func paragraphsStartAfterBlankLines() {
        #expect(Reader.paragraphStarts("One.\n\nTwo.\nStill two.\n\n\n  Three.") == [0, 6, 26])
        #expect(Reader.paragraphStarts("") == [0])
    }

    @Test func bytesDecideForContainersAndTheNameForText() {
        #expect(DocumentReader.format(byName: "text/plain", byData: "application/pdf") == "pdf")
        #expect(DocumentReader.format(byName: "text/plain", byData: "application/epub+zip") == "epub")
        #expect(DocumentReader.format(byName: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                                      byData: "application/zip") == "zip")
        #expect(DocumentReader.format(byName: "text/markdown", byData: "text/plain") == "markdown")
        #expect(DocumentReader.format(byName: "text/html", byData: "text/html") == "html")
        #expect(DocumentReader.format(byName: "text/plain", byData: "text/plain") == nil)
        #expect(DocumentReader.format(byName: "application/pdf", byData: "text/plain") == nil)
    }

    @Test func theWorkersOutputGetsRoomForTheTextItsHeaderAnnounces() {
        let document = ImportedDocument(text: String(repeating: "Words. ", count: 100_000), structure: TextStructure(title: "T"))
        var output = Array(document.encodedHead) + Array("Words.".utf8)
        #expect(DocumentReader.reserveForText(&output))
        #expect(output.capacity >= document.encoded.count)
        var partial = Array(document.encodedHead.prefix(10))
        #expect(!DocumentReader.reserveForText(&partial))  // the header is not whole yet
        var failure = Array((DocumentWorkerWire.failurePrefix + "not a document, and that is one line long enough\n").utf8)
        #expect(DocumentReader.reserveForText(&failure) && failure.capacity < 1000)
    }
}
