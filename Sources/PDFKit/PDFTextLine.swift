/// One line of a PDF page's text and where it sits, in points from the page's top left (PDF user space
/// turned upright, as poppler-glib's text layout gives it).
public struct PDFTextLine: Sendable, Equatable {
    /// The line's text, without its line feed.
    public var text: String
    /// The top of its first glyph.
    public var top: Double
    /// The left edge of its first glyph.
    public var left: Double
    /// The bottom of its first glyph.
    public var bottom: Double

    /// Makes a line of `text` whose first glyph spans `top`…`bottom`, starting at `left`.
    public init(text: String, top: Double, left: Double, bottom: Double) {
        self.text = text
        self.top = top
        self.left = left
        self.bottom = bottom
    }
}

/// A glyph's rectangle, in points from the page's top left.
struct Box {
    var left, top, right, bottom: Double
}

/// From a page's text and its glyphs' rectangles (one per Unicode scalar, line feeds included) to lines.
enum PDFLineBuilder {
    /// A gap wider than this share of the glyph's height between two glyphs of one line, with no space
    /// between them, is a space the PDF sets by position alone.
    static let spaceGap = 0.3

    /// The lines of `text`, placed by `boxes`; when the boxes do not match the text one for one, the lines
    /// are placed one below the other (12 points apart) in their order.
    static func lines(text: String, boxes: [Box]) -> [PDFTextLine] {
        let scalars = Array(text.unicodeScalars)
        guard scalars.count == boxes.count else {
            return text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().map { index, line in
                PDFTextLine(text: String(line), top: Double(index * 12), left: 0, bottom: Double(index * 12 + 10))
            }
        }
        var lines: [PDFTextLine] = []
        var current = String.UnicodeScalarView()
        var first: Box?
        var previous: (Unicode.Scalar, Box)?
        for (scalar, box) in zip(scalars, boxes) {
            if scalar == "\n" {
                lines.append(line(current, first, after: lines.last))
                current = String.UnicodeScalarView()
                first = nil
                previous = nil
                continue
            }
            if let (last, lastBox) = previous, last != " ", scalar != " ",
               box.left - lastBox.right > spaceGap * max(box.bottom - box.top, 1) {
                current.append(" ")
            }
            if first == nil { first = box }
            current.append(scalar)
            previous = (scalar, box)
        }
        if !current.isEmpty || lines.isEmpty { lines.append(line(current, first, after: lines.last)) }
        return lines
    }

    /// A line of `scalars` placed at its first glyph `box`; an empty line sits where the line before it does.
    private static func line(_ scalars: String.UnicodeScalarView, _ box: Box?, after previous: PDFTextLine?) -> PDFTextLine {
        guard let box else {
            return PDFTextLine(text: String(scalars), top: previous?.top ?? 0, left: previous?.left ?? 0, bottom: previous?.bottom ?? 0)
        }
        return PDFTextLine(text: String(scalars), top: box.top, left: box.left, bottom: box.bottom)
    }
}
