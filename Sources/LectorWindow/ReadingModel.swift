/// What the window shows of the reading, as pure state: the text's id, how much of it is on screen, the
/// sentence and word being heard, and whether the view follows them. Inputs are the daemon's events and the
/// person's scrolling; each returns the `Update` to carry out. Offsets are Unicode scalars into the daemon's
/// `Text` (data/org.lector.Lector1.xml), which GTK's text buffer counts the same way (characters).
public struct ReadingModel: Equatable, Sendable {
    /// What the view must change after an input.
    public struct Update: Equatable, Sendable {
        /// The ranges to highlight now (nil: none); set when either changed.
        public var highlight: Highlight?
        /// Scroll so that this offset is on screen.
        public var scrollTo: Int?
        /// Show (true) or hide (false) the button that goes back to the reading.
        public var backButton: Bool?

        public init(highlight: Highlight? = nil, scrollTo: Int? = nil, backButton: Bool? = nil) {
            self.highlight = highlight
            self.scrollTo = scrollTo
            self.backButton = backButton
        }
    }

    /// The sentence and word highlighted.
    public struct Highlight: Equatable, Sendable {
        public var sentence: Range<Int>?
        public var word: Range<Int>?

        public init(sentence: Range<Int>? = nil, word: Range<Int>? = nil) {
            self.sentence = sentence
            self.word = word
        }
    }

    /// The utterance whose text is shown (0: none).
    public private(set) var utterance: UInt64 = 0
    /// Characters of the text on screen so far (a long text is shown in pieces).
    public private(set) var loaded = 0
    /// The sentence and word being heard.
    public private(set) var heard = Highlight()
    /// What was heard of a newer utterance than the one shown: its Sentence and Word signals come before its
    /// text is fetched, and its first word (a short one is over by then) is marked once the text is shown.
    private var early: Early?
    private struct Early: Equatable {
        var utterance: UInt64
        var heard: Highlight
    }
    /// Whether the view follows the reading (false once the person scrolled away).
    public private(set) var following = true

    public init() {}

    /// A new text (utterance `id`) replaces the one shown: nothing is loaded or highlighted yet, and the view
    /// follows again.
    public mutating func showText(_ id: UInt64) -> Update {
        utterance = id
        loaded = 0
        heard = early?.utterance == id ? early!.heard : Highlight()
        early = nil
        let wasFollowing = following
        following = true
        return Update(highlight: visible(heard), backButton: wasFollowing ? nil : false)
    }

    /// `count` more characters of the text are on screen: a highlight waiting for them is shown.
    public mutating func loadedUpTo(_ count: Int) -> Update {
        let before = visible(heard)
        loaded = count
        let now = visible(heard)
        guard now != before else { return Update() }
        return Update(highlight: now, scrollTo: following ? now.word?.lowerBound ?? now.sentence?.lowerBound : nil)
    }

    /// Signal Sentence of utterance `id`: `range` starts being heard (the word highlight is cleared).
    public mutating func sentenceHeard(_ id: UInt64, _ range: Range<Int>) -> Update {
        guard id == utterance else {
            if id > utterance { early = Early(utterance: id, heard: Highlight(sentence: range, word: nil)) }
            return Update()
        }
        heard = Highlight(sentence: range, word: nil)
        return shown(scrollTo: range.lowerBound)
    }

    /// Signal Word of utterance `id`: `range` starts being heard.
    public mutating func wordHeard(_ id: UInt64, _ range: Range<Int>) -> Update {
        guard id == utterance else {
            if id > utterance {
                var h = early?.utterance == id ? early!.heard : Highlight()
                h.word = range
                if let s = h.sentence, !s.contains(range.lowerBound) { h.sentence = nil }
                early = Early(utterance: id, heard: h)
            }
            return Update()
        }
        heard.word = range
        if let s = heard.sentence, !s.contains(range.lowerBound) { heard.sentence = nil }
        return shown(scrollTo: range.lowerBound)
    }

    /// Reading stopped or finished: nothing is highlighted.
    public mutating func ended(_ id: UInt64) -> Update {
        guard id == utterance, heard != Highlight() else { return Update() }
        heard = Highlight()
        return Update(highlight: heard)
    }

    /// The person scrolled: the view stops following and offers to go back.
    public mutating func personScrolled() -> Update {
        guard following else { return Update() }
        following = false
        return Update(backButton: true)
    }

    /// "Back to the reading": the view follows again, at the word (or sentence) being heard.
    public mutating func backToReading() -> Update {
        following = true
        let at = visible(heard)
        return Update(scrollTo: at.word?.lowerBound ?? at.sentence?.lowerBound, backButton: false)
    }

    private func shown(scrollTo offset: Int) -> Update {
        Update(highlight: visible(heard), scrollTo: following && offset < loaded ? offset : nil)
    }

    /// The part of `h` that lies in the text on screen.
    private func visible(_ h: Highlight) -> Highlight {
        Highlight(sentence: h.sentence.flatMap(clamp), word: h.word.flatMap(clamp))
    }

    private func clamp(_ r: Range<Int>) -> Range<Int>? {
        r.lowerBound < loaded ? r.lowerBound..<min(r.upperBound, loaded) : nil
    }
}

/// A long text cut into pieces shown one after the other, so that the window answers while a book is shown:
/// each piece ends at a line break after `size` characters where there is one within `size` more, else at
/// `2 × size` characters.
public enum TextPieces {
    /// Characters per piece, about (64 Ki: a few ms of GTK's work each).
    public static let size = 64 * 1024

    /// The pieces of `text`, in order; joined they give `text` back.
    public static func cut(_ text: String, size: Int = TextPieces.size) -> [Substring] {
        var pieces: [Substring] = []
        var start = text.startIndex
        let scalars = text.unicodeScalars
        while start < text.endIndex {
            guard let soft = scalars.index(start, offsetBy: size, limitedBy: scalars.endIndex), soft < scalars.endIndex else {
                pieces.append(text[start...])
                break
            }
            let hard = scalars.index(soft, offsetBy: size, limitedBy: scalars.endIndex) ?? scalars.endIndex
            var end = hard
            if let newline = scalars[soft..<hard].firstIndex(of: "\n") { end = scalars.index(after: newline) }
            pieces.append(Substring(scalars[start..<end]))
            start = end
        }
        return pieces
    }
}
