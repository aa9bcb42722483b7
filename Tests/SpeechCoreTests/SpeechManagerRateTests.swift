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

    private func withPitch(_ u: Utterance, _ pitch: Int) -> Utterance {
        var copy = u
        copy.pitch = pitch
        return copy
    }

    @Test func whileReadingTheChangeIsHeardFromTheNextWordWithoutARestart() {
        var m = SpeechManager()
        _ = m.speak(u1)
        _ = m.sentenceHeard(1)
        #expect(m.changeRate(300) == [.changeProsody(withRate(u1, 300))])
        #expect(m.state == .reading)
        #expect(m.current?.rate == 300)
        #expect(m.sentenceIndex == 1)
        // Reading goes on in the same run: the next sentence and the end come as before.
        #expect(m.sentenceHeard(2) == [.emit(.sentence(utterance: 1, index: 2, range: u1.sentences[2].range))])
    }

    @Test func whilePausedTheStreamIsKeptAndStaysPaused() {
        var m = SpeechManager()
        _ = m.speak(u1)
        _ = m.sentenceHeard(2)
        _ = m.pause()
        #expect(m.changeRate(120) == [.changeProsody(withRate(u1, 120))])
        #expect(m.state == .paused)
        #expect(m.resume() == [.uncork, .emit(.resumed(utterance: 1))])
    }

    @Test func pitchChangesTheSameWay() throws {
        var m = SpeechManager()
        _ = m.speak(u1)
        _ = try m.speak(u2, queue: true)
        #expect(m.changePitch(70) == [.changeProsody(withPitch(u1, 70))])
        #expect(m.changePitch(70) == [])
        #expect(m.queue.map(\.pitch) == [70])
        _ = m.stop()
        #expect(m.changePitch(20) == [])
        #expect(m.current?.pitch == 20)
    }

    @Test func voiceChangesTheCurrentTextOnly() throws {
        var m = SpeechManager()
        _ = m.speak(u1)
        _ = try m.speak(u2, queue: true)
        var expected = u1
        expected.voices = [UtteranceVoice(language: "de", name: "German", engineVoice: "gmw/de")]
        #expect(m.changeVoice(engineVoice: "gmw/de", name: "German", language: "de") == [.changeProsody(expected)])
        #expect(m.changeVoice(engineVoice: "gmw/de", name: "German", language: "de") == [])
        #expect(m.queue.map(\.engineVoice) == [u2.engineVoice])
    }

    @Test func rateAndPitchTogetherKeepBoth() {
        var m = SpeechManager()
        _ = m.speak(u1)
        _ = m.changeRate(400)
        #expect(m.changePitch(10) == [.changeProsody(withPitch(withRate(u1, 400), 10))])
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

    @Test func queuedTextsTakeTheNewRate() throws {
        var m = SpeechManager()
        _ = m.speak(u1)
        _ = try m.speak(u2, queue: true)
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
