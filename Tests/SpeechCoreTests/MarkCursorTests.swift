import Testing
import SpeechCore

@Suite struct MarkCursorTests {
    let marks = [IndexMark(name: "a", offset: 0), IndexMark(name: "b", offset: 6), IndexMark(name: "c", offset: 6),
                 IndexMark(name: "end", offset: 19)]

    @Test func marksAreReachedByTheFirstWordAtOrAfterThemAndTheEnd() {
        var cursor = MarkCursor()
        #expect(cursor.reached(by: .started(utterance: 1), marks: marks).isEmpty)
        #expect(cursor.reached(by: .sentence(utterance: 1, index: 0, range: 0..<19), marks: marks).map(\.name) == ["a"])
        #expect(cursor.reached(by: .word(utterance: 1, range: 0..<5), marks: marks).isEmpty)
        #expect(cursor.reached(by: .word(utterance: 1, range: 7..<12), marks: marks).map(\.name) == ["b", "c"])
        #expect(cursor.reached(by: .paused(utterance: 1), marks: marks).isEmpty)
        #expect(cursor.reached(by: .finished(utterance: 1), marks: marks).map(\.name) == ["end"])
    }

    @Test func movingBackPassesMarksAgainAndAnotherUtteranceStartsOver() {
        var cursor = MarkCursor()
        #expect(cursor.reached(by: .word(utterance: 1, range: 7..<12), marks: marks).map(\.name) == ["a", "b", "c"])
        #expect(cursor.reached(by: .sentence(utterance: 1, index: 0, range: 0..<19), marks: marks).map(\.name) == ["a"])
        #expect(cursor.reached(by: .stopped(utterance: 1), marks: marks).isEmpty)
        #expect(cursor.reached(by: .sentence(utterance: 2, index: 0, range: 0..<3), marks: []).isEmpty)
        #expect(cursor.utterance == 2)
    }
}
