import SpeechCore
import Testing

/// `SpeechManager.loop`: MPRIS LoopStatus None, Track (the sentence) and Playlist (the text and the queue).
@Suite struct SpeechManagerLoopTests {
    let u1 = makeUtterance(1)
    let u2 = makeUtterance(2)

    /// One step of a table: what happens, and the actions expected of it.
    enum Step {
        case heard(Int)
        case end
    }

    func run(_ loop: LoopMode, queued: Bool = false, _ table: [(Step, [SpeechAction])]) throws {
        var m = SpeechManager()
        _ = m.speak(u1)
        if queued { _ = try m.speak(u2, queue: true) }
        m.loop = loop
        for (i, (step, expected)) in table.enumerated() {
            let actions: [SpeechAction]
            switch step {
            case .heard(let index): actions = m.sentenceHeard(index)
            case .end: actions = m.reachedEnd()
            }
            #expect(actions == expected, "step \(i): \(step)")
        }
    }

    func sentence(_ u: Utterance, _ index: Int) -> SpeechAction {
        .emit(.sentence(utterance: u.id, index: index, range: u.sentences[index].range))
    }

    @Test("None: sentences follow each other, the queue follows the text, then reading stops")
    func none() throws {
        try run(.none, queued: true, [
            (.heard(0), [sentence(u1, 0)]),
            (.heard(1), [sentence(u1, 1)]),
            (.heard(2), [sentence(u1, 2)]),
            (.end, [.emit(.finished(utterance: 1)), .start(u2, sentence: 0, corked: false), .emit(.started(utterance: 2))]),
            (.end, [.emit(.finished(utterance: 2))]),
        ])
    }

    @Test("Track: the next sentence's start restarts the sentence being read; the last one restarts at the end")
    func track() throws {
        try run(.sentence, [
            (.heard(0), [sentence(u1, 0)]),
            (.heard(1), [.start(u1, sentence: 0, corked: false)]),
            (.heard(0), [sentence(u1, 0)]),
            (.heard(1), [.start(u1, sentence: 0, corked: false)]),
        ])
        var m = SpeechManager()
        _ = m.speak(u1)
        _ = m.sentenceHeard(2)
        m.loop = .sentence
        #expect(m.reachedEnd() == [.start(u1, sentence: 2, corked: false)])
        #expect(m.state == .reading && m.sentenceIndex == 2)
    }

    @Test("Track set while reading: the sentence being read then repeats; a jump elsewhere repeats that one")
    func trackAfterJump() throws {
        var m = SpeechManager()
        _ = m.speak(u1)
        _ = m.sentenceHeard(0)
        m.loop = .sentence
        _ = try m.jump(toSentence: 2)
        #expect(m.sentenceHeard(2) == [sentence(u1, 2)])
        #expect(m.reachedEnd() == [.start(u1, sentence: 2, corked: false)])
        m.loop = .none
        #expect(m.reachedEnd() == [.emit(.finished(utterance: 1))])
        #expect(m.state == .stopped)
    }

    @Test("Playlist: the text and the queue go round, each text started again from its first sentence")
    func playlist() throws {
        try run(.all, queued: true, [
            (.end, [.emit(.finished(utterance: 1)), .start(u2, sentence: 0, corked: false), .emit(.started(utterance: 2))]),
            (.end, [.emit(.finished(utterance: 2)), .start(u1, sentence: 0, corked: false), .emit(.started(utterance: 1))]),
            (.heard(1), [sentence(u1, 1)]),
            (.end, [.emit(.finished(utterance: 1)), .start(u2, sentence: 0, corked: false), .emit(.started(utterance: 2))]),
        ])
        try run(.all, [
            (.heard(2), [sentence(u1, 2)]),
            (.end, [.emit(.finished(utterance: 1)), .start(u1, sentence: 0, corked: false), .emit(.started(utterance: 1))]),
        ])
    }

    @Test("paused or stopped, nothing loops; stop empties the queue whatever the loop")
    func notReading() throws {
        var m = SpeechManager()
        _ = m.speak(u1)
        _ = try m.speak(u2, queue: true)
        m.loop = .all
        _ = m.pause()
        #expect(m.reachedEnd() == [])
        #expect(m.sentenceHeard(1) == [sentence(u1, 1)])
        _ = m.stop()
        #expect(m.queue.isEmpty && m.state == .stopped)
        #expect(m.reachedEnd() == [])
    }
}
