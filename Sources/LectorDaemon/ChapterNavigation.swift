import GLibKit
import SpeechCore

/// Chapters and paragraphs of the text being read (`Utterance.structure`, blank lines): where they start in
/// time, and moving to them (Lector1 `Chapters`, `JumpToChapter`, `Move`; `lector chapters`, `lector chapter N`,
/// `lector next --chapter`, …).
extension Reader {
    /// One chapter as clients see it: its title, where it starts (µs, estimated until its sentences are
    /// synthesized, as `Length` is), its depth.
    struct ChapterStart: Equatable {
        var title: String
        var start: Int64
        var level: Int
    }

    /// The current text's chapters with their start times; empty for a text without structure.
    var chapterStarts: [ChapterStart] {
        guard let u = current else { return [] }
        let total = max(1, u.sentences.last.map { $0.range.upperBound } ?? 1) + u.pendingText
        let durations = engine.timeline.durations
        let indices = u.structure.chapters.map { chapter in
            Self.sentence(at: chapter.start, in: u).flatMap { u.isComplete || $0 + 1 < u.sentences.count ? $0 : nil }
        }
        // Chapters come in the order of the text: their sentences' starts in one pass.
        var starts = durations.startSamples(of: indices.compactMap { $0 }, in: u).makeIterator()
        return zip(u.structure.chapters, indices).map { chapter, index in
            let start = index != nil ? durations.microseconds(starts.next() ?? 0)
                : length * Int64(chapter.start) / Int64(total)  // past what is cut: in proportion
            return ChapterStart(title: chapter.title, start: start, level: chapter.level)
        }
    }

    /// The index of the sentence that holds scalar `offset` of `u`'s text (the last one starting at or before
    /// it), nil when `u` has no sentences.
    static func sentence(at offset: Int, in u: Utterance) -> Int? {
        var low = 0, high = u.sentences.count
        while low < high {
            let mid = (low + high) / 2
            if u.sentences[mid].range.lowerBound <= offset { low = mid + 1 } else { high = mid }
        }
        return u.sentences.isEmpty ? nil : max(0, low - 1)
    }

    /// Moves to the start of chapter `index` (0-based), keeping the state; the rest of the text is cut first
    /// when the chapter lies past what is cut. - Throws: InvalidArgs for a chapter that does not exist.
    func jump(toChapter index: Int) throws(DBusError) {
        guard let u = current else { throw .invalidArgs("nothing is being read") }
        let chapters = u.structure.chapters
        guard chapters.indices.contains(index) else {
            throw .invalidArgs(chapters.isEmpty ? "the text has no chapters"
                                                : "no chapter \(index + 1): the text has \(chapters.count)")
        }
        try jump(toOffset: chapters[index].start)
    }

    /// Moves `count` chapters or paragraphs (`unit` "chapter" or "paragraph") forward, or back when negative.
    /// Back by one goes to the start of the chapter or paragraph being read when it is past its first sentence,
    /// as Previous does with tracks. - Returns: false when there is nothing there (the state is kept).
    /// - Throws: InvalidArgs for another unit or no text.
    func move(_ count: Int, by unit: String) throws(DBusError) -> Bool {
        guard let u = current else { throw .invalidArgs("nothing is being read") }
        let here = u.sentences[min(sentenceIndex, u.sentences.count - 1)].range.lowerBound
        let starts: [Int]
        switch unit {
        case "chapter": starts = u.structure.chapters.map(\.start)
        case "paragraph":
            if !u.isComplete { pending.finish() }
            starts = Self.paragraphStarts(current?.text ?? "")
        default: throw .invalidArgs("unknown unit '\(unit)': chapter or paragraph")
        }
        // The unit holding the sentence being read, and whether that sentence is its first.
        let holding = starts.lastIndex { $0 <= here }
        let atItsStart = holding.map { Self.sentence(at: starts[$0], in: u) == sentenceIndex } ?? false
        var target = (holding ?? -1) + count
        if count < 0, holding != nil, !atItsStart { target += 1 }
        guard starts.indices.contains(target) else { return false }
        try jump(toOffset: starts[target])
        return true
    }

    /// Scalar offsets where the paragraphs of `text` start (after each blank line).
    static func paragraphStarts(_ text: String) -> [Int] {
        var starts = [0]
        var offset = 0, newlines = 0
        for scalar in text.unicodeScalars {
            if scalar == "\n" { newlines += 1 } else if !scalar.properties.isWhitespace {
                if newlines >= 2, starts.last != offset { starts.append(offset) }
                newlines = 0
            }
            offset += 1
        }
        return starts
    }

    private func jump(toOffset offset: Int) throws(DBusError) {
        if let u = current, !u.isComplete, u.sentences.last.map({ $0.range.lowerBound <= offset }) ?? true { pending.finish() }
        guard let u = current, let index = Self.sentence(at: offset, in: u) else { throw .invalidArgs("nothing is being read") }
        do { try jump(to: index) } catch { throw Self.dbusError(error) }
    }
}
