/// A named place in a text (SSML `<mark name="…"/>`, W3C SSML 1.1 §3.3.2), reported when reading reaches it.
public struct IndexMark: Equatable, Sendable {
    /// The mark's `name` attribute, as the document gave it (cleaned like text).
    public var name: String
    /// Where the mark stands in `Utterance.text`, in Unicode scalars, 0-based: the offset of the text that
    /// follows it (the text's length for a mark after its last word).
    public var offset: Int

    /// Makes a mark named `name` at scalar `offset`.
    public init(name: String, offset: Int) {
        self.name = name
        self.offset = offset
    }
}

/// Which index marks of an utterance are heard, given its events as they are heard: a mark is reached when
/// the first word or sentence at or after its offset starts to be heard, or when the end is heard. Marks
/// are reported in text order, each once per pass; moving back in the text (previous, a seek) passes the
/// marks after the new place again. Pure: no I/O.
public struct MarkCursor: Sendable {
    /// The utterance followed, 0 for none.
    public private(set) var utterance: UInt64 = 0
    private var marks: [IndexMark] = []
    private var next = 0

    /// Makes a cursor that follows no utterance yet.
    public init() {}

    /// The marks reached by `event`, in order, for an utterance with `marks` (sorted by offset). Events of an
    /// utterance other than the one followed start following it. Stopped and errors reach no mark.
    public mutating func reached(by event: SpeechEvent, marks: [IndexMark]) -> [IndexMark] {
        if event.utterance != utterance {
            utterance = event.utterance
            self.marks = marks
            next = 0
        }
        guard !self.marks.isEmpty else { return [] }
        let place: Int
        switch event {
        case .sentence(_, _, let range), .word(_, let range): place = range.lowerBound
        case .finished: place = Int.max
        default: return []
        }
        if next > 0, place < self.marks[next - 1].offset {
            next = self.marks.firstIndex { $0.offset >= place } ?? self.marks.count // moved back
        }
        var reached: [IndexMark] = []
        while next < self.marks.count, self.marks[next].offset <= place {
            reached.append(self.marks[next])
            next += 1
        }
        return reached
    }
}
