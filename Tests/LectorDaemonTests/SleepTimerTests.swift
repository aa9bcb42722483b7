import SpeechCore
import Testing
@testable import LectorDaemon

@Suite struct SleepTimerTests {
    static func utterance(_ text: String, sentences: [String]) -> Utterance {
        let scalars = Array(text.unicodeScalars)
        var ranges: [Sentence] = []
        var from = 0
        for s in sentences {
            let n = s.unicodeScalars.count
            var i = from
            while String(String.UnicodeScalarView(scalars[i..<(i + n)])) != s { i += 1 }
            ranges.append(Sentence(range: i..<(i + n), text: s))
            from = i + n
        }
        return Utterance(id: 1, text: text, sentences: ranges, language: "en", voiceName: "en", engineVoice: "en", rate: 175, pitch: 50, title: "t")
    }

    @Test func paragraphEndsAtABlankLine() {
        let u = Self.utterance("One. Two.\n\nThree. Four.\n \nFive.", sentences: ["One.", "Two.", "Three.", "Four.", "Five."])
        #expect(SleepTimer.lastSentenceOfParagraph(in: u, from: 0) == 1)
        #expect(SleepTimer.lastSentenceOfParagraph(in: u, from: 1) == 1)
        #expect(SleepTimer.lastSentenceOfParagraph(in: u, from: 2) == 3)
        #expect(SleepTimer.lastSentenceOfParagraph(in: u, from: 4) == 4)
        // A single line break does not end a paragraph.
        let wrapped = Self.utterance("One.\nTwo.\n\nThree.", sentences: ["One.", "Two.", "Three."])
        #expect(SleepTimer.lastSentenceOfParagraph(in: wrapped, from: 0) == 1)
    }
}
