@testable import SpeechCore
import Testing

/// Where a text offset's word starts in a sentence's last synthesis (`SentenceDurations.wordSample`), for
/// reading from a clicked word.
@Suite struct WordSampleTests {
    static func durations() -> SentenceDurations {
        let u = Utterance(id: 1, text: "One two three. Four five.",
                          sentences: [Sentence(range: 0..<14, text: "One two three."), Sentence(range: 15..<25, text: "Four five.")],
                          language: "en", voiceName: "English", engineVoice: "en", rate: 175, pitch: 50, title: "t")
        var d = SentenceDurations(sampleRate: 22050)
        d.begin(u)
        d.record(0, of: 1, samples: 30_000, words: [200, 9_000, 18_000], texts: [0, 4, 8])
        return d
    }

    @Test func anOffsetInAWordGivesThatWordsStart() {
        let d = Self.durations()
        #expect(d.wordSample(at: 4, inSentence: 0) == 9_000)
        #expect(d.wordSample(at: 6, inSentence: 0) == 9_000)
        #expect(d.wordSample(at: 10, inSentence: 0) == 18_000)
    }

    @Test func theFirstWordOrAnUnknownSentenceGivesNothing() {
        let d = Self.durations()
        #expect(d.wordSample(at: 0, inSentence: 0) == nil, "the first word: the sentence's start")
        #expect(d.wordSample(at: 2, inSentence: 1) == nil, "not synthesized yet")
    }

    @Test func wordsWithoutTheirTextsAreNotUsed() {
        var d = Self.durations()
        d.record(0, of: 1, samples: 30_000, words: [200, 9_000], texts: [0, 4, 8])
        #expect(d.wordSample(at: 6, inSentence: 0) == nil)
        d.forget(from: 0, of: 1)
        #expect(d.wordSample(at: 6, inSentence: 0) == nil)
    }
}
