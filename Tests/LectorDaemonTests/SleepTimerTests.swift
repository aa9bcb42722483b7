import SpeechCore
import Testing
@testable import LectorDaemon

@Suite struct SleepTimerTests {
    @Test(arguments: [
        ("20m", 1_200_000_000), ("90s", 90_000_000), ("1h30m", 5_400_000_000), ("1h 30m", 5_400_000_000),
        ("2.5m", 150_000_000), ("20", 1_200_000_000), ("1H", 3_600_000_000), ("0.5", 30_000_000),
    ] as [(String, Int64)])
    func durations(text: String, microseconds: Int64) {
        #expect(SleepTimer.parseDuration(text) == microseconds)
    }

    @Test(arguments: ["", "soon", "m", "20x", "-5m", "0", "0s", "5m3", "1..5m", "nan", "inf"])
    func notDurations(text: String) {
        #expect(SleepTimer.parseDuration(text) == nil)
    }

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

@Suite struct CommandNumberTests {
    @Test func hugeDurationsAndSecondsDoNotTrap() {
        #expect(SleepTimer.parseDuration("1e30") == .max)
        #expect(SleepTimer.parseDuration("99999999999999999999h") == .max)
        #expect(Command.microseconds(1e300) == .max)
        #expect(Command.microseconds(-1e300) == .min)
        #expect(Command.microseconds(-2.5) == -2_500_000)
    }
}
