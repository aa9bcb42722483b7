import Testing
import TestSupport
import SpeechCore

/// A fake audio output that carries out `SpeechAction`s the way the owner of a `SpeechManager` must:
/// at most one stream, corked or not.
private struct FakeOutput {
    struct Stream: Equatable { var utterance: UInt64; var sentence: Int; var corked: Bool }
    var stream: Stream?
    var events: [SpeechEvent] = []

    /// Carries out `actions`, recording a failure for an action that makes no sense for the output.
    mutating func perform(_ actions: [SpeechAction], step: Int) {
        for action in actions {
            switch action {
            case .start(let u, let sentence, let corked):
                #expect(u.sentences.indices.contains(sentence), "step \(step): start outside the text")
                stream = Stream(utterance: u.id, sentence: sentence, corked: corked)
            case .cork:
                #expect(stream?.corked == false, "step \(step): cork without a playing stream")
                stream?.corked = true
            case .uncork:
                #expect(stream?.corked == true, "step \(step): uncork without a corked stream")
                stream?.corked = false
            case .discard:
                stream = nil
            case .changeProsody(let u):
                #expect(stream?.utterance == u.id, "step \(step): prosody change without a stream of \(u.id)")
            case .extend(let u):
                Issue.record("step \(step): sentences appended to \(u.id), whose text was complete")
            case .emit(let event):
                events.append(event)
            }
        }
    }
}

/// Checks that, per utterance, events come in runs `started (sentence|word|error|paused|resumed)* terminal`,
/// where paused and resumed alternate starting with paused and the terminal event is exactly one of
/// finished, stopped or a fatal error. A replay of the same utterance opens a new run with `started`.
/// A queued utterance (`queued(_:)`) is in a run already: it either starts when its turn comes, or is dropped
/// from the queue with `stopped` as its only event.
private struct EventGrammar {
    enum Phase: Equatable {
        case closed, queued, open(paused: Bool)
        var isOpen: Bool { if case .open = self { true } else { false } }
    }
    var phases: [UInt64: Phase] = [:]
    /// How many queued utterances were dropped before they started.
    var droppedFromQueue = 0

    func phase(_ id: UInt64) -> Phase { phases[id] ?? .closed }

    /// `id` was put in the queue (no event tells it).
    mutating func queued(_ id: UInt64, step: Int) {
        #expect(phases[id] == nil, "step \(step): \(id) queued again")
        phases[id] = .queued
    }

    mutating func feed(_ event: SpeechEvent, step: Int) {
        let id = event.utterance
        let now = phase(id)
        switch event {
        case .started:
            #expect(now == .closed || now == .queued, "step \(step): \(event) while a run of \(id) is open")
            phases[id] = .open(paused: false)
        case .sentence, .word, .error(_, _, false):
            #expect(now.isOpen, "step \(step): \(event) outside a run")
        case .paused:
            #expect(now == .open(paused: false), "step \(step): \(event) in \(now)")
            phases[id] = .open(paused: true)
        case .resumed:
            #expect(now == .open(paused: true), "step \(step): \(event) in \(now)")
            phases[id] = .open(paused: false)
        case .stopped:
            #expect(now.isOpen || now == .queued, "step \(step): terminal \(event) outside a run")
            if now == .queued { droppedFromQueue += 1 }
            phases[id] = .closed
        case .finished, .error(_, _, true):
            #expect(now.isOpen, "step \(step): terminal \(event) outside a started run")
            phases[id] = .closed
        }
    }

    /// Utterances started and not ended.
    var openRuns: [UInt64] { phases.filter { $0.value.isOpen }.map(\.key) }
    /// Utterances queued, neither started nor dropped.
    var queuedIDs: Set<UInt64> { Set(phases.filter { $0.value == .queued }.map(\.key)) }
}

@Suite("SpeechManager: random sequences")
struct SpeechManagerRandomTests {
    @Test(arguments: [1, 2, 3, 0xC0FFEE] as [UInt64])
    func invariantsHoldOverRandomInputs(seed: UInt64) throws {
        var rng = SeededGenerator(seed: seed)
        var m = SpeechManager()
        var output = FakeOutput()
        var grammar = EventGrammar()
        var nextID: UInt64 = 1
        var everSpoken = false

        for step in 0..<10_000 {
            let before = (state: m.state, current: m.current, queue: m.queue, index: m.sentenceIndex,
                          restart: m.needsRestart)
            var actions: [SpeechAction] = []
            var thrown: SpeechError?
            let input = Int.random(in: 0..<15, using: &rng)
            switch input {
            case 0, 1:
                let u = makeUtterance(nextID, sentences: Int.random(in: 1...4, using: &rng))
                nextID += 1
                let queue = Bool.random(using: &rng)
                actions = try m.speak(u, queue: queue)
                everSpoken = true
                if queue && before.state != .stopped {
                    #expect(actions == [] && m.queue == before.queue + [u], "step \(step): queue")
                    grammar.queued(u.id, step: step)
                } else {
                    #expect(m.current == u && m.state == .reading && m.queue.isEmpty, "step \(step): speak")
                }
            case 2: actions = m.pause()
            case 3: actions = m.resume()
            case 4:
                do { actions = try m.toggle() } catch { thrown = error }
                #expect((thrown == .nothingToPlay) == !everSpoken, "step \(step): toggle threw \(String(describing: thrown))")
            case 5:
                do { actions = try m.play() } catch { thrown = error }
                #expect((thrown == .nothingToPlay) == !everSpoken, "step \(step): play threw \(String(describing: thrown))")
            case 6:
                actions = m.stop()
                #expect(m.state == .stopped && m.sentenceIndex == 0 && m.queue.isEmpty, "step \(step): stop")
                #expect(m.current == before.current, "step \(step): stop keeps the text")
            case 7:
                let index = Int.random(in: -1...4, using: &rng)
                do { actions = try m.jump(toSentence: index) } catch { thrown = error }
                if let u = before.current {
                    let inside = u.sentences.indices.contains(index)
                    #expect((thrown == nil) == inside, "step \(step): jump \(index) threw \(String(describing: thrown))")
                    if inside {
                        #expect(m.sentenceIndex == index, "step \(step): jump position")
                        #expect(m.state == (before.state == .paused ? .paused : .reading), "step \(step): jump state")
                    }
                } else {
                    #expect(thrown == .nothingToPlay, "step \(step): jump with nothing")
                }
            case 8: actions = m.sentenceHeard(Int.random(in: -1...4, using: &rng))
            case 9: actions = m.wordHeard(0..<Int.random(in: 1...5, using: &rng))
            case 10: actions = m.sentenceFailed(Int.random(in: 0...3, using: &rng), message: "lost")
            case 11:
                // The stream can only drain while it plays.
                if output.stream?.corked == false { output.stream = nil }
                actions = m.reachedEnd()
            case 12: actions = m.failed("cannot start")
            case 13:
                let rate = [150, 175, 300].randomElement(using: &rng)!
                actions = m.changeRate(rate)
                if let u = m.current { #expect(u.rate == rate, "step \(step): rate") }
                #expect(m.queue.allSatisfy { $0.rate == rate }, "step \(step): queued rate")
            default:
                output.stream = nil // the sound server went away with its streams
                actions = m.outputLost("server gone")
            }

            if thrown != nil {
                #expect(actions == [], "step \(step)")
                #expect(m.state == before.state && m.current == before.current && m.queue == before.queue
                        && m.sentenceIndex == before.index && m.needsRestart == before.restart,
                        "step \(step): a refused request changed the state")
            }

            let firstNew = output.events.count
            output.perform(actions, step: step)
            for event in output.events[firstNew...] { grammar.feed(event, step: step) }

            // Invariants of the state.
            #expect(grammar.queuedIDs == Set(m.queue.map(\.id)),
                    "step \(step): queued \(m.queue.map(\.id)), waiting for an event: \(grammar.queuedIDs)")
            switch m.state {
            case .stopped:
                #expect(m.sentenceIndex == 0, "step \(step): stopped away from 0")
                #expect(m.queue.isEmpty, "step \(step): stopped with a queue")
                #expect(!m.needsRestart, "step \(step)")
                #expect(output.stream == nil, "step \(step): stopped with a stream")
                #expect(grammar.openRuns.isEmpty, "step \(step): stopped with open runs \(grammar.openRuns)")
            case .reading:
                #expect(!m.needsRestart, "step \(step)")
                #expect(output.stream?.corked == false, "step \(step): reading without a playing stream")
                #expect(grammar.openRuns == [m.current!.id], "step \(step): reading, runs \(grammar.openRuns)")
                #expect(grammar.phase(m.current!.id) == .open(paused: false), "step \(step)")
            case .paused:
                if m.needsRestart {
                    #expect(output.stream == nil, "step \(step): lost output still has a stream")
                } else {
                    #expect(output.stream?.corked == true, "step \(step): paused without a corked stream")
                }
                #expect(grammar.openRuns == [m.current!.id], "step \(step): paused, runs \(grammar.openRuns)")
                #expect(grammar.phase(m.current!.id) == .open(paused: true), "step \(step)")
            }
            if let stream = output.stream {
                #expect(stream.utterance == m.current?.id, "step \(step): stream of another utterance")
            }
            if m.state != .stopped {
                #expect(m.current!.sentences.indices.contains(m.sentenceIndex), "step \(step): position outside")
            }
            if m.current == nil { #expect(m.state == .stopped && !everSpoken, "step \(step)") }
        }
        // Every utterance, queued or not, got exactly one terminal event per run: after a last stop, none
        // is left open or waiting (a second terminal event is refused by the grammar as it comes).
        let firstNew = output.events.count
        output.perform(m.stop(), step: -1)
        for event in output.events[firstNew...] { grammar.feed(event, step: -1) }
        for id in 1..<nextID {
            #expect(grammar.phases[id] == .closed, "utterance \(id) ends in \(String(describing: grammar.phases[id]))")
        }
        #expect(grammar.droppedFromQueue > 0, "no queued utterance was ever dropped")
        // A decent sequence reaches every state and kind of event.
        #expect(Set(output.events.map { "\($0)".prefix(while: { $0 != "(" }) }).count == 8)
    }
}
