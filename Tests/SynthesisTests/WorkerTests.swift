@preconcurrency import Glibc
import Testing
@testable import Synthesis

/// End-to-end tests of the worker over eSpeak NG 1.51, each in a forked child process.
@Suite(.serialized) struct WorkerTests {
    static let english = """
        The lighthouse keeper climbed the spiral stairs at dusk, as he had done every evening for thirty-one \
        years. The lamp needed oil, the lens needed polishing, and the logbook needed a line about the weather. \
        Tonight the wind came from the north-east at twenty knots. Three fishing boats were still out past the \
        reef; he could see their lights rising and falling like slow fireflies. He wrote the time, 19:42, and \
        the pressure, 1008 hectopascals, in a careful hand. When the last boat rounded the point, he allowed \
        himself a cup of tea. Was it lonely? People always asked. He never knew how to answer them, so he \
        usually said: "Not with the sea for company."
        """

    static let german = "Der Zug nach Hamburg hatte an diesem Morgen zwanzig Minuten Verspätung. Niemand auf dem Bahnsteig schien sich darüber zu wundern."

    @Test func helloWorld() throws {
        let worker = WorkerProcess.started()
        let answer = try #require(worker.synthesize("Hello world.", tag: 42))
        #expect(answer.failure == nil)
        #expect(answer.end == answer.audio.count)
        #expect(answer.seconds > 0.7 && answer.seconds < 1.4, "\(answer.seconds) s")
        #expect(answer.loudSamples > 2000)
        #expect(answer.words.count == 2)
        guard answer.words.count == 2 else { return }
        #expect(answer.words[0].start == 0 && answer.words[0].length == 5)
        #expect(answer.words[1].start == 6 && answer.words[1].length == 5)
        #expect(answer.words[0].sample < answer.words[1].sample)
        #expect(answer.words[1].sample > 2205 && answer.words[1].sample < answer.audio.count)
        // Each word frame comes before the audio chunk that holds its sample.
        var sent = 0
        for frame in answer.frames {
            switch frame {
            case let .word(_, _, _, sample): #expect(sample >= sent)
            case let .audio(_, samples): sent += samples.count
            default: break
            }
        }
        print("Hello world.: \(answer.audio.count) samples (\(answer.seconds) s) in \(answer.chunks) chunks, words \(answer.words)")
        worker.closeInput()
        #expect(worker.waitForExit() == .exited(0))
    }

    @Test func sampleOffsetsStartAtEachRequest() throws {
        let worker = WorkerProcess.started()
        let first = try #require(worker.synthesize("One two three.", tag: 1))
        let second = try #require(worker.synthesize("Four five.", tag: 2))
        #expect(first.end == first.audio.count && second.end == second.audio.count)
        #expect(second.words.first?.sample ?? -1 < 2205, "\(second.words)")
        #expect(second.words.map(\.start) == [0, 5])
        let samples = second.words.map(\.sample)
        #expect(samples == samples.sorted())
    }

    @Test func germanWithUmlauts() throws {
        let worker = WorkerProcess.started(voice: "de")
        let answer = try #require(worker.synthesize(Self.german))
        #expect(answer.failure == nil)
        #expect(answer.seconds > 4, "\(answer.seconds) s")
        let words = answer.words.indices.map { answer.word($0, in: Self.german) }
        print("German words: \(words)")
        #expect(words.contains("Verspätung"))
        #expect(words.contains("darüber"))
        #expect(words.last == "wundern")
        #expect(words.count == 20)
        // Two sentences in one request: eSpeak NG's empty trailing word event is dropped.
        let two = try #require(worker.synthesize("Hallo Welt. Zweiter Satz."))
        #expect(two.words.map(\.start) == [0, 6, 12, 20])
    }

    @Test func markupIsReadAsText() throws {
        let worker = WorkerProcess.started()
        let markup = try #require(worker.synthesize("<b>&amp;"))
        let silence = try #require(worker.synthesize(""))
        #expect(markup.audio.count > 4 * silence.audio.count)
        #expect(markup.loudSamples > 2000)
        let words = markup.words.indices.map { markup.word($0, in: "<b>&amp;") }
        print("<b>&amp; words: \(words), \(markup.seconds) s")
        #expect(words.contains("b") && words.contains("amp"))

        let text = "this is a <test>, 5 < 6 and 7 > 3, Tom & Jerry, unterminated <foo"
        let lookalike = try #require(worker.synthesize(text))
        let spoken = lookalike.words.indices.map { lookalike.word($0, in: text) }
        print("markup look-alike words: \(spoken)")
        for word in ["test", "5", "6", "7", "3", "Tom", "&", "Jerry", "unterminated", "foo"] {
            #expect(spoken.contains(word), "\(word) not spoken")
        }
    }

    @Test func unknownVoiceFailsUntilReconfigured() throws {
        let worker = WorkerProcess.started(voice: "xx-nonexistent")
        let failed = try #require(worker.synthesize("Hello.", tag: 3))
        #expect(failed.failure == "unknown voice 'xx-nonexistent' (eSpeak NG: EE_NOT_FOUND)")
        #expect(failed.audio.isEmpty && failed.end == nil)
        let again = try #require(worker.synthesize("Hello.", tag: 4))
        #expect(again.failure != nil)
        worker.send(.configure(voice: "gmw/en-US", rate: 175, pitch: 50))
        let ok = try #require(worker.synthesize("Hello.", tag: 5))
        #expect(ok.failure == nil && ok.end == ok.audio.count && ok.audio.count > 5000)
    }

    @Test func voiceNamesThatWouldCrashTheEngineAreRefused() throws {
        // eSpeak NG 1.51 aborts in espeak_SetVoiceByName on a variant name of 37+ bytes.
        let worker = WorkerProcess.started(voice: "en+" + String(repeating: "a", count: 60))
        let failed = try #require(worker.synthesize("Hello.", tag: 1))
        #expect(failed.failure?.hasPrefix("unknown voice 'en+aaa") == true, "\(failed.failure ?? "")")
        worker.send(.configure(voice: String(repeating: "b", count: 5000), rate: 175, pitch: 50))
        #expect(try #require(worker.synthesize("Hello.", tag: 2)).failure != nil)
        worker.send(.configure(voice: "en-us+f3", rate: 175, pitch: 50))   // a real variant still works
        #expect(try #require(worker.synthesize("Hello.", tag: 3)).end ?? 0 > 5000)
        worker.send(.configure(voice: "English (America)", rate: 175, pitch: 50))
        #expect(try #require(worker.synthesize("Hello.", tag: 4)).end ?? 0 > 5000)
    }

    @Test func emptyAndOddTexts() throws {
        let worker = WorkerProcess.started()
        let empty = try #require(worker.synthesize("", tag: 1))
        #expect(empty.end == empty.audio.count && empty.audio.count < 2205 && empty.words.isEmpty)
        print("empty text: \(empty.audio.count) samples")
        let odd: [String] = [
            " \t\n  \n",
            "Ring \u{07} the \u{1B}[31mbell\u{1B}[0m\u{0C} now.",
            "🙂🎉👍",
            "Hello שלום مرحبا world.",
            "Hello\u{0}world.",
            "[[h@'loU]] is not phoneme input",
            String(repeating: "word ", count: 2000),
        ]
        for (i, text) in odd.enumerated() {
            let answer = try #require(worker.synthesize(text, tag: UInt32(10 + i)))
            #expect(answer.failure == nil && answer.end == answer.audio.count)
            let count = text.unicodeScalars.count
            #expect(answer.words.allSatisfy { $0.start >= 0 && $0.start + $0.length <= count })
        }
        let nul = try #require(worker.synthesize("Hello\u{0}world.", tag: 99))
        #expect(nul.words.map(\.start) == [0, 6])
        // Offsets count Unicode scalars: leading space, an emoji outside the BMP, a combining accent.
        let positions = "  (Hello) 🙂 cafe\u{301} world"
        let answer = try #require(worker.synthesize(positions, tag: 100))
        let words = answer.words.indices.map { answer.word($0, in: positions) }
        print("scalar offsets: \(answer.words.map { ($0.start, $0.length) }) -> \(words)")
        #expect(words.first == "Hello" && words.last == "world")
        #expect(words.contains("cafe\u{301}"))
    }

    @Test func rateAndPitchApply() throws {
        let worker = WorkerProcess.started(rate: 80)
        let slow = try #require(worker.synthesize("The quick brown fox jumps over the lazy dog."))
        worker.send(.configure(voice: "en-us", rate: 450, pitch: 99))
        let fast = try #require(worker.synthesize("The quick brown fox jumps over the lazy dog."))
        worker.send(.configure(voice: "en-us", rate: 10_000, pitch: 150))   // clamped, not an error
        let clamped = try #require(worker.synthesize("The quick brown fox jumps over the lazy dog."))
        print("rate 80: \(slow.seconds) s, rate 450: \(fast.seconds) s, rate 10000 (clamped): \(clamped.seconds) s")
        #expect(slow.audio.count > 3 * fast.audio.count)
        #expect(clamped.failure == nil && abs(clamped.audio.count - fast.audio.count) < fast.audio.count / 50)
    }

    @Test func apostropheRunAbortsTheEngine() throws {
        // bad-inputs/engine-crash-apostrophes.txt: a 441-byte word "s's's…".
        let worker = WorkerProcess.started()
        let text = String(repeating: "s'", count: 220) + "s"
        let answer = worker.synthesize(text, timeout: 30)
        let termination = worker.waitForExit(timeout: 30)
        print("apostrophe run: answer \(answer.map { "end \(String(describing: $0.end))" } ?? "none"), worker \(termination)")
        // eSpeak NG 1.51 aborts (stack protector: "*** buffer overflow detected ***"): the child dies by SIGABRT.
        #expect(answer == nil)
        #expect(termination == .signaled(SIGABRT))
        // A run of apostrophes between spaces is harmless.
        let other = WorkerProcess.started()
        #expect(other.synthesize(String(repeating: "s's ", count: 200))?.end != nil)
    }

    @Test func twoHundredThousandLetterWord() throws {
        let worker = WorkerProcess.started()
        let text = String(repeating: "a", count: 200_000)
        let answer = try #require(worker.synthesize(text, timeout: 300))
        print("200k-letter word: \(answer.failure ?? "end") after \(answer.elapsed), first audio after \(answer.firstAudio.map { "\($0)" } ?? "-"), \(answer.audio.count) samples (\(answer.seconds) s), \(answer.words.count) word events \(answer.words.prefix(3))")
        #expect(answer.end == answer.audio.count)
        worker.closeInput()
        #expect(worker.waitForExit() == .exited(0))
    }

    @Test func exitCodes() throws {
        let eof = WorkerProcess()
        #expect(eof.next() == .ready(sampleRate: 22050))
        eof.closeInput()
        #expect(eof.next() == nil)
        #expect(eof.waitForExit() == .exited(0))

        let malformed = WorkerProcess()
        _ = malformed.next()
        malformed.sendRaw([0x99, 0, 0, 0, 0])
        #expect(malformed.next() == nil)
        #expect(malformed.waitForExit() == .exited(2))

        let cut = WorkerProcess()
        _ = cut.next()
        cut.sendRaw(Array(WorkerCodec.encode(.synthesize(tag: 1, text: "Hello")).dropLast()))
        cut.closeInput()
        #expect(cut.waitForExit() == .exited(2))
    }

    @Test func closedOutputEndsTheWorkerWithoutSignal() throws {
        let worker = WorkerProcess.started()
        worker.send(.synthesize(tag: 1, text: Self.english))
        _ = worker.next()   // the first frame: synthesis is under way, then blocked on the full pipe
        close(worker.fromWorker)
        #expect(worker.waitForExit() == .exited(1))
    }

    @Test func latencyAndSpeed() throws {
        let spawn = ContinuousClock.now
        let worker = WorkerProcess()
        #expect(worker.next() == .ready(sampleRate: 22050))
        let ready = ContinuousClock.now - spawn
        worker.send(.configure(voice: "gmw/en-US", rate: 175, pitch: 50))
        let configured = try #require(worker.synthesize("", tag: 999))
        print("fork to .ready: \(ready); configure + empty synthesize: \(configured.elapsed)")
        _ = worker.synthesize("Warm up.")
        var firstAudio: [Duration] = []
        for (i, sentence) in ["The lighthouse keeper climbed the spiral stairs at dusk.", "Was it lonely?", "People always asked."].enumerated() {
            let answer = try #require(worker.synthesize(sentence, tag: UInt32(i)))
            firstAudio.append(try #require(answer.firstAudio))
        }
        let whole = try #require(worker.synthesize(Self.english, tag: 100))
        let elapsed = Double(whole.elapsed.components.attoseconds) / 1e18 + Double(whole.elapsed.components.seconds)
        let speed = whole.seconds / elapsed
        print("first .audio after synthesize: \(firstAudio); en.txt: \(whole.seconds) s of audio in \(whole.elapsed) = \(Int(speed))x real time, \(whole.chunks) chunks, \(whole.words.count) words")
        #expect(firstAudio.allSatisfy { $0 < .milliseconds(100) })
        #expect(speed > 20)
        #expect(whole.words.count > 100)
    }

    @Test func cancelCutsTheRequestBeingSynthesizedAndSkipsQueuedOnes() throws {
        let worker = WorkerProcess.started()
        // About 25 minutes of audio: cut after its first chunk, not synthesized to the end.
        let long = String(repeating: "The lighthouse keeper climbed the spiral stairs at dusk. ", count: 2_000)
        worker.send(.synthesize(tag: 1, text: long))
        worker.send(.synthesize(tag: 2, text: "Never read."))
        worker.send(.synthesize(tag: 3, text: "Read after the cancel."))
        var first: WorkerFrame?
        repeat { first = worker.next() } while first.map({ if case .audio = $0 { return false } else { return true } }) ?? false
        worker.send(.cancel(tag: 1))
        worker.send(.cancel(tag: 2))
        worker.send(.cancel(tag: 99))  // unknown: ignored
        var ends: [UInt32: Int] = [:]
        var audio: [UInt32: Int] = [:]
        while ends[3] == nil, let frame = worker.next(timeout: 30) {
            switch frame {
            case let .audio(tag, samples): audio[tag, default: 0] += samples.count
            case let .end(tag, samples): ends[tag] = samples
            case let .failed(tag, message): Issue.record("request \(tag) failed: \(message)")
            default: break
            }
        }
        print("cancel: \(ends), audio after the first chunk \(audio)")
        #expect(ends[2] == 0 && audio[2] == nil)
        #expect((ends[1] ?? .max) < 22_050 * 60, "the cancelled request ran on: \(String(describing: ends[1])) samples")
        #expect((ends[3] ?? 0) > 22_050)
    }

    @Test func nothingOneTextDoesToTheEngineOutlivesIt() throws {
        // U+0001 starts an eSpeak NG embedded command ("20A": amplitude 20). In plain text the worker reads it
        // as a space; in SSML a character reference reaches the engine, and the worker resets every parameter
        // before the next request.
        let fresh = WorkerProcess.started()
        let reference = try #require(fresh.synthesize("The quick brown fox jumps over the lazy dog."))
        let worker = WorkerProcess.started()
        _ = try #require(worker.synthesize("Quiet \u{1}20A now, \u{1}300S fast.", tag: 1))
        _ = try #require(worker.synthesize("<speak>Quiet &#1;20A now &#1;300S fast.</speak>", tag: 2, ssml: true))
        let after = try #require(worker.synthesize("The quick brown fox jumps over the lazy dog.", tag: 3))
        func rms(_ a: [Int16]) -> Double { (a.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(a.count, 1))).squareRoot() }
        print("after embedded commands: \(after.seconds) s, RMS \(rms(after.audio)); fresh: \(reference.seconds) s, RMS \(rms(reference.audio))")
        #expect(abs(rms(after.audio) - rms(reference.audio)) < rms(reference.audio) * 0.1)
        #expect(abs(after.seconds - reference.seconds) < reference.seconds * 0.1)
    }
}
