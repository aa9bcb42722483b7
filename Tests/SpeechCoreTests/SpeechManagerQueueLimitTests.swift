import SpeechCore
import Testing

// The queue's limits (SpeechManager.maximumQueuedTexts, .maximumQueuedBytes): a text that does not fit is
// refused and changes nothing; Stop, a replacing text and the end of the current text make room again.

/// An utterance `id` of one sentence whose text is `bytes` ASCII bytes.
private func sized(_ id: UInt64, bytes: Int) -> Utterance {
    let text = String(repeating: "a", count: bytes)
    return Utterance(id: id, text: text, sentences: [Sentence(range: 0..<bytes, text: text)], language: "en-US",
                     voiceName: "English (America)", engineVoice: "en-us", rate: 175, pitch: 50, title: "a")
}

/// A manager reading utterance 1.
private func reading() -> SpeechManager {
    var m = SpeechManager()
    _ = m.speak(makeUtterance(1))
    return m
}

@Suite("SpeechManager: queue limits")
struct SpeechManagerQueueLimitTests {
    @Test func theLimitsAreAFewHundredTextsAndAsMuchAsTheLargestFile() {
        #expect(SpeechManager.maximumQueuedTexts == 256)
        #expect(SpeechManager.maximumQueuedBytes == 32 << 20)
    }

    @Test func oneTextPastTheCountIsRefusedAndNothingChanges() throws {
        var m = reading()
        for i in 0..<SpeechManager.maximumQueuedTexts {
            #expect(try m.speak(makeUtterance(UInt64(100 + i)), queue: true) == [])
        }
        let bytes = m.queuedBytes
        let extra = makeUtterance(9_999)
        let error = SpeechError.queueFull(texts: SpeechManager.maximumQueuedTexts, bytes: bytes, adding: extra.text.utf8.count)
        #expect(throws: error) { try m.checkQueue(bytes: extra.text.utf8.count) }
        #expect(throws: error) { _ = try m.speak(extra, queue: true) }
        #expect(m.queue.count == SpeechManager.maximumQueuedTexts)
        #expect(m.queuedBytes == bytes)
        #expect(m.state == .reading && m.current?.id == 1)
        #expect(error.description == "the queue is full: 256 texts wait (at most 256 texts and 32 MiB); `lector stop` empties it")
    }

    @Test func bytesPastTheLimitAreRefusedUpToTheLastByte() throws {
        var m = reading()
        let quarter = SpeechManager.maximumQueuedBytes / 4
        for i in 0..<4 { #expect(try m.speak(sized(UInt64(10 + i), bytes: quarter), queue: true) == []) }
        #expect(m.queuedBytes == SpeechManager.maximumQueuedBytes)
        #expect(throws: SpeechError.queueFull(texts: 4, bytes: 32 << 20, adding: 1)) { _ = try m.speak(sized(20, bytes: 1), queue: true) }
        #expect(m.queue.count == 4)

        // One text larger than the whole queue is refused even when the queue is empty.
        var empty = reading()
        let error = SpeechError.queueFull(texts: 0, bytes: 0, adding: (32 << 20) + 1)
        #expect(throws: error) { try empty.checkQueue(bytes: (32 << 20) + 1) }
        #expect(throws: error) { _ = try empty.speak(sized(21, bytes: (32 << 20) + 1), queue: true) }
        #expect(empty.queue.isEmpty && empty.queuedBytes == 0)
        #expect(error.description == "no room in the queue for a text of 32.1 MiB: 0 texts of 0.0 MiB wait "
                + "(at most 256 texts and 32 MiB); `lector stop` empties it")
    }

    @Test func fromStoppedATextStartsAtOnceWhateverItsSize() throws {
        var m = SpeechManager()
        try m.checkQueue(bytes: .max)
        let big = sized(5, bytes: (32 << 20) + 1)
        #expect(try m.speak(big, queue: true) == [.start(big, sentence: 0, corked: false), .emit(.started(utterance: 5))])
        #expect(m.queue.isEmpty && m.queuedBytes == 0)
    }

    @Test func stopReplacingAndTheEndMakeRoom() throws {
        func full() throws -> SpeechManager {
            var m = reading()
            for i in 0..<SpeechManager.maximumQueuedTexts { _ = try m.speak(makeUtterance(UInt64(100 + i)), queue: true) }
            #expect(throws: SpeechError.self) { try m.checkQueue(bytes: 1) }
            return m
        }
        var stopped = try full()
        _ = stopped.stop()
        #expect(stopped.queue.isEmpty && stopped.queuedBytes == 0)
        _ = stopped.speak(makeUtterance(2))
        #expect(try stopped.speak(makeUtterance(3), queue: true) == [])

        var replaced = try full()
        _ = replaced.speak(makeUtterance(2))
        #expect(replaced.queue.isEmpty && replaced.queuedBytes == 0)
        try replaced.checkQueue(bytes: 1)

        var ended = try full()
        let before = ended.queuedBytes
        _ = ended.reachedEnd()
        #expect(ended.queue.count == SpeechManager.maximumQueuedTexts - 1)
        #expect(ended.queuedBytes == before - makeUtterance(100).text.utf8.count)
        try ended.checkQueue(bytes: 1)

        var failed = try full()
        _ = failed.failed("the engine is gone")
        #expect(failed.queue.isEmpty && failed.queuedBytes == 0)
    }
}
