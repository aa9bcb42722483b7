import SpeechCore

/// Builds the text of a document as a listener should hear it: white space collapsed, paragraphs separated
/// by a blank line, headings, list items and table rows each on lines of their own (a line break ends a
/// sentence; the text gains no punctuation the document does not have: see `Sentence.heard`), and
/// chapters recorded at their scalar offsets. Control characters become spaces, so `TextCleaner.clean` leaves the text as it is and the
/// offsets stay true.
struct TextBuilder {
    /// The text so far.
    private(set) var text = ""
    /// Its length in Unicode scalars.
    private(set) var scalars = 0
    /// Chapters recorded so far, starts strictly increasing.
    private(set) var chapters: [Chapter] = []

    private enum Gap: Int, Comparable {
        case none, space, line, paragraph
        static func < (a: Gap, b: Gap) -> Bool { a.rawValue < b.rawValue }
    }
    /// The separator owed before the next text: the widest asked for since the last text.
    private var gap = Gap.none

    /// Appends inline text: runs of white space and control characters become one space.
    mutating func append(_ piece: some StringProtocol) {
        var run = ""
        for scalar in piece.unicodeScalars {
            if Self.separates(scalar) {
                if !run.isEmpty { emit(run); run = "" }
                gap = max(gap, .space)
            } else if scalar.value != 0xAD {  // a soft hyphen is where a word may break, not a character
                run.unicodeScalars.append(scalar)
            }
        }
        if !run.isEmpty { emit(run) }
    }

    /// Whether `scalar` is white space (Unicode's White_Space property, PropList.txt: U+0009–000D, 0020, 0085,
    /// 00A0, 1680, 2000–200A, 2028, 2029, 202F, 205F, 3000) or a C0 or C1 control character, which become
    /// spaces. Spelled out, because `Unicode.Scalar.Properties.isWhitespace` looks the property up in the
    /// runtime's tables on every call (half the time of extracting a long EPUB went there).
    static func separates(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        if v < 0x80 { return v <= 0x20 || v == 0x7F }
        if v <= 0xA0 { return true }
        if v < 0x1680 { return false }
        return v == 0x1680 || (0x2000...0x200A).contains(v) || v == 0x2028 || v == 0x2029 || v == 0x202F
            || v == 0x205F || v == 0x3000
    }

    private mutating func emit(_ run: String) {
        if !text.isEmpty {
            switch gap {
            case .none: break
            case .space: text += " "; scalars += 1
            case .line: text += "\n"; scalars += 1
            case .paragraph: text += "\n\n"; scalars += 2
            }
        }
        gap = .none
        text += run
        scalars += run.unicodeScalars.count
    }

    /// Appends `mark` (a comma between table cells) right after the text so far, dropping a space owed.
    mutating func attach(_ mark: String) {
        guard !text.isEmpty, gap <= .space else { return }
        if let last = text.unicodeScalars.last, last.properties.generalCategory.isPunctuation { return }
        gap = .none
        emit(mark)
    }

    /// A line break before the next text.
    mutating func breakLine() { gap = max(gap, .line) }
    /// A paragraph break (a blank line) before the next text.
    mutating func breakParagraph() { gap = max(gap, .paragraph) }

    /// Where the next text will start, in scalars (after the separator owed).
    var nextStart: Int {
        guard !text.isEmpty else { return 0 }
        switch gap {
        case .none: return scalars
        case .space, .line: return scalars + 1
        case .paragraph: return scalars + 2
        }
    }

    /// Records a chapter titled `title` starting at `start`, unless it starts where the previous one does
    /// (then the first title is kept) or before it.
    mutating func addChapter(_ title: String, start: Int, level: Int) {
        let title = title.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
        guard !title.isEmpty, chapters.last.map({ $0.start < start }) ?? true else { return }
        chapters.append(Chapter(title: title, start: start, level: level))
    }

    /// Replaces the chapters (from a document's navigation): sorted by start, later ones at a start already
    /// taken dropped.
    mutating func setChapters(_ list: [Chapter]) {
        chapters = []
        for c in list.enumerated().sorted(by: { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }).map(\.element) {
            addChapter(c.title, start: c.start, level: c.level)
        }
    }

    /// The end of the text so far, to take what is appended after it with `text(from:)`.
    var mark: String.Index { text.endIndex }

    /// The text appended since `mark` was taken, without surrounding white space.
    func text(from mark: String.Index) -> String {
        String(text[mark...]).split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }
}

extension Unicode.GeneralCategory {
    var isPunctuation: Bool {
        switch self {
        case .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation, .initialPunctuation,
             .finalPunctuation, .otherPunctuation: true
        default: false
        }
    }
}
