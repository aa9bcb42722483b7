@preconcurrency import Glibc
import SpeechCore

/// A PDF opened for its text: what `PDFImporter` reads of it. `lector-document-pdf` provides it over
/// poppler-glib (PDFKit), so that only the PDF worker maps poppler and the libraries it brings (cairo, NSS,
/// lcms2, OpenJPEG, fontconfig, …); `lector-document` reads every other format without them.
public protocol PDFPages: AnyObject {
    /// How many pages it has.
    var pageCount: Int { get }
    /// Its Info dictionary's Title, nil when empty.
    var title: String? { get }
    /// Its Info dictionary's Author, nil when empty.
    var author: String? { get }
    /// The lines of page `index` (0-based) in reading order, each with where it sits on the page.
    func lines(ofPage index: Int) -> [PDFLine]
    /// The outline, depth first: each entry's title, the 0-based page it leads to, its depth (1 the top).
    func outlineEntries() -> [(title: String, page: Int, level: Int)]
}

/// Why a PDF cannot be opened.
public enum PDFOpenFailure: Error, Sendable {
    /// It is encrypted and no password, or a wrong one, was given.
    case encrypted
    /// It is not a PDF, or too damaged to open; the line says why.
    case damaged(String)
}

/// Opens the PDF in the bytes given, with the password given for an encrypted one.
public typealias PDFOpener = ([UInt8], String?) -> Result<any PDFPages, PDFOpenFailure>

/// PDF: each page's text in reading order, lines joined into paragraphs, words
/// hyphenated across lines joined, ligatures unfolded, running headers, footers and page numbers dropped (by
/// their text and by their place on the page), a table of contents read as its entries without leader dots
/// and page numbers; chapters from the outline (each where its title is on the page it leads to, else at the
/// page's start); title and author from the Info dictionary.
enum PDFImporter {
    /// The environment variable that carries an encrypted PDF's password to the worker (never its arguments,
    /// which every process can list).
    static let passwordVariable = DocumentWorkerWire.passwordVariable

    /// The text and structure of the PDF in `bytes`, opened with `open`.
    /// `onStart` gets the text of the first `PDFText.firstWindow` pages, when more follow.
    static func read(_ bytes: [UInt8], open: PDFOpener, onStart: ((DocumentStart) -> Void)? = nil) throws(ImportError) -> ImportedDocument {
        let password = getenv(passwordVariable).map { String(cString: $0) }
        let pdf: any PDFPages
        switch open(bytes, password) {
        case .success(let opened): pdf = opened
        case .failure(.encrypted):
            throw .needsPassword(password == nil ? "the PDF is encrypted: give its password with --password"
                                                 : "the PDF's password is wrong")
        case .failure(.damaged(let why)): throw .malformed("not a readable PDF: \(why)")
        }
        var joiner = PDFText.Joiner()
        let count = pdf.pageCount
        for window in PDFText.windows(pageCount: count) {
            joiner.add(window.map { pdf.lines(ofPage: $0) })
            if window.lowerBound == 0, count > window.upperBound, let onStart, joiner.builder.text.contains(where: { !$0.isWhitespace }) {
                onStart(DocumentStart(text: joiner.builder.text, title: pdf.title))
            }
        }
        let (text, pageStarts) = joiner.finish()
        guard text.contains(where: { !$0.isWhitespace }) else {
            throw .nothingToRead("the PDF has no text layer (a scanned document?): there is nothing Lector can read in it")
        }
        var structure = TextStructure(title: pdf.title, authors: pdf.author.map { [$0] } ?? [])
        var builder = TextBuilder()
        builder.setChapters(PDFOutline.chapters(pdf.outlineEntries(), text: text, pageStarts: pageStarts))
        structure.chapters = builder.chapters
        return ImportedDocument(text: text, structure: structure)
    }
}

/// The pure part of reading a PDF: from the lines of each page to the text a listener hears.
enum PDFText {
    /// Ligatures that PDFs keep as one glyph (Unicode's Alphabetic Presentation Forms, U+FB00–FB06), unfolded.
    static let ligatures: [Unicode.Scalar: String] = [
        "\u{FB00}": "ff", "\u{FB01}": "fi", "\u{FB02}": "fl", "\u{FB03}": "ffi", "\u{FB04}": "ffl", "\u{FB05}": "st", "\u{FB06}": "st",
    ]

    /// Pages are taken in windows of this many: running headers and footers are told within each window,
    /// so that a long document's start (its first window) reads as it does in the whole text.
    static let window = 16
    /// The first window is this short (the fewest pages in which running lines are told), so that a long
    /// document's start is extracted and sent ahead after three pages, not sixteen.
    static let firstWindow = 3

    /// The page ranges of a document of `pageCount` pages, in order: `firstWindow` pages, then `window` at a
    /// time.
    static func windows(pageCount: Int) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var first = 0
        while first < pageCount {
            let end = min(pageCount, first + (first == 0 ? firstWindow : window))
            ranges.append(first..<end)
            first = end
        }
        return ranges
    }

    /// The text of `pages` (each page's lines separated by line feeds) and where each page starts in it (scalar
    /// offsets), joined a window of pages at a time (see `Joiner`, `windows`).
    static func join(_ pages: [String]) -> (String, [Int]) {
        join(pages.map(PDFLine.stacked))
    }

    /// The text of `pages` (each page's lines, placed) and where each page starts in it.
    static func join(_ pages: [[PDFLine]]) -> (String, [Int]) {
        var joiner = Joiner()
        for range in windows(pageCount: pages.count) { joiner.add(Array(pages[range])) }
        return joiner.finish()
    }

    /// What runs on most pages of a window: the shapes (`shape`) of lines and rows at the pages' edges, and
    /// the places in the margin (`PDFLayout.place`) where a row sits.
    struct Running {
        var shapes: Set<String> = []
        var places: Set<String> = []
        var isEmpty: Bool { shapes.isEmpty && places.isEmpty }
    }

    /// Joins pages into text a window at a time. Within a window, lines and rows found at the top or bottom
    /// of at least half of its pages (digits ignored), rows in the margin at the same place on at least half of
    /// them (running headers and footers), and lines that are only a page number, are dropped. What is joined
    /// so far (`builder.text`) is a prefix of the final text.
    struct Joiner {
        private(set) var builder = TextBuilder()
        private var starts: [Int] = []
        /// A word hyphenated at the end of the last line, held back until the next line says how it goes on.
        private var carry = ""
        private var lastRunning = Running()

        /// Adds the next window of pages.
        mutating func add(_ pages: [[PDFLine]]) {
            let lines = pages.map { page in page.map { PDFLine(text: unfold($0.text), top: $0.top, left: $0.left) } }
            let layouts = lines.map(PDFLayout.init)
            // A short last window keeps the running lines of the window before it.
            let running = lines.count < 3 && !lastRunning.isEmpty ? lastRunning : runningLines(lines, layouts)
            lastRunning = running
            for (page, layout) in zip(lines, layouts) { add(page: page, layout: layout, running: running) }
        }

        /// The text and where each page starts in it.
        mutating func finish() -> (String, [Int]) {
            if !carry.isEmpty { builder.append(carry + "-"); carry = "" }
            return (builder.text, starts)
        }

        private mutating func add(page: [PDFLine], layout: PDFLayout, running: Running) {
            starts.append(builder.nextStart)
            let dropped = PDFText.dropped(page, layout: layout, running: running)
            let (entries, numbers) = PDFText.contents(page, layout: layout, dropped: dropped)
            let kept = page.indices.filter { !dropped.contains($0) && !numbers.contains($0) }
            let lengths = kept.map { page[$0].text.trimmingSpaces.count }.filter { $0 > 0 }.sorted()
            let typical = lengths.isEmpty ? 0 : lengths[lengths.count * 3 / 4]
            // Entries are read from the top of the page down, whatever order poppler gives their columns in.
            var entryOrder = kept.filter { entries[$0] != nil }.sorted { (page[$0].top, page[$0].left) < (page[$1].top, page[$1].left) }[...]
            for index in kept {
                if entries[index] != nil, let next = entryOrder.popFirst(), let entry = entries[next] {
                    flushCarry()
                    builder.breakParagraph()
                    builder.append(entry)
                    builder.breakParagraph()
                } else {
                    add(line: page[index].text.trimmingSpaces, typical: typical)
                }
            }
        }

        private mutating func flushCarry() {
            if !carry.isEmpty { builder.append(carry + "-"); carry = "" }
        }

        private mutating func add(line trimmed: String, typical: Int) {
            if trimmed.isEmpty { builder.breakParagraph(); return }
            // A word hyphenated at the line's end: "light-" "house" is one word, "Jean-" "Paul" keeps its hyphen.
            let goesOnInLowerCase = trimmed.first?.isLowercase == true
            let words = carry.isEmpty ? trimmed : carry + (goesOnInLowerCase ? "" : "-") + trimmed
            carry = ""
            if let last = words.unicodeScalars.last, last == "-" || last == "\u{2010}",
               words.unicodeScalars.dropLast().last?.properties.isAlphabetic == true {
                let cut = words.lastIndex(where: { $0 == " " }).map { words.index(after: $0) } ?? words.startIndex
                builder.append(String(words[..<cut]))
                carry = String(words[cut...].dropLast())
                return
            }
            if let last = trimmed.unicodeScalars.last, !last.properties.generalCategory.isPunctuation,
               trimmed.count < typical / 2 {
                // A short line without punctuation (a heading, a caption) is a sentence of its own.
                builder.breakParagraph()
                builder.append(words)
                builder.breakParagraph()
                return
            }
            builder.append(words)
            builder.append(" ")
            // A short line that ends a sentence ends its paragraph.
            if let last = trimmed.last, ".!?:".contains(last), trimmed.count < typical * 85 / 100 { builder.breakParagraph() }
        }
    }

    /// What runs on at least half of `pages` (three or more): the shapes of lines and rows at their edges
    /// (`PDFLayout.edges`), and the places of their margin rows (`PDFLayout.marginRows`).
    static func runningLines(_ pages: [[PDFLine]], _ layouts: [PDFLayout]) -> Running {
        guard pages.count >= 3 else { return Running() }
        var shapes: [String: Int] = [:]
        var places: [String: Int] = [:]
        for (page, layout) in zip(pages, layouts) {
            var seen: Set<String> = []
            for row in layout.edges {
                seen.insert(shape(layout.text(ofRow: row, in: page)))
                for index in layout.rows[row] { seen.insert(shape(page[index].text.trimmingSpaces)) }
            }
            for e in seen { shapes[e, default: 0] += 1 }
            for row in layout.marginRows { places[PDFLayout.place(top: layout.tops[row], atTop: row == 0), default: 0] += 1 }
        }
        return Running(shapes: Set(shapes.filter { $0.value * 2 >= pages.count }.keys),
                       places: Set(places.filter { $0.value * 2 >= pages.count }.keys))
    }

    /// The lines of `page` not read: page numbers and running lines at its edges, and whole rows that run
    /// (by text or by their place in the margin).
    static func dropped(_ page: [PDFLine], layout: PDFLayout, running: Running) -> Set<Int> {
        var dropped: Set<Int> = []
        for row in layout.edges {
            let text = layout.text(ofRow: row, in: page)
            let inPlace = (row == 0 || row == layout.rows.count - 1)
                && running.places.contains(PDFLayout.place(top: layout.tops[row], atTop: row == 0))
            if inPlace || running.shapes.contains(shape(text)) || isPageNumber(text) {
                dropped.formUnion(layout.rows[row])
                continue
            }
            for index in layout.rows[row] {
                let line = page[index].text.trimmingSpaces
                if isPageNumber(line) || running.shapes.contains(shape(line)) { dropped.insert(index) }
            }
        }
        return dropped
    }

    /// The table of contents entries of `page` (by line index: the title, after the section numbers set
    /// apart on its row), and the lines of those section numbers, read with their titles.
    static func contents(_ page: [PDFLine], layout: PDFLayout, dropped: Set<Int>) -> ([Int: String], Set<Int>) {
        var entries: [Int: String] = [:]
        var numbers: Set<Int> = []
        for row in layout.rows {
            for index in row where !dropped.contains(index) {
                guard let title = TableOfContents.entry(page[index].text) else { continue }
                let before = row.filter { !dropped.contains($0) && !numbers.contains($0) && page[$0].left < page[index].left
                    && TableOfContents.isSectionNumber(page[$0].text) }
                numbers.formUnion(before)
                entries[index] = (before.map { page[$0].text.trimmingSpaces } + [title]).joined(separator: " ")
            }
        }
        return (entries, numbers)
    }

    /// A line with its digits replaced by "#" (so "Chapter 1 — page 12" matches "Chapter 1 — page 13").
    static func shape(_ line: String) -> String {
        String(line.map { $0.isNumber ? "#" : $0 })
    }

    /// Whether `line` is only a page number: "12", "- 12 -", "Page 12", "12 of 40", "xiv".
    static func isPageNumber(_ line: String) -> Bool {
        let lower = line.lowercased()
        let words = lower.split(whereSeparator: { $0 == " " || $0 == "-" || $0 == "–" || $0 == "—" || $0 == "/" })
        guard !words.isEmpty, words.count <= 4 else { return false }
        let roman = Set("ivxlc")
        return words.allSatisfy { w in
            w.allSatisfy(\.isNumber) || w == "page" || w == "of" || w == "p." || (w.count <= 6 && w.allSatisfy { roman.contains($0) })
        } && words.contains { $0.allSatisfy(\.isNumber) || $0.allSatisfy { roman.contains($0) } }
    }

    /// `line` with ligatures unfolded.
    static func unfold(_ line: String) -> String {
        guard line.unicodeScalars.contains(where: { ligatures[$0] != nil }) else { return line }
        var out = ""
        for s in line.unicodeScalars { if let l = ligatures[s] { out += l } else { out.unicodeScalars.append(s) } }
        return out
    }
}
