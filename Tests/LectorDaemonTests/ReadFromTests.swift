import SpeechCore
import Testing
@testable import LectorDaemon

/// ReadFrom's offset to sentence (`Reader.sentence(holding:in:)`).
@Suite struct ReadFromTests {
    static let sentences = [Sentence(range: 0..<10, text: "First one."), Sentence(range: 11..<22, text: "Second one."),
                            Sentence(range: 24..<34, text: "Third one.")]

    @Test func anOffsetBelongsToTheSentenceThatHoldsIt() {
        #expect(Reader.sentence(holding: 0, in: Self.sentences) == 0)
        #expect(Reader.sentence(holding: 9, in: Self.sentences) == 0)
        #expect(Reader.sentence(holding: 11, in: Self.sentences) == 1)
        #expect(Reader.sentence(holding: 33, in: Self.sentences) == 2)
        #expect(Reader.sentence(holding: 500, in: Self.sentences) == 2)
    }

    @Test func anOffsetBetweenSentencesBelongsToTheOneBefore() {
        #expect(Reader.sentence(holding: 10, in: Self.sentences) == 0)
        #expect(Reader.sentence(holding: 23, in: Self.sentences) == 1)
    }

    @Test func noSentencesIsTheFirst() {
        #expect(Reader.sentence(holding: 5, in: []) == 0)
    }
}
