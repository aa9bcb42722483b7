import GLibKit
import Foundation
import Testing

extension Integration {
    /// A long text is read while the rest of it is still being prepared (in a session of its own: after the
    /// Load suite's thousands of texts, the worker may still be working through their stale requests).
    @Suite(.privateSession)
    struct LongText {
        @Test("a 1 MB text is heard at once, while the rest of it is prepared; it can be sought deep into, paused and resumed")
        func megabyteAtOnce() async throws {
            let session = try await world()
            let recorder = session.recorder
            let bus = try BusConnection(address: session.busAddress)
            var paragraphs: [String] = []
            var size = 0
            while size < 1_048_576 {
                let p = "Chapter \(paragraphs.count + 1). The keeper climbs the stairs of the lighthouse once more. "
                    + "He counts the steps, e.g. one hundred and twelve, and winds the clock. Then he rests."
                paragraphs.append(p)
                size += p.utf8.count + 2
            }
            let megabyte = paragraphs.joined(separator: "\n\n")
            /// Lector's Position, µs ("<int64 N>": the last word's digits).
            func heardPosition() -> Int64? {
                bus.property("org.lector.Lector", "/org/lector/Lector", "org.lector.Lector1", "Position")
                    .flatMap { $0.split(separator: " ").last }.flatMap { Int64($0.filter(\.isNumber)) }
            }
            var mark = recorder.mark()
            let reply = bus.call("org.lector.Lector", "/org/lector/Lector", "org.lector.Lector1", "Speak",
                                 arguments: [.string(megabyte), .vardict(["language": .string("en")])], timeoutMs: 60_000)
            let id = try #require(reply.value?.split(separator: " ").last.map { $0.filter(\.isNumber) }.flatMap { UInt64($0) }, "\(reply)")
            let heard = await recorder.waitForSpeech(after: mark, timeout: 10)
            if heard == nil {
                let state = "\(bus.lectorState ?? "?"), \(heardPosition() ?? -1) µs, sentence \(String(describing: bus.lectorSentence))"
                Issue.record("the 1 MB text was not heard: \(state), \(recorder.sampleCount - mark) samples recorded\n\(session.daemonLogs())")
                return
            }
            #expect(bus.lectorState == "reading")
            #expect(bus.lectorText == megabyte, "Text is not the whole text")

            // An hour in: far past the first slice, wherever the preparation has got to.
            mark = recorder.mark()
            let target: Int64 = 3_600_000_000
            let moved = bus.player("SetPosition", "(objectpath '/org/lector/Lector/utterance/\(id)', int64 \(target))")
            #expect(moved.value != nil, "\(moved)")
            let position = try #require(heardPosition())
            #expect(position >= target && position < target + 60_000_000, "position \(position) µs after SetPosition to \(target)")
            let sentence = try #require(bus.lectorSentence)
            #expect(sentence.index > 500, "sentence \(sentence.index) an hour into the text")
            let chapter = megabyte.unicodeScalars.dropFirst(sentence.start).prefix(sentence.length)
            #expect(!chapter.isEmpty)
            #expect(await recorder.waitForSpeech(after: mark, timeout: 5) != nil, "no speech after SetPosition")

            // Pause and resume there.
            try await Task.sleep(for: .milliseconds(800))  // reads 0.8 s from there
            _ = bus.player("Pause")
            #expect(bus.lectorState == "paused")
            let frozen = try #require(heardPosition())
            #expect(frozen >= position)
            mark = recorder.mark()
            await recorder.waitForSamples(after: mark, seconds: 0.6)
            #expect(AudioAnalysis(recorder.samples(from: mark)).isSilent(from: 0.2), "speech while paused")
            mark = recorder.mark()
            _ = bus.player("Play")
            #expect(await recorder.waitForSpeech(after: mark, timeout: 3) != nil, "no speech after Play")
            #expect(bus.lectorState == "reading")
            #expect((bus.lectorSentence?.index ?? 0) >= sentence.index, "resumed elsewhere: \(String(describing: bus.lectorSentence))")
            _ = bus.lector("Stop")
        }

        @Test("a 256 KB file read by descriptor is heard at once; its whole text follows its start, and its end, in another language, is reached")
        func longFile() async throws {
            let session = try await world()
            let recorder = session.recorder
            let bus = try BusConnection(address: session.busAddress)
            // Lines on single line breaks (for the language detector one paragraph, cut into pieces), then German.
            // (256 KB: four times what SpeakFile reads first; the debug build detects and cuts it in seconds.)
            var lines: [String] = []
            var size = 0
            while size < 262_144 {
                let line = "Line \(lines.count + 1). The keeper climbs the stairs of the lighthouse once more, and counts every step."
                lines.append(line)
                size += line.utf8.count + 1
            }
            let german = "Der Leuchtturmwärter steigt die Treppe hinauf und zählt die Stufen, wie jeden Abend, bevor er die Lampe anzündet."
            let text = lines.joined(separator: "\n") + "\n\n" + german + "\n"
            let file = session.directory.appendingPathComponent("long.txt")
            try text.write(to: file, atomically: true, encoding: .utf8)
            var mark = recorder.mark()
            let read = try await session.lector(["read", "--file", file.path])
            #expect(read.status == 0, "\(read)")
            #expect(await recorder.waitForSpeech(after: mark, timeout: 10) != nil, "not heard\n\(session.daemonLogs())")
            let whole = await eventually(timeout: 2) { bus.lectorText == text }
            #expect(whole, "Text is not the whole file: \(bus.lectorText?.utf8.count ?? -1) of \(text.utf8.count) bytes")

            // Its last sentence, which was not in the start read first (once every sentence is cut, by a first
            // SetPosition an hour in, the Length is that of the sentences, no more an estimate).
            let id = try #require(bus.property("org.lector.Lector", "/org/lector/Lector", "org.lector.Lector1", "Utterance")
                .flatMap { $0.split(separator: " ").last }.flatMap { UInt64($0.filter(\.isNumber)) })
            let hour = bus.player("SetPosition", "(objectpath '/org/lector/Lector/utterance/\(id)', int64 3600000000)")
            #expect(hour.value != nil, "\(hour)\n\(session.daemonLogs())")
            let length = try #require(bus.property("org.lector.Lector", "/org/lector/Lector", "org.lector.Lector1", "Length")
                .flatMap { $0.split(separator: " ").last }.flatMap { Int64($0.filter(\.isNumber)) })
            mark = recorder.mark()
            let moved = bus.player("SetPosition", "(objectpath '/org/lector/Lector/utterance/\(id)', int64 \(length - 2_000_000))")
            #expect(moved.value != nil, "\(moved)\n\(session.daemonLogs())")
            let sentence = try #require(bus.lectorSentence)
            let germanStart = text.unicodeScalars.count - german.unicodeScalars.count - 1
            #expect(sentence.start == germanStart, "sentence \(sentence) at the end, the German one starts at \(germanStart)")
            let language = bus.property("org.lector.Lector", "/org/lector/Lector", "org.lector.Lector1", "Language")
            #expect(language?.contains("de") == true, "\(language ?? "no language")")
            #expect(await recorder.waitForSpeech(after: mark, timeout: 5) != nil, "the end is not heard")
            _ = bus.lector("Stop")
        }
    }
}
