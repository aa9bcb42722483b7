/// Which line feeds of a plain text only wrap a paragraph (read as spaces) and which end a line that is meant
/// (kept: UAX #29 rule SB4 ends a sentence there). ICU's sentence break iterator breaks at every line feed, so a
/// hard-wrapped licence, e-mail or `man -P cat` page would be read line by line; the segmenter blanks the soft
/// line feeds (and the quote markers after them) in the copy it hands ICU, so offsets stay those of the text.
///
/// A line feed between two lines of one block (no blank line between them) is soft when all of these hold:
/// - both lines are prose: neither is a list item's first line (the second; but an enumerator in brackets,
///   "(1)", that a full line runs into goes on that line's sentence, as in "two steps: (1) assert …, and
///   (2) offer …"), a table row (a `|` pair, a tab or
///   four spaces inside), a run of symbols (`=====`, `-----`, box drawing), a Markdown `#` heading or an e-mail
///   signature delimiter (`-- `);
/// - both are quoted to the same depth (`>` markers, e-mail style);
/// - the first is no copyright notice ("Copyright …", "(C) …", "© …") followed by a line that starts a new
///   sentence: licences, READMEs and source headers give each notice its own line;
/// - their indentation agrees: the same, the hanging indentation of a list item's text, or the block's
///   leading lines (its first line and those indented as deep after it) deeper than the next: a paragraph whose
///   first line is indented, re-wrapped by `fmt`, keeps that indentation on its first two lines;
/// - the second line goes on in lower case (or a digit or `(` after no full stop) after a first line filling at
///   least 40 % of the text's width, or the first line is full: it plus the second line's first word would pass 85 % of the width
///   (a line shorter than that ends where its writer ended it: verse, addresses, signatures, short headings).
///
/// The width is the 90th percentile of the lengths of the prose lines (at least 40 columns), so that a
/// paragraph reads the same whether it was wrapped at 72 columns (`fmt`'s balanced lines included), at 40, or
/// not at all. It is measured on the text given, which for a long text is the slice being cut.
public enum LineBreaks {
    /// What the rules need of one line (offsets in scalars of the text; lengths in columns, a tab to the next
    /// multiple of 8).
    struct Line {
        var start = 0
        /// The line feed ending it (or the text's end).
        var end = 0
        /// Where its text starts after the quote markers (`>`, `> >`, …) and the space after them.
        var prefixEnd = 0
        var quoteDepth = 0
        /// Columns of white space before its text (after the quote markers).
        var indent = 0
        /// Columns up to its last character that is not white space.
        var length = 0
        var blank = true
        /// For a list item's first line: the column where the item's text starts.
        var item: Int?
        /// Its text starts with `(`: for an item, an enumerator in brackets.
        var bracketed = false
        /// Its text starts with "Copyright", "(C)" or "©".
        var copyright = false
        /// A table row, a run of symbols, a heading or a signature delimiter: never joined to a neighbour.
        var structural = false
        /// Columns of its first word.
        var firstWord = 0
        /// Its text starts in lower case, with a digit or with `(`: a wrapped sentence going on.
        var continues = false
        /// Its text starts in lower case.
        var lowercase = false
        /// It ends with a full stop, `!`, `?`, `:` or `;` (a digit or `(` after it starts something new).
        var endsSentence = false
    }

    /// The ranges of `scalars` to read as white space: each soft line feed, with the quote markers of the line
    /// it joins (see the type's rules). Ascending, not overlapping.
    public static func softRanges(in scalars: [Unicode.Scalar]) -> [Range<Int>] {
        let lines = self.lines(of: scalars)
        guard lines.count > 1 else { return [] }
        let width = self.width(of: lines)
        var ranges: [Range<Int>] = []
        var blockStart = true
        var leadingIndent: Int?  // the indentation of the block's leading lines, while they go on
        var signature = false
        for i in 0..<lines.count - 1 {
            let a = lines[i], b = lines[i + 1]
            // After an e-mail signature's delimiter ("-- "), every line is its writer's.
            signature = signature || scalars[a.prefixEnd..<a.end].filter { !$0.properties.isWhitespace } == ["-", "-"]
            if signature { continue }
            if a.blank { blockStart = true; continue }
            defer { blockStart = false }
            if blockStart { leadingIndent = a.indent } else if a.indent != leadingIndent { leadingIndent = nil }
            guard isSoft(a, b, width: width, leading: leadingIndent != nil) else { continue }
            // A quoted line's markers go with the line feed: the words on both sides then meet as in prose.
            ranges.append(a.end..<(b.quoteDepth > 0 ? b.prefixEnd : a.end + 1))
        }
        return ranges
    }

    /// The quote markers (and the space after them) at the start of every quoted line: white space to trim at
    /// a sentence's ends, not something to read.
    public static func quotePrefixes(in scalars: [Unicode.Scalar]) -> [Range<Int>] {
        lines(of: scalars).compactMap { $0.quoteDepth > 0 ? $0.start..<$0.prefixEnd : nil }
    }

    /// Whether the line feed between `a` and `b` is soft; `leading`: `a` is one of its block's leading lines.
    static func isSoft(_ a: Line, _ b: Line, width: Int, leading: Bool) -> Bool {
        guard !b.blank, !a.structural, !b.structural, a.quoteDepth == b.quoteDepth else { return false }
        let full = (a.length + 1 + b.firstWord) * 100 > width * 85
        guard b.item == nil || (b.bracketed && a.item == nil && full) else { return false }
        guard !a.copyright || b.continues else { return false }
        let aligned = a.indent == b.indent || a.item == b.indent || (leading && a.item == nil && a.indent > b.indent)
        guard aligned else { return false }
        if b.continues && a.length * 10 >= width * 4 && (b.lowercase || !a.endsSentence) { return true }
        return full
    }

    /// The text's width: the 90th percentile of its prose lines' lengths, at least 40 columns, or 60 in a text
    /// of fewer than 8 such lines (a short message's lines are its writer's, not a wrapper's).
    static func width(of lines: [Line]) -> Int {
        let lengths = lines.filter { !$0.blank && !$0.structural }.map(\.length).sorted()
        let floor = lengths.count < 8 ? 60 : 40
        guard !lengths.isEmpty else { return floor }
        return max(floor, lengths[(lengths.count - 1) * 9 / 10])
    }

    /// The lines of `scalars`, split at line feeds.
    static func lines(of scalars: [Unicode.Scalar]) -> [Line] {
        var lines: [Line] = []
        var start = 0
        while start <= scalars.count {
            var end = start
            while end < scalars.count && scalars[end] != "\n" { end += 1 }
            lines.append(line(scalars, start..<end))
            start = end + 1
        }
        return lines
    }

    private static func line(_ s: [Unicode.Scalar], _ range: Range<Int>) -> Line {
        var line = Line(start: range.lowerBound, end: range.upperBound)
        var i = range.lowerBound
        // Quote markers: `>` with optional spaces between and one space after the last.
        var j = i
        while j < range.upperBound && (s[j] == ">" || s[j] == " ") {
            if s[j] == ">" { line.quoteDepth += 1; i = j + 1; if i < range.upperBound && s[i] == " " { i += 1 } }
            j += 1
        }
        line.prefixEnd = i
        var column = 0
        while i < range.upperBound && (s[i] == " " || s[i] == "\t") {
            column = s[i] == "\t" ? (column / 8 + 1) * 8 : column + 1
            i += 1
        }
        guard i < range.upperBound, s[i..<range.upperBound].contains(where: { !$0.properties.isWhitespace }) else { return line }
        line.blank = false
        line.indent = column
        let text = Array(s[i..<range.upperBound])
        var last = text.count
        while last > 0 && text[last - 1].properties.isWhitespace { last -= 1 }
        line.length = column + last
        line.firstWord = text.prefix { !$0.properties.isWhitespace }.count
        let first = text[0]
        line.lowercase = first.properties.isLowercase
        line.continues = line.lowercase || ("0"..."9").contains(first) || first == "("
        line.bracketed = first == "("
        let head = String(String.UnicodeScalarView(text.prefix(10))).lowercased()
        line.copyright = head.hasPrefix("copyright") || head.hasPrefix("(c) ") || first == "©"
        line.endsSentence = last > 0 && ".!?:;".unicodeScalars.contains(text[last - 1])
        line.item = itemColumn(text, indent: column)
        line.structural = isStructural(Array(text[..<last]))
        return line
    }

    /// Where a list item's text starts, when `text` (a line without its indentation) begins with a bullet
    /// (`-`, `*`, `+`, `•`, …) or an enumerator (`1.`, `2)`, `(3)`, `a.`, `iv)`) and a space.
    static func itemColumn(_ text: [Unicode.Scalar], indent: Int) -> Int? {
        let bullets: Set<Unicode.Scalar> = ["-", "*", "+", "•", "◦", "‣", "▪", "▸", "–", "—", "·"]
        var n = 0
        if bullets.contains(text[0]) {
            n = 1
        } else {
            var k = text[0] == "(" ? 1 : 0
            let body = k
            while k < text.count && k - body < 4 && (text[k].properties.isAlphabetic || ("0"..."9").contains(text[k])) { k += 1 }
            let token = text[body..<k]
            let digits = !token.isEmpty && token.allSatisfy { ("0"..."9").contains($0) }
            let letter = token.count == 1 && token[token.startIndex].properties.isAlphabetic
            let roman = !token.isEmpty && token.allSatisfy { "ivxlcIVXLC".unicodeScalars.contains($0) }
            guard digits || letter || roman, k < text.count else { return nil }
            if text[k] == ")" || (body == 0 && text[k] == ".") { n = k + 1 } else { return nil }
            if n < text.count && text[n] == ")" { n += 1 } // "1.)"
        }
        guard n < text.count, text[n] == " " || text[n] == "\t" else { return nil }
        while n < text.count && (text[n] == " " || text[n] == "\t") { n += 1 }
        return indent + n
    }

    /// A table row (two `|`, a tab or four spaces inside), a run of symbols without letters or digits (at least
    /// three), a Markdown ATX heading, or an e-mail signature delimiter.
    static func isStructural(_ text: [Unicode.Scalar]) -> Bool {
        if text == ["-", "-"] { return true } // "-- " with its space trimmed
        if text.first == "#" {
            let hashes = text.prefix { $0 == "#" }.count
            if hashes <= 6 && (hashes == text.count || text[hashes] == " ") { return true }
        }
        if text.filter({ $0 == "|" }).count >= 2 || text.contains("\t") { return true }
        var spaces = 0
        for c in text {
            if c == " " { spaces += 1; if spaces >= 4 { return true } } else { spaces = 0 }
        }
        let visible = text.filter { !$0.properties.isWhitespace }
        return visible.count >= 3 && visible.allSatisfy { !$0.properties.isAlphabetic && $0.properties.numericType == nil }
    }
}
