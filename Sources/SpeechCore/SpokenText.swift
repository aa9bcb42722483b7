/// What the engine is given for a sentence whose spoken form differs from its written text, and where each part
/// of it comes from: the written text stays what the window shows and highlights (`Utterance.text`), the spoken
/// text is what is synthesized, and `changes` maps one onto the other, so that the engine's word positions
/// (offsets in the spoken text) come back as offsets in the written text.
///
/// Every difference is a change: a written range (scalars from the sentence's start) read as a spoken range
/// (scalars of `text`); outside the changes both texts are the same, scalar for scalar. A URL read as its host,
/// a citation marker dropped, a quote marker read as a space, and any later rewriting of words (a pronunciation
/// lexicon's respelling) are all changes of this one kind.
public struct SpokenText: Equatable, Sendable {
    /// One written range read as a spoken range (both in scalars; written from the sentence's start).
    public struct Change: Equatable, Sendable {
        /// The written scalars replaced, from the sentence's start.
        public var written: Range<Int>
        /// What is said instead: scalars of `SpokenText.text`.
        public var spoken: Range<Int>

        /// Makes a change.
        public init(written: Range<Int>, spoken: Range<Int>) {
            self.written = written
            self.spoken = spoken
        }
    }

    /// What the engine reads.
    public var text: String
    /// The changes, ascending and not overlapping (in both texts).
    public var changes: [Change]

    /// Makes a spoken text from its text and its changes (ascending, not overlapping).
    public init(text: String, changes: [Change]) {
        self.text = text
        self.changes = changes
    }

    /// The written offset (from the sentence's start) of spoken offset `offset`: inside a change, its written
    /// start (`end`: false) or end (`end`: true).
    public func writtenOffset(_ offset: Int, end: Bool = false) -> Int {
        var shift = 0
        for c in changes {
            if end {
                if offset <= c.spoken.lowerBound { break }
                if offset <= c.spoken.upperBound { return c.written.upperBound }
            } else {
                if offset < c.spoken.lowerBound { break }
                if offset < c.spoken.upperBound { return c.written.lowerBound }
            }
            shift = c.written.upperBound - c.spoken.upperBound
        }
        return offset + shift
    }

    /// The written range (from the sentence's start) of the spoken range `range`, a word the engine reports:
    /// a word inside a change is the whole written range it replaces.
    public func writtenRange(_ range: Range<Int>) -> Range<Int> {
        let lower = writtenOffset(range.lowerBound)
        return lower..<max(lower, writtenOffset(range.upperBound, end: true))
    }

    /// The spoken offset of written offset `offset` (from the sentence's start): inside a change, the change's
    /// spoken start.
    public func spokenOffset(_ offset: Int) -> Int {
        var shift = 0
        for c in changes {
            if offset < c.written.lowerBound { break }
            if offset < c.written.upperBound { return c.spoken.lowerBound }
            shift = c.spoken.upperBound - c.written.upperBound
        }
        return offset + shift
    }

    /// The spoken text from written offset `offset` on (a sentence read again from a word), its changes counted
    /// from there.
    public func suffix(fromWritten offset: Int) -> SpokenText {
        let spoken = spokenOffset(offset)
        let rest = String(String.UnicodeScalarView(text.unicodeScalars.dropFirst(spoken)))
        let kept = changes.filter { $0.spoken.lowerBound >= spoken && $0.written.lowerBound >= offset }.map {
            Change(written: $0.written.lowerBound - offset..<$0.written.upperBound - offset,
                   spoken: $0.spoken.lowerBound - spoken..<$0.spoken.upperBound - spoken)
        }
        return SpokenText(text: rest, changes: kept)
    }
}

extension SpokenText {
    /// Builds a spoken text from a written one and replacements of its ranges.
    public struct Builder {
        private let written: [Unicode.Scalar]
        private var replacements: [(range: Range<Int>, with: String)] = []

        /// A builder over `written`'s scalars.
        public init(written: some StringProtocol) {
            self.written = Array(written.unicodeScalars)
        }

        /// Reads `range` (scalars of the written text) as `text`. A range overlapping one replaced before is
        /// ignored.
        public mutating func replace(_ range: Range<Int>, with text: String) {
            guard !replacements.contains(where: { $0.range.overlaps(range) || ($0.range.isEmpty && range.contains($0.range.lowerBound)) }) else { return }
            replacements.append((range, text))
        }

        /// Whether any part is replaced so far.
        public var isEmpty: Bool { replacements.isEmpty }

        /// The spoken text, or nil when nothing was replaced.
        public func build() -> SpokenText? {
            guard !replacements.isEmpty else { return nil }
            var out = String.UnicodeScalarView()
            var changes: [Change] = []
            var at = 0
            for r in replacements.sorted(by: { $0.range.lowerBound < $1.range.lowerBound }) {
                out.append(contentsOf: written[at..<r.range.lowerBound])
                let start = out.count
                out.append(contentsOf: r.with.unicodeScalars)
                changes.append(Change(written: r.range, spoken: start..<out.count))
                at = r.range.upperBound
            }
            out.append(contentsOf: written[at...])
            return SpokenText(text: String(out), changes: changes)
        }
    }
}
