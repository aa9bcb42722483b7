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
}
