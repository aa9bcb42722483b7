import SpeechCore
import Testing

/// `restore`: a daemon started again loads the last text stopped, and resume/play/toggle go on from the
/// saved sentence; anything else forgets that sentence.
@Suite struct SpeechManagerRestoreTests {
    private let u1 = makeUtterance(1, sentences: 5)
    private let u2 = makeUtterance(2)

    @Test func restoredIsStoppedWithTheSentenceKept() {
        var m = SpeechManager()
        #expect(m.restore(u1, resumeAt: 3) == [])
        #expect(m.state == .stopped && m.current == u1 && m.sentenceIndex == 3 && m.resumeSentence == 3)
    }

    @Test func resumePlayAndToggleGoOnFromTheSavedSentence() throws {
        for input in ["resume", "play", "toggle"] {
            var m = SpeechManager()
            _ = m.restore(u1, resumeAt: 3)
            let actions: [SpeechAction]
            switch input {
            case "resume": actions = m.resume()
            case "play": actions = try m.play()
            default: actions = try m.toggle()
            }
            #expect(actions == [.start(u1, sentence: 3, corked: false), .emit(.started(utterance: 1))], "\(input)")
            #expect(m.state == .reading && m.sentenceIndex == 3 && m.resumeSentence == nil, "\(input)")
        }
    }

    @Test func withoutASentenceResumeDoesNothingAndToggleReplays() throws {
        var m = SpeechManager()
        _ = m.restore(u1, resumeAt: nil)
        #expect(m.resume() == [])
        #expect(try m.toggle() == [.start(u1, sentence: 0, corked: false), .emit(.started(utterance: 1))])
    }

    @Test func outOfRangeSentencesAreClamped() {
        var m = SpeechManager()
        _ = m.restore(u1, resumeAt: 99)
        #expect(m.resumeSentence == 4)
        #expect(m.resume() == [.start(u1, sentence: 4, corked: false), .emit(.started(utterance: 1))])
    }

    @Test func stopSpeakAndJumpForgetTheSavedSentence() throws {
        var m = SpeechManager()
        _ = m.restore(u1, resumeAt: 3)
        #expect(m.stop() == [])
        #expect(m.resumeSentence == nil && m.sentenceIndex == 0)
        #expect(m.resume() == [])

        _ = m.restore(u1, resumeAt: 3)
        _ = m.speak(u2)
        #expect(m.resumeSentence == nil && m.current == u2)

        _ = m.restore(u1, resumeAt: 3)
        #expect(try m.jump(toSentence: 1) == [.start(u1, sentence: 1, corked: false), .emit(.started(utterance: 1))])
        #expect(m.resumeSentence == nil)
    }
}
