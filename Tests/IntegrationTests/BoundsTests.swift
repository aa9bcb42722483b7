import Foundation
import Testing

extension Integration {
    /// What one client can make the daemon do with SSML: parsing costs time linear in the document, and
    /// markup cannot reach eSpeak NG's embedded commands.
    @Suite(.privateSession)
    struct Bounds {
        /// Root mean square of the windows that hold speech (full scale 32767), the loudness of what was read.
        static func speechLoudness(_ audio: AudioAnalysis) -> Double {
            let speech = audio.windowRMS.filter { $0 >= AudioAnalysis.speechRMS }
            guard !speech.isEmpty else { return 0 }
            return (speech.reduce(0) { $0 + $1 * $1 } / Double(speech.count)).squareRoot()
        }

        @Test("20,000 empty <p/> after one paragraph: Speak returns at once, status answers throughout, it is read")
        func manyEmptyParagraphs() async throws {
            let session = try PrivateSession.require()
            try await session.ensureDaemon()
            try await session.quiesce()
            let document = "<speak><p>The only paragraph of this document is read.</p>"
                + String(repeating: "<p/>", count: 20_000) + "</speak>"
            let address = session.busAddress
            let mark = session.recorder.mark()
            let speak = Task.detached { () -> (BusConnection.Reply, Double) in
                let bus = try BusConnection(address: address)
                let start = ContinuousClock.now
                let reply = bus.call("org.lector.Lector", "/org/lector/Lector", "org.lector.Lector1", "Speak",
                                     "('\(document)', @a{sv} {'ssml': <true>})", timeoutMs: 20_000)
                return (reply, seconds(ContinuousClock.now - start))
            }
            // `lector status` answers promptly while the document is handed over and parsed, and after.
            var slowest = 0.0
            var answers: [LectorStatus] = []
            let deadline = ContinuousClock.now + .seconds(6)
            repeat {
                let start = ContinuousClock.now
                let status = try await session.status()
                slowest = max(slowest, seconds(ContinuousClock.now - start))
                answers.append(status)
            } while ContinuousClock.now < deadline && answers.last?.state != "reading"
            let (reply, took) = try await speak.value
            #expect(reply.value != nil, "\(reply)\n\(session.daemonLogs())")
            #expect(took < 3, "Speak of 20,000 empty paragraphs took \(secs(took))")
            #expect(slowest < 2, "the slowest `lector status` took \(secs(slowest))")
            #expect(answers.allSatisfy { $0.exitStatus == 0 }, "\(answers)")
            #expect(answers.last?.state == "reading", "\(answers.suffix(3))")
            let heard = await session.recorder.waitForSpeech(after: mark, timeout: 5)
            #expect(heard != nil, "the paragraph was not heard\n\(session.daemonLogs())")
            try await session.quiesce()
        }

        @Test("control characters in SSML (&#1;20A …) do not change the loudness of a later plain reading")
        func controlCharactersInSSML() async throws {
            let session = try PrivateSession.require()
            try await session.ensureDaemon()
            try await session.quiesce()
            let sentence = "The quick brown fox jumps over the lazy dog."
            let (first, reference) = try await session.readAndRecord(["--lang", "en", sentence])
            try #require(first.status == 0, "\(first)")
            let loudness = Self.speechLoudness(reference)
            try #require(loudness > 1_000, "reference: \(reference.summary), loudness \(loudness)")

            // eSpeak NG's embedded commands start with U+0001: "20A" sets the amplitude to 20 (of 100),
            // "0S" … would change the rate. As character references, in text and in an attribute, plus a
            // literal control character.
            let document = """
                <speak xml:lang="en"><p>Quiet &#1;20A now &#x1;5A please.</p>\
                <p><prosody rate="&#1;20A">Still &#1;1A here</prosody> and \u{1}30A there &#133;&#27;[0m.</p></speak>
                """
            let file = session.directory.appendingPathComponent("controls.ssml")
            try document.write(to: file, atomically: true, encoding: .utf8)
            let (poisoned, _) = try await session.readAndRecord(["--file", file.path])
            #expect(poisoned.status == 0, "\(poisoned)")

            let (again, later) = try await session.readAndRecord(["--lang", "en", sentence])
            #expect(again.status == 0, "\(again)")
            let after = Self.speechLoudness(later)
            print("loudness of the same sentence: fresh \(Int(loudness)), after the SSML \(Int(after))")
            #expect(abs(after - loudness) <= 0.1 * loudness,
                    "fresh: \(Int(loudness)) (\(reference.summary)); after the SSML: \(Int(after)) (\(later.summary))")
            try await session.quiesce()
        }
    }
}

