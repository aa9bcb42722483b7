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

    /// A page laid out as groff sets a manual page: a header row of three lines (name, section title, name),
    /// body rows 12 points apart, a footer row of three lines (source, date, page number) far below.
    static func manualPage(_ n: Int, body: [String]) -> [PDFLine] {
        var lines = [PDFLine(text: "BASH(1)", top: 40, left: 72), PDFLine(text: "General Commands Manual", top: 40, left: 250),
                     PDFLine(text: "BASH(1)", top: 40, left: 502)]
        lines += body.enumerated().map { PDFLine(text: $1, top: 76 + Double($0) * 12, left: 108) }
        lines += [PDFLine(text: "GNU Bash 5.2", top: 760, left: 72), PDFLine(text: "2022 September 19", top: 760, left: 267),
                  PDFLine(text: "\(n)", top: 760, left: 535)]
        return lines
    }

    @Test func dropsRowsOfRunningHeadersAndFootersAsGroffSetsThem() {
        let pages = (1...5).map { n in
            Self.manualPage(n, body: ["When bash is started non-interactively, to run a shell script, it looks for the",
                                      "variable BASH_ENV in the environment number \(n) and expands its value there.",
                                      "Bash behaves as if the following command were executed on page \(n) of the manual."])
        }
        let (text, _) = PDFText.join(pages)
        for clutter in ["BASH(1)", "General Commands Manual", "GNU Bash", "September"] { #expect(!text.contains(clutter), "\(text)") }
        #expect(text.hasPrefix("When bash is started non-interactively"), "\(text)")
        #expect(text.contains("environment number 3 and expands"), "\(text)")
    }

    @Test func readsATableOfContentsAsEntriesWithoutLeadersOrPageNumbers() {
        let page = [
            PDFLine(text: "Table of Contents", top: 96, left: 90),
            PDFLine(text: "1 Introduction . . . . . . . . . . . . . . . 1", top: 140, left: 90),
            PDFLine(text: "2.1", top: 192, left: 105), PDFLine(text: "2.2", top: 205, left: 105),
            PDFLine(text: "ASN.1 syntax. . . . . . . . . . . . . . . . 2", top: 192, left: 130),
            PDFLine(text: "Naming . . . . . . . . . . . . . . . . . . . 3", top: 205, left: 130),
            PDFLine(text: "Preface \u{2026}\u{2026}\u{2026} xi", top: 220, left: 90),
        ]
        let (text, _) = PDFText.join([page])
        #expect(text == "Table of Contents\n\n1 Introduction\n\n2.1 ASN.1 syntax\n\n2.2 Naming\n\nPreface", "\(text)")
    }

    @Test func sectionNumbersAndEntries() {
        for line in ["3", "2.1", "A.4", "4.1.2", "1."] { #expect(TableOfContents.isSectionNumber(line), "\(line)") }
        for line in ["Naming", "12 boats", ""] { #expect(!TableOfContents.isSectionNumber(line), "\(line)") }
        #expect(TableOfContents.entry("The end... 12") == nil)
        #expect(TableOfContents.entry("Index . . . . . . 120") == "Index")
    }
}

/// A PDF outline placed in the text: every entry kept, each where its title is on its page.
@Suite struct PDFOutlineTests {
    @Test func keepsEveryEntryOnAPageWhereItsTitleIs() {
        let text = "1. Introduction\n\n1.1. Version\n\nThis is version 0.21.\n\n1.2. What is this spec?\n\nA list.\n\n2. Unified system"
        let second = text.unicodeScalars.count - "2. Unified system".unicodeScalars.count
        let entries = [(title: "1. Introduction", page: 0, level: 1), (title: "1.1.  Version", page: 0, level: 2),
                       (title: "1.2. What is this SPEC?", page: 0, level: 2), (title: "Not on the page", page: 0, level: 2),
                       (title: "2. Unified system", page: 1, level: 1), (title: "Past the end", page: 5, level: 1)]
        let chapters = PDFOutline.chapters(entries, text: text, pageStarts: [0, second])
        #expect(chapters.map(\.title) == ["1. Introduction", "1.1.  Version", "1.2. What is this SPEC?", "Not on the page", "2. Unified system"])
        let starts = chapters.map(\.start)
        let offset = { (title: String) in text.unicodeScalars.count - text.split(separator: title)[1].unicodeScalars.count - title.unicodeScalars.count }
        #expect(starts[0] == 0 && starts[1] == offset("1.1. Version") && starts[2] == offset("1.2. What is this spec?") && starts[4] == second,
                "\(starts)")
        #expect(starts[3] > starts[2] && starts[3] < second, "\(starts)")
        var builder = TextBuilder()
        builder.setChapters(chapters)
        #expect(builder.chapters.count == 5)
    }
}
