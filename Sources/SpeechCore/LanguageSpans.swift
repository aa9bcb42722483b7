/// A stretch of a text that its source marks as written in one language: an HTML or XHTML element's `lang` /
/// `xml:lang`, an EPUB's `dc:language`, a Word run's `w:lang`, an OpenDocument style's `fo:language`.
public struct LanguageSpan: Equatable, Sendable {
    /// Where it lies in `Utterance.text`, in Unicode scalars, 0-based; never empty.
    public var range: Range<Int>
    /// Its BCP 47 tag as the source writes it ("de", "fr-CA"); matched to a voice when the text is prepared.
    public var language: String

    /// A span of `range` (scalars) in `language` (BCP 47).
    public init(range: Range<Int>, language: String) {
        self.range = range
        self.language = language
    }
}

/// Builds the language spans of a text from its nested marked elements as they are walked in document order:
/// an inner element's language overrides the outer one's for its extent, an empty tag (HTML `lang=""`) says the
/// language is unknown there, and an element that says nothing inherits. The result is flat: sorted, not
/// overlapping, adjacent spans of one language joined; text under no language is in no span.
///
/// Offsets are where the text stands when an element is entered or left, before any separator owed to what
/// follows (`TextBuilder.scalars`): a span then begins with the separator that precedes its text, so the
/// spans of two paragraphs in one language touch and are joined, and an element that adds no text adds no
/// span (no span holds only white space).
public struct LanguageSpanBuilder: Sendable {
    /// The language in force inside each open element (nil: unknown), innermost last.
    private var stack: [String?] = []
    /// Where the stretch in the current language began.
    private var start = 0
    /// The spans closed so far.
    private var closed: [LanguageSpan] = []

    /// A builder with no element open.
    public init() {}

    /// The language in force: the innermost open element's that says one; nil when none does or it is unknown.
    public var current: String? { stack.last ?? nil }

    /// Opens an element whose text starts at scalar `offset`. `language`: nil when the element says nothing (it
    /// inherits), "" when it says the language is unknown, else its tag (white space around it is ignored).
    public mutating func enter(_ language: String?, at offset: Int) {
        let next: String?
        if let given = language {
            let tag = given.trimmingSpaces
            next = tag.isEmpty ? nil : tag
        } else {
            next = current
        }
        if next != current { close(at: offset) }
        stack.append(next)
    }

    /// Closes the innermost open element, whose text ends at scalar `offset`.
    public mutating func leave(at offset: Int) {
        guard let inner = stack.popLast() else { return }
        if inner != current { close(at: offset, language: inner) }
    }

    /// The spans of a text of `end` scalars, elements still open closed there.
    public func spans(upTo end: Int) -> [LanguageSpan] {
        var copy = self
        copy.close(at: end)
        return copy.closed.compactMap { span -> LanguageSpan? in
            let range = span.range.clamped(to: 0..<max(end, 0))
            return range.isEmpty ? nil : LanguageSpan(range: range, language: span.language)
        }
    }

    /// Ends the stretch in `language` (by default the current one) at `offset`, and starts the next there.
    private mutating func close(at offset: Int, language: String?? = nil) {
        defer { start = max(start, offset) }
        guard let tag = language ?? current, offset > start else { return }
        if let last = closed.last, last.language == tag, last.range.upperBound == start {
            closed[closed.count - 1].range = last.range.lowerBound..<offset
        } else {
            closed.append(LanguageSpan(range: start..<offset, language: tag))
        }
    }
}

extension LanguageSpan {
    /// Most punctuation moved into a span at each of its edges.
    static let punctuationReach = 4

    /// `spans` (sorted, not overlapping) with the punctuation that clings to each span moved into it: up to
    /// `punctuationReach` opening marks between white space and its start (`«`, `(`, `"`), and closing marks
    /// between its end and white space or the end of the text (`».`, `),`), unless another span holds them.
    /// So `<span lang="fr">bonjour</span>.` is read as "bonjour." in French, not "bonjour" and a lone ".".
    public static func absorbingPunctuation(_ spans: [LanguageSpan], in text: String) -> [LanguageSpan] {
        let scalars = text.unicodeScalars
        var index = scalars.startIndex, offset = 0
        var result: [LanguageSpan] = []
        for var span in spans {
            guard span.range.lowerBound >= offset, let at = scalars.index(index, offsetBy: span.range.lowerBound - offset,
                                                                              limitedBy: scalars.endIndex) else { break }
            index = at
            offset = span.range.lowerBound
            var start = offset, before = index
            while offset - start < punctuationReach, before > scalars.startIndex,
                  isPunctuation(scalars[scalars.index(before: before)]) {
                before = scalars.index(before: before)
                start -= 1
            }
            let openedBySpace = before == scalars.startIndex || scalars[scalars.index(before: before)].properties.isWhitespace
            if start < offset, openedBySpace, start >= (result.last?.range.upperBound ?? 0) {
                span.range = start..<span.range.upperBound
            }
            guard let end = scalars.index(index, offsetBy: span.range.upperBound - offset, limitedBy: scalars.endIndex) else { break }
            index = end
            offset = span.range.upperBound
            var after = end, stop = offset
            while stop - offset < punctuationReach, after < scalars.endIndex, isPunctuation(scalars[after]) {
                scalars.formIndex(after: &after)
                stop += 1
            }
            if stop > offset, after == scalars.endIndex || scalars[after].properties.isWhitespace {
                span.range = span.range.lowerBound..<stop
            }
            result.append(span)
        }
        // A span that took a neighbour's punctuation keeps it: the next one starts after it.
        for i in result.indices.dropFirst() where result[i].range.lowerBound < result[i - 1].range.upperBound {
            result[i].range = min(result[i - 1].range.upperBound, result[i].range.upperBound)..<result[i].range.upperBound
        }
        return result.filter { !$0.range.isEmpty }
    }

    private static func isPunctuation(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation, .initialPunctuation,
             .finalPunctuation, .otherPunctuation: true
        default: false
        }
    }
}

extension TextStructure {
    /// The language span holding scalar `offset`, nil when no span holds it (`languages` is sorted).
    public func languageSpan(at offset: Int) -> LanguageSpan? {
        var low = 0, high = languages.count
        while low < high {
            let mid = (low + high) / 2
            if languages[mid].range.lowerBound <= offset { low = mid + 1 } else { high = mid }
        }
        guard low > 0, languages[low - 1].range.contains(offset) else { return nil }
        return languages[low - 1]
    }
}

extension String {
    /// The string without white space (Unicode's White_Space property) at either end.
    public var trimmingSpaces: String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let last = scalars.lastIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        return String(scalars[first...last])
    }
}
