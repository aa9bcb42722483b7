import Testing
import SpeechCore

// Every input from every state. Expected actions are spelled out in full, in order, because the owner
// carries them out in that order (discard before the next stream starts, an event after its audio change).

private let u1 = makeUtterance(1)
private let u2 = makeUtterance(2)
private let u3 = makeUtterance(3)

/// A manager reading `u`.
private func reading(_ u: Utterance = u1) -> SpeechManager {
    var m = SpeechManager()
    _ = m.speak(u)
    return m
}

/// A manager paused in `u`.
private func paused(_ u: Utterance = u1) -> SpeechManager {
    var m = reading(u)
    _ = m.pause()
    return m
}

/// A manager stopped by `stop` after reading `u` up to sentence 2.
private func stopped(_ u: Utterance = u1) -> SpeechManager {
    var m = reading(u)
    _ = m.sentenceHeard(2)
    _ = m.stop()
    return m
}

/// A manager stopped because the end of `u` was heard.
private func finished(_ u: Utterance = u1) -> SpeechManager {
    var m = reading(u)
    _ = m.sentenceHeard(2)
    _ = m.reachedEnd()
    return m
}

@Suite("SpeechManager: speak")
struct SpeakTests {
    @Test func startsInStoppedWithNothing() {
        let m = SpeechManager()
        #expect(m.state == .stopped)
        #expect(m.current == nil)
        #expect(m.queue.isEmpty)
        #expect(m.sentenceIndex == 0)
        #expect(m.needsRestart == false)
    }

    @Test func speakFromStoppedStartsAtOnce() {
        var m = SpeechManager()
        #expect(m.speak(u1) == [.start(u1, sentence: 0, corked: false), .emit(.started(utterance: 1))])
        #expect(m.state == .reading)
        #expect(m.current == u1)
        #expect(m.sentenceIndex == 0)
    }

    @Test func speakWhileReadingReplacesAtOnce() {
        var m = reading()
        _ = m.sentenceHeard(1)
        #expect(m.speak(u2) == [
            .discard, .emit(.stopped(utterance: 1)),
            .start(u2, sentence: 0, corked: false), .emit(.started(utterance: 2)),
        ])
        #expect(m.state == .reading)
        #expect(m.current == u2)
        #expect(m.sentenceIndex == 0)
    }

    @Test func speakWhilePausedReplacesAndReads() {
        var m = paused()
        #expect(m.speak(u2) == [
            .discard, .emit(.stopped(utterance: 1)),
            .start(u2, sentence: 0, corked: false), .emit(.started(utterance: 2)),
        ])
        #expect(m.state == .reading)
        #expect(m.current == u2)
    }

    @Test(arguments: [false, true])
    func speakAfterStopOrEndHasNoStoppedEvent(afterEnd: Bool) {
        var m = afterEnd ? finished() : stopped()
        #expect(m.speak(u2) == [.start(u2, sentence: 0, corked: false), .emit(.started(utterance: 2))])
        #expect(m.state == .reading)
        #expect(m.current == u2)
    }

    @Test(arguments: [false, true])
    func replacingDropsTheQueueAndStopsEachQueuedText(fromPaused: Bool) throws {
        // A client waiting for a queued text must learn that it will not be read: each gets `stopped`,
        // after the current text's own `stopped`, in queue order, before the new text starts.
        var m = fromPaused ? paused() : reading()
        _ = try m.speak(u2, queue: true)
        let u4 = makeUtterance(4)
        _ = try m.speak(u4, queue: true)
        #expect(m.speak(u3) == [
            .discard, .emit(.stopped(utterance: 1)),
            .emit(.stopped(utterance: 2)), .emit(.stopped(utterance: 4)),
            .start(u3, sentence: 0, corked: false), .emit(.started(utterance: 3)),
        ])
        #expect(m.queue.isEmpty)
        #expect(m.current == u3)
        #expect(m.reachedEnd() == [.emit(.finished(utterance: 3))])
        #expect(m.state == .stopped)
    }

    @Test func queueAppendsWhileReading() throws {
        var m = reading()
        #expect(try m.speak(u2, queue: true) == [])
        #expect(try m.speak(u3, queue: true) == [])
        #expect(m.state == .reading)
        #expect(m.current == u1)
        #expect(m.queue == [u2, u3])
    }

    @Test func queueAppendsWhilePaused() throws {
        var m = paused()
        #expect(try m.speak(u2, queue: true) == [])
        #expect(m.state == .paused)
        #expect(m.current == u1)
        #expect(m.queue == [u2])
    }

    @Test(arguments: [0, 1, 2])
    func queueFromStoppedStartsAtOnce(kind: Int) throws {
        var m = [SpeechManager(), stopped(), finished()][kind]
        #expect(try m.speak(u2, queue: true) == [.start(u2, sentence: 0, corked: false), .emit(.started(utterance: 2))])
        #expect(m.state == .reading)
        #expect(m.current == u2)
        #expect(m.queue.isEmpty)
    }
}

@Suite("SpeechManager: pause, resume, toggle, play")
struct PauseResumeTests {
    @Test func pauseFromReadingCorks() {
        var m = reading()
        _ = m.sentenceHeard(1)
        #expect(m.pause() == [.cork, .emit(.paused(utterance: 1))])
        #expect(m.state == .paused)
        #expect(m.sentenceIndex == 1)
    }

    @Test func pauseIsIdempotent() {
        var m = paused()
        #expect(m.pause() == [])
        #expect(m.state == .paused)
    }

    @Test func pauseFromStoppedDoesNothing() {
        var fresh = SpeechManager()
        #expect(fresh.pause() == [])
        #expect(fresh.state == .stopped)
        var m = stopped()
        #expect(m.pause() == [])
        #expect(m.state == .stopped)
    }

    @Test func resumeFromPausedUncorks() {
        var m = paused()
        #expect(m.resume() == [.uncork, .emit(.resumed(utterance: 1))])
        #expect(m.state == .reading)
    }

    @Test func resumeIsIdempotentAndOnlyFromPaused() {
        var m = paused()
        _ = m.resume()
        #expect(m.resume() == [])
        #expect(m.state == .reading)
        var r = reading()
        #expect(r.resume() == [])
        var s = stopped()
        #expect(s.resume() == [])
        #expect(s.state == .stopped)
        var fresh = SpeechManager()
        #expect(fresh.resume() == [])
    }

    @Test func toggleFromReadingPauses() throws {
        var m = reading()
        #expect(try m.toggle() == [.cork, .emit(.paused(utterance: 1))])
        #expect(m.state == .paused)
    }

    @Test func toggleFromPausedResumes() throws {
        var m = paused()
        #expect(try m.toggle() == [.uncork, .emit(.resumed(utterance: 1))])
        #expect(m.state == .reading)
    }

    @Test(arguments: [false, true])
    func toggleFromStoppedReplaysFromTheBeginning(afterEnd: Bool) throws {
        var m = afterEnd ? finished() : stopped()
        #expect(try m.toggle() == [.start(u1, sentence: 0, corked: false), .emit(.started(utterance: 1))])
        #expect(m.state == .reading)
        #expect(m.sentenceIndex == 0)
        #expect(m.current == u1)
    }

    @Test func toggleTwiceFromReadingComesBack() throws {
        var m = reading()
        _ = try m.toggle()
        _ = try m.toggle()
        #expect(m.state == .reading)
    }

    @Test func toggleWithNothingThrows() {
        var m = SpeechManager()
        #expect(throws: SpeechError.nothingToPlay) { try m.toggle() }
        #expect(m.state == .stopped)
        #expect(m.current == nil)
    }

    @Test func playFromReadingDoesNothing() throws {
        var m = reading()
        #expect(try m.play() == [])
        #expect(m.state == .reading)
    }

    @Test func playFromPausedResumes() throws {
        var m = paused()
        #expect(try m.play() == [.uncork, .emit(.resumed(utterance: 1))])
        #expect(m.state == .reading)
    }

    @Test(arguments: [false, true])
    func playFromStoppedReplaysFromTheBeginning(afterEnd: Bool) throws {
        var m = afterEnd ? finished() : stopped()
        #expect(try m.play() == [.start(u1, sentence: 0, corked: false), .emit(.started(utterance: 1))])
        #expect(m.state == .reading)
        #expect(m.sentenceIndex == 0)
    }

    @Test func playWithNothingThrows() {
        var m = SpeechManager()
        #expect(throws: SpeechError.nothingToPlay) { try m.play() }
        #expect(m.state == .stopped)
    }
}

@Suite("SpeechManager: stop and the end")
struct StopAndEndTests {
    @Test(arguments: [false, true])
    func stopDiscardsAndKeepsTheText(fromPaused: Bool) throws {
        var m = fromPaused ? paused() : reading()
        _ = m.sentenceHeard(2)
        _ = try m.speak(u2, queue: true)
        #expect(m.stop() == [.discard, .emit(.stopped(utterance: 1)), .emit(.stopped(utterance: 2))])
        #expect(m.state == .stopped)
        #expect(m.sentenceIndex == 0)
        #expect(m.queue.isEmpty)
        #expect(m.current == u1)
        #expect(m.needsRestart == false)
    }

    @Test func stopStopsEveryQueuedTextInQueueOrderAndNoneIsReadLater() throws {
        var m = reading()
        _ = try m.speak(u3, queue: true)
        _ = try m.speak(u2, queue: true)
        #expect(m.stop() == [.discard, .emit(.stopped(utterance: 1)),
                             .emit(.stopped(utterance: 3)), .emit(.stopped(utterance: 2))])
        // The text kept for a replay is the current one; the dropped ones never come back.
        #expect(try m.play() == [.start(u1, sentence: 0, corked: false), .emit(.started(utterance: 1))])
        #expect(m.reachedEnd() == [.emit(.finished(utterance: 1))])
        #expect(m.state == .stopped)
    }

    @Test func stopWithAnEmptyQueueStopsOnlyTheCurrentText() {
        var m = paused()
        #expect(m.stop() == [.discard, .emit(.stopped(utterance: 1))])
    }

    @Test func stopWhenStoppedDoesNothing() {
        var fresh = SpeechManager()
        #expect(fresh.stop() == [])
        var m = stopped()
        #expect(m.stop() == [])
        var f = finished()
        #expect(f.stop() == [])
        #expect(f.current == u1)
    }

    @Test func endWithoutQueueStopsAndKeepsTheText() {
        var m = reading()
        _ = m.sentenceHeard(2)
        #expect(m.reachedEnd() == [.emit(.finished(utterance: 1))])
        #expect(m.state == .stopped)
        #expect(m.sentenceIndex == 0)
        #expect(m.current == u1)
    }

    @Test func endWithQueueFinishesThenStartsTheNext() throws {
        var m = reading()
        _ = try m.speak(u2, queue: true)
        _ = try m.speak(u3, queue: true)
        _ = m.sentenceHeard(2)
        #expect(m.reachedEnd() == [
            .emit(.finished(utterance: 1)),
            .start(u2, sentence: 0, corked: false), .emit(.started(utterance: 2)),
        ])
        #expect(m.state == .reading)
        #expect(m.current == u2)
        #expect(m.sentenceIndex == 0)
        #expect(m.queue == [u3])
        #expect(m.reachedEnd() == [
            .emit(.finished(utterance: 2)),
            .start(u3, sentence: 0, corked: false), .emit(.started(utterance: 3)),
        ])
        #expect(m.reachedEnd() == [.emit(.finished(utterance: 3))])
        #expect(m.state == .stopped)
        #expect(m.current == u3)
    }

    @Test func endIsIgnoredUnlessReading() {
        var p = paused()
        #expect(p.reachedEnd() == [])
        #expect(p.state == .paused)
        var s = stopped()
        #expect(s.reachedEnd() == [])
        var fresh = SpeechManager()
        #expect(fresh.reachedEnd() == [])
    }
}

@Suite("SpeechManager: jumps")
struct JumpTests {
    @Test func jumpWhileReadingRestartsThere() throws {
        var m = reading()
        #expect(try m.jump(toSentence: 2) == [.start(u1, sentence: 2, corked: false)])
        #expect(m.state == .reading)
        #expect(m.sentenceIndex == 2)
    }

    @Test func jumpWhilePausedStaysCorked() throws {
        var m = paused()
        #expect(try m.jump(toSentence: 1) == [.start(u1, sentence: 1, corked: true)])
        #expect(m.state == .paused)
        #expect(m.sentenceIndex == 1)
        #expect(m.resume() == [.uncork, .emit(.resumed(utterance: 1))])
        #expect(m.sentenceIndex == 1)
    }

    @Test(arguments: [false, true])
    func jumpFromStoppedStartsReadingThere(afterEnd: Bool) throws {
        var m = afterEnd ? finished() : stopped()
        #expect(try m.jump(toSentence: 1) == [.start(u1, sentence: 1, corked: false), .emit(.started(utterance: 1))])
        #expect(m.state == .reading)
        #expect(m.sentenceIndex == 1)
    }

    @Test func jumpToTheFirstAndLastSentence() throws {
        var m = reading()
        #expect(try m.jump(toSentence: 0) == [.start(u1, sentence: 0, corked: false)])
        #expect(try m.jump(toSentence: u1.sentences.count - 1) == [.start(u1, sentence: 2, corked: false)])
    }

    // `#expect(throws:)` describes the expected error, `noSuchSentence(Int.max)` included.
    @Test(arguments: [-1, 3, 4, Int.max, Int.min])
    func jumpOutsideTheTextThrows(index: Int) {
        for var m in [reading(), paused(), stopped()] {
            let before = (m.state, m.sentenceIndex, m.current)
            #expect(throws: SpeechError.noSuchSentence(index)) { try m.jump(toSentence: index) }
            #expect(m.state == before.0)
            #expect(m.sentenceIndex == before.1)
            #expect(m.current == before.2)
        }
    }

    @Test func jumpWithNothingThrows() {
        var m = SpeechManager()
        #expect(throws: SpeechError.nothingToPlay) { try m.jump(toSentence: 0) }
        #expect(m.state == .stopped)
    }
}

@Suite("SpeechManager: what is heard")
struct HeardTests {
    @Test func sentenceHeardEmitsItsRangeAndMovesThePosition() {
        var m = reading()
        #expect(m.sentenceHeard(1) == [.emit(.sentence(utterance: 1, index: 1, range: u1.sentences[1].range))])
        #expect(m.sentenceIndex == 1)
    }

    @Test func sentenceHeardOutsideTheTextIsIgnored() {
        var m = reading()
        _ = m.sentenceHeard(1)
        #expect(m.sentenceHeard(3) == [])
        #expect(m.sentenceHeard(-1) == [])
        #expect(m.sentenceIndex == 1)
    }

    @Test func heardIsIgnoredWhenStopped() {
        for var m in [SpeechManager(), stopped(), finished()] {
            #expect(m.sentenceHeard(1) == [])
            #expect(m.wordHeard(0..<8) == [])
            #expect(m.sentenceIndex == 0)
        }
    }

    @Test func wordHeardEmitsItsRange() {
        var m = reading()
        #expect(m.wordHeard(9..<10) == [.emit(.word(utterance: 1, range: 9..<10))])
    }

    @Test func sentenceFailedIsANonFatalError() {
        var m = reading()
        #expect(m.sentenceFailed(1, message: "engine crashed") ==
                [.emit(.error(utterance: 1, message: "engine crashed", fatal: false))])
        #expect(m.state == .reading)
        #expect(m.current == u1)
    }

    @Test func sentenceFailedIsIgnoredWhenStopped() {
        var m = stopped()
        #expect(m.sentenceFailed(1, message: "x") == [])
        var fresh = SpeechManager()
        #expect(fresh.sentenceFailed(0, message: "x") == [])
    }
}

@Suite("SpeechManager: failures")
struct FailureTests {
    @Test(arguments: [false, true])
    func failedStopsWithAFatalError(fromPaused: Bool) throws {
        var m = fromPaused ? paused() : reading()
        _ = m.sentenceHeard(2)
        _ = try m.speak(u2, queue: true)
        _ = try m.speak(u3, queue: true)
        // The current text ends with its fatal error; each queued one, never started, only gets `stopped`.
        #expect(m.failed("no worker") == [
            .discard, .emit(.error(utterance: 1, message: "no worker", fatal: true)),
            .emit(.stopped(utterance: 2)), .emit(.stopped(utterance: 3)),
        ])
        #expect(m.state == .stopped)
        #expect(m.sentenceIndex == 0)
        #expect(m.queue.isEmpty)
        #expect(m.current == u1)
        #expect(m.needsRestart == false)
    }

    @Test func failedWithAnEmptyQueueEmitsOnlyTheError() {
        var m = reading()
        #expect(m.failed("no worker") == [.discard, .emit(.error(utterance: 1, message: "no worker", fatal: true))])
    }

    @Test func outputLostKeepsTheQueue() throws {
        var m = reading()
        _ = try m.speak(u2, queue: true)
        #expect(m.outputLost("gone") == [
            .discard, .emit(.error(utterance: 1, message: "gone", fatal: false)), .emit(.paused(utterance: 1)),
        ])
        #expect(m.queue == [u2])
    }

    @Test func failedWhenStoppedDoesNothing() {
        var m = stopped()
        #expect(m.failed("x") == [])
        var fresh = SpeechManager()
        #expect(fresh.failed("x") == [])
    }

    @Test func outputLostWhileReadingPausesAndResumeStartsANewStream() {
        var m = reading()
        _ = m.sentenceHeard(2)
        #expect(m.outputLost("server gone") == [
            .discard, .emit(.error(utterance: 1, message: "server gone", fatal: false)),
            .emit(.paused(utterance: 1)),
        ])
        #expect(m.state == .paused)
        #expect(m.needsRestart)
        #expect(m.sentenceIndex == 2)
        #expect(m.resume() == [.start(u1, sentence: 2, corked: false), .emit(.resumed(utterance: 1))])
        #expect(m.state == .reading)
        #expect(m.needsRestart == false)
        // The new stream corks and uncorks as usual.
        #expect(m.pause() == [.cork, .emit(.paused(utterance: 1))])
        #expect(m.resume() == [.uncork, .emit(.resumed(utterance: 1))])
    }

    @Test func outputLostWhilePausedStaysPausedAndRestartsOnResume() {
        var m = reading()
        _ = m.sentenceHeard(1)
        _ = m.pause()
        #expect(m.outputLost("gone") == [.discard, .emit(.error(utterance: 1, message: "gone", fatal: false))])
        #expect(m.state == .paused)
        #expect(m.needsRestart)
        #expect(m.resume() == [.start(u1, sentence: 1, corked: false), .emit(.resumed(utterance: 1))])
    }

    @Test func toggleAndPlayAfterOutputLostRestart() throws {
        var m = reading()
        _ = m.sentenceHeard(1)
        _ = m.outputLost("gone")
        var t = m
        #expect(try t.toggle() == [.start(u1, sentence: 1, corked: false), .emit(.resumed(utterance: 1))])
        #expect(try m.play() == [.start(u1, sentence: 1, corked: false), .emit(.resumed(utterance: 1))])
    }

    @Test func jumpAfterOutputLostStartsCorkedAndResumeUncorks() throws {
        var m = reading()
        _ = m.outputLost("gone")
        #expect(try m.jump(toSentence: 2) == [.start(u1, sentence: 2, corked: true)])
        #expect(m.needsRestart == false)
        #expect(m.state == .paused)
        #expect(m.resume() == [.uncork, .emit(.resumed(utterance: 1))])
    }

    @Test func stopAfterOutputLostForgetsTheRestart() throws {
        var m = reading()
        _ = m.outputLost("gone")
        #expect(m.stop() == [.discard, .emit(.stopped(utterance: 1))])
        #expect(m.needsRestart == false)
        #expect(try m.play() == [.start(u1, sentence: 0, corked: false), .emit(.started(utterance: 1))])
    }

    @Test func outputLostWhenStoppedDoesNothing() {
        var m = stopped()
        #expect(m.outputLost("gone") == [])
        #expect(m.needsRestart == false)
        #expect(m.state == .stopped)
    }
}

@Suite("SpeechCore values")
struct ValueTests {
    @Test func eventsNameTheirUtterance() {
        let events: [SpeechEvent] = [
            .started(utterance: 7), .sentence(utterance: 7, index: 0, range: 0..<1), .word(utterance: 7, range: 0..<1),
            .paused(utterance: 7), .resumed(utterance: 7), .stopped(utterance: 7), .finished(utterance: 7),
            .error(utterance: 7, message: "m", fatal: true),
        ]
        #expect(events.allSatisfy { $0.utterance == 7 })
    }

    @Test func errorDescriptionsCountFromOne() {
        #expect(SpeechError.noSuchSentence(2).description == "no sentence 3 in this text")
        #expect(SpeechError.nothingToPlay.description.contains("nothing to play"))
        #expect(SpeechError.noSuchSentence(-1).description == "no sentence 0 in this text")
    }

    @Test func errorDescriptionOfTheLargestIndex() {
        // Int.max has no next number: it is described without arithmetic (and without trapping).
        #expect(SpeechError.noSuchSentence(Int.max).description == "no sentence past the end in this text")
        #expect(SpeechError.noSuchSentence(Int.max - 1).description == "no sentence \(Int.max) in this text")
        #expect(SpeechError.noSuchSentence(Int.min).description == "no sentence \(Int.min + 1) in this text")
    }

    @Test func threeStates() {
        #expect(SpeechState.allCases == [.reading, .paused, .stopped])
    }
}

/// A long text read while the rest of it is still being cut into sentences (`SpeechManager.extend`).
@Suite struct SpeechManagerExtendTests {
    /// Utterance `id` with only the first `first` of `count` sentences, the rest pending.
    static func partial(_ id: UInt64, first: Int, of count: Int) -> (Utterance, [Sentence]) {
        let whole = makeUtterance(id, sentences: count)
        var u = whole
        u.sentences = Array(whole.sentences.prefix(first))
        u.pendingText = whole.text.unicodeScalars.count - u.sentences.last!.range.upperBound
        return (u, Array(whole.sentences.dropFirst(first)))
    }

    @Test("more sentences are appended to the current utterance in any state, and the last ones complete it")
    func appends() throws {
        var m = SpeechManager()
        let (u, rest) = Self.partial(1, first: 2, of: 6)
        #expect(!u.isComplete)
        _ = m.speak(u)
        let a = m.extend(utterance: 1, with: Array(rest.prefix(2)), pendingText: 40)
        #expect(m.current?.sentences.count == 4 && m.current?.pendingText == 40)
        #expect(a == [.extend(m.current!)])
        #expect(m.state == .reading && m.sentenceIndex == 0)
        _ = m.pause()
        _ = m.extend(utterance: 1, with: Array(rest.dropFirst(2)), pendingText: 0)
        #expect(m.current?.sentences == makeUtterance(1, sentences: 6).sentences)
        #expect(m.current?.isComplete == true && m.state == .paused)
        // A complete utterance takes no more.
        #expect(m.extend(utterance: 1, with: rest, pendingText: 0) == [])
        #expect(m.current?.sentences.count == 6)
        // A jump now reaches the appended sentences.
        #expect(try m.jump(toSentence: 5) == [.start(m.current!, sentence: 5, corked: true)])
    }

    @Test("sentences of a text that was replaced are ignored; stopped keeps extending the kept text")
    func staleAndStopped() {
        var m = SpeechManager()
        let (u1, rest1) = Self.partial(1, first: 1, of: 3)
        _ = m.speak(u1)
        _ = m.speak(makeUtterance(2))
        #expect(m.extend(utterance: 1, with: rest1, pendingText: 0) == [])
        #expect(m.current?.id == 2 && m.current?.sentences.count == 3)
        let (u3, rest3) = Self.partial(3, first: 1, of: 3)
        _ = m.speak(u3)
        _ = m.stop()
        #expect(m.extend(utterance: 3, with: rest3, pendingText: 0).count == 1)
        #expect(m.state == .stopped && m.current?.sentences.count == 3)
    }

    @Test("after a voice change the appended sentences are read with the one voice")
    func voiceChanged() {
        var m = SpeechManager()
        var (u, rest) = Self.partial(1, first: 1, of: 4)
        u.voices.append(UtteranceVoice(language: "de", name: "German", engineVoice: "gmw/de"))
        _ = m.speak(u)
        rest = rest.map { var s = $0; s.voice = 1; return s }
        _ = m.extend(utterance: 1, with: [rest[0]], pendingText: 20)
        #expect(m.current?.sentences[1].voice == 1)
        _ = m.changeVoice(engineVoice: "fr", name: "French", language: "fr")
        _ = m.extend(utterance: 1, with: Array(rest.dropFirst()), pendingText: 0)
        #expect(m.current?.sentences.allSatisfy { $0.voice == 0 } == true)
        #expect(m.current?.voice(ofSentence: 3).language == "fr")
    }

    @Test("the whole text of a file read in two steps replaces its start, sentences and state kept")
    func completes() {
        var m = SpeechManager()
        let (whole, rest) = Self.partial(1, first: 2, of: 5)
        var start = whole
        start.text = String(whole.text.unicodeScalars.prefix(whole.sentences[1].range.upperBound + 1))
        start.pendingText = 100
        _ = m.speak(start)
        _ = m.pause()
        let actions = m.complete(utterance: 1, text: whole.text, pendingText: 30)
        #expect(m.current?.text == whole.text && m.current?.pendingText == 30)
        #expect(m.current?.sentences == start.sentences && m.state == .paused)
        #expect(actions == [.extend(m.current!)])
        #expect(m.complete(utterance: 2, text: "other", pendingText: 0) == [])
        _ = m.extend(utterance: 1, with: rest, pendingText: 0)
        #expect(m.current?.isComplete == true && m.current?.sentences.count == 5)
    }

    @Test("voices found for appended sentences are appended to the utterance's, unless its voice was changed")
    func newVoices() {
        var m = SpeechManager()
        var (u, rest) = Self.partial(1, first: 1, of: 4)
        let german = UtteranceVoice(language: "de", name: "German", engineVoice: "gmw/de")
        _ = m.speak(u)
        rest[0].voice = 1
        _ = m.extend(utterance: 1, with: [rest[0]], voices: [german], pendingText: 20)
        #expect(m.current?.voices == [u.voices[0], german])
        #expect(m.current?.voice(ofSentence: 1) == german)
        // A sentence naming a voice that was never given is read with the first one.
        rest[1].voice = 5
        _ = m.extend(utterance: 1, with: [rest[1]], pendingText: 10)
        #expect(m.current?.sentences[2].voice == 0)

        (u, rest) = Self.partial(2, first: 1, of: 3)
        _ = m.speak(u)
        _ = m.changeVoice(engineVoice: "fr", name: "French", language: "fr")
        rest[0].voice = 1
        _ = m.extend(utterance: 2, with: rest, voices: [german], pendingText: 0)
        #expect(m.current?.voices.map(\.language) == ["fr"])
        #expect(m.current?.sentences.allSatisfy { $0.voice == 0 } == true)
    }
}
