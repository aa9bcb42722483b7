import Testing
import SpeechCore

@Suite("SpeechManager: rate")
struct RateTests {
    private let u1 = makeUtterance(1)
    private let u2 = makeUtterance(2)

    private func withRate(_ u: Utterance, _ rate: Int) -> Utterance {
        var copy = u
        copy.rate = rate
        return copy
    }

    @Test func whileReadingTheCurrentSentenceStartsAgainAtTheNewRate() {
        var m = SpeechManager()
        _ = m.speak(u1)
        _ = m.sentenceHeard(1)
        #expect(m.changeRate(300) == [.start(withRate(u1, 300), sentence: 1, corked: false)])
        #expect(m.state == .reading)
        #expect(m.current?.rate == 300)
        #expect(m.sentenceIndex == 1)
    }

    @Test func whilePausedTheNewStreamStaysCorked() {
        var m = SpeechManager()
        _ = m.speak(u1)
        _ = m.sentenceHeard(2)
        _ = m.pause()
        #expect(m.changeRate(120) == [.start(withRate(u1, 120), sentence: 2, corked: true)])
        #expect(m.state == .paused)
        #expect(m.resume() == [.uncork, .emit(.resumed(utterance: 1))])
    }

    @Test func theSameRateDoesNothing() {
        var m = SpeechManager()
        _ = m.speak(u1)
        #expect(m.changeRate(u1.rate) == [])
    }

    @Test func whenStoppedTheRateIsKeptForTheReplay() throws {
        var m = SpeechManager()
        #expect(m.changeRate(200) == [])
        _ = m.speak(u1)
        _ = m.stop()
        #expect(m.changeRate(250) == [])
        #expect(m.state == .stopped)
        #expect(try m.play() == [.start(withRate(u1, 250), sentence: 0, corked: false), .emit(.started(utterance: 1))])
    }

    @Test func queuedTextsTakeTheNewRate() {
        var m = SpeechManager()
        _ = m.speak(u1)
        _ = m.speak(u2, queue: true)
        _ = m.changeRate(90)
        #expect(m.queue.map(\.rate) == [90])
        #expect(m.reachedEnd() == [
            .emit(.finished(utterance: 1)),
            .start(withRate(u2, 90), sentence: 0, corked: false), .emit(.started(utterance: 2)),
        ])
    }

    @Test func afterALostOutputTheNewStreamStartsCorked() {
        var m = SpeechManager()
        _ = m.speak(u1)
        _ = m.sentenceHeard(1)
        _ = m.outputLost("gone")
        #expect(m.changeRate(210) == [.start(withRate(u1, 210), sentence: 1, corked: true)])
        #expect(m.needsRestart == false)
        #expect(m.resume() == [.uncork, .emit(.resumed(utterance: 1))])
    }
}
