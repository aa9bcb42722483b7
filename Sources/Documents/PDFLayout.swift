import SpeechCore

/// One line of a PDF page and where it sits, in points from the page's top left.
public struct PDFLine: Sendable, Equatable {
    /// The line's text, without its line feed.
    public var text: String
    /// The top of its first glyph.
    public var top: Double
    /// The left edge of its first glyph.
    public var left: Double

    /// Makes a line of `text` whose first glyph's top left is at (`left`, `top`).
    public init(text: String, top: Double, left: Double) {
        self.text = text
        self.top = top
        self.left = left
    }

    /// The lines of `page` (lines separated by line feeds) one below the other, 12 points apart: a page
    /// known by its text alone.
    static func stacked(_ page: String) -> [PDFLine] {
        page.split(separator: "\n", omittingEmptySubsequences: false).enumerated().map { index, line in
            PDFLine(text: String(line), top: Double(index * 12), left: 0)
        }
    }
}

/// Where a page's lines sit: its rows (lines whose tops are within `PDFLayout.sameRow` points, as the
/// columns of a running header or a table of contents' number and title are), from the top of the page.
struct PDFLayout {
    /// Lines whose tops differ by at most this many points are on one row.
    static let sameRow = 2.0
    /// The first and last this many rows of a page are its edges, where running headers and footers sit.
    static let edgeRows = 2

    /// The indices (into the page's lines) of each row's lines, rows from the top, lines from the left.
    let rows: [[Int]]
    /// The tops of the rows.
    let tops: [Double]

    /// The layout of `lines` (empty lines have no row).
    init(_ lines: [PDFLine]) {
        let order = lines.indices.filter { !lines[$0].text.trimmingSpaces.isEmpty }.sorted { (lines[$0].top, $0) < (lines[$1].top, $1) }
        var rows: [[Int]] = []
        var tops: [Double] = []
        for index in order {
            if let top = tops.last, lines[index].top - top <= Self.sameRow { rows[rows.count - 1].append(index) } else {
                rows.append([index])
                tops.append(lines[index].top)
            }
        }
        self.rows = rows.map { $0.sorted { (lines[$0].left, $0) < (lines[$1].left, $1) } }
        self.tops = tops
    }

    /// The indices of the rows at the page's top and bottom edges: on each side, the row in the margin
    /// (`marginRows`) when there is one (the rows below a header set apart are text), else the first or
    /// last `edgeRows` rows.
    var edges: [Int] {
        let count = rows.count
        let margins = marginRows
        let top = margins.contains(0) ? [0] : Array(0..<min(Self.edgeRows, count))
        let bottom = margins.contains(count - 1) ? [count - 1] : Array(max(0, count - Self.edgeRows)..<count)
        return Array(Set(top + bottom)).sorted()
    }

    /// The rows set apart in the page's margin: the first or last row, when the gap between it and the row
    /// next to it is more than twice the page's usual distance between rows (the median of the gaps between
    /// the other rows). Running headers and footers sit there; text does not.
    var marginRows: [Int] {
        guard rows.count >= 4 else { return [] }
        let gaps = zip(tops.dropFirst(), tops).map { $0 - $1 }
        let inner = gaps.dropFirst().dropLast().sorted()
        let usual = inner[inner.count / 2]
        var margins: [Int] = []
        if gaps[0] > 2 * usual { margins.append(0) }
        if gaps[gaps.count - 1] > 2 * usual { margins.append(rows.count - 1) }
        return margins
    }

    /// The text of row `row` of `lines`, its lines from the left, separated by spaces.
    func text(ofRow row: Int, in lines: [PDFLine]) -> String {
        rows[row].map { lines[$0].text.trimmingSpaces }.joined(separator: " ")
    }

    /// A place in the margin, to be matched across pages: the row's top, to the nearest 4 points, and whether
    /// it is the page's top or bottom row.
    static func place(top: Double, atTop: Bool) -> String {
        "\(atTop ? "top" : "bottom") \(Int((top / 4).rounded()))"
    }
}

/// A table of contents' entries: "2.1 ASN.1 syntax . . . . 2" read as "2.1 ASN.1 syntax".
enum TableOfContents {
    /// The title of `line` when it is a table of contents entry (a title, leader dots, a page number), with
    /// the dots and the number dropped; nil for any other line.
    static func entry(_ line: String) -> String? {
        var scalars = Array(line.trimmingSpaces.unicodeScalars)
        // The page number: digits or a Roman numeral.
        var numeral = 0
        while let last = scalars.last, last.properties.numericType != nil || "ivxlcIVXLC".unicodeScalars.contains(last) {
            scalars.removeLast()
            numeral += 1
        }
        guard numeral > 0 else { return nil }
        var dots = 0
        while let last = scalars.last, last == "." || last == " " || last == "\u{2026}" || last == "\u{00B7}" {
            if last != " " { dots += last == "\u{2026}" ? 3 : 1 }
            scalars.removeLast()
        }
        guard dots >= 4 else { return nil }
        let title = String(String.UnicodeScalarView(scalars)).trimmingSpaces
        return title.isEmpty ? nil : title
    }

    /// Whether `line` is only a section number ("3", "2.1", "A.4"), as a table of contents sets apart from
    /// its title.
    static func isSectionNumber(_ line: String) -> Bool {
        let parts = line.trimmingSpaces.split(separator: ".", omittingEmptySubsequences: false)
        guard !parts.isEmpty, parts.count <= 5, line.count <= 12 else { return false }
        return parts.enumerated().allSatisfy { index, part in
            part.allSatisfy(\.isNumber) && !part.isEmpty || (index == 0 && part.count == 1 && part.first!.isUppercase)
                || (index == parts.count - 1 && part.isEmpty && index > 0)
        }
    }
}
