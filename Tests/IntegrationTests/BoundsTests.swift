import GLibKit
import Foundation
import Testing

extension Integration {
    /// What one client can make the daemon do with SSML and with the queue: parsing costs time linear in the
    /// document, markup cannot reach eSpeak NG's embedded commands, and the queue is bounded.
    @Suite(.privateSession)
    struct Bounds {
        /// The daemon's queue limits (SpeechManager.maximumQueuedTexts and .maximumQueuedBytes).
        static let maximumQueuedTexts = 256
        static let maximumQueuedBytes = 32 << 20

        /// Root mean square of the windows that hold speech (full scale 32767), the loudness of what was read.
        static func speechLoudness(_ audio: AudioAnalysis) -> Double {
            let speech = audio.windowRMS.filter { $0 >= AudioAnalysis.speechRMS }
            guard !speech.isEmpty else { return 0 }
            return (speech.reduce(0) { $0 + $1 * $1 } / Double(speech.count)).squareRoot()
        }

        @Test("20,000 empty <p/> after one paragraph: Speak returns at once, status answers throughout, it is read")
        func manyEmptyParagraphs() async throws {
            let session = try await world()
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
            let session = try await world()
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

        @Test("the queue is bounded in texts and bytes, refused with QueueFull in one line, and Stop empties it")
        func queueLimits() async throws {
            let session = try await world()
            let bus = try BusConnection(address: session.busAddress)
            let pid = try Load.daemonPID(bus)
            try #require(bus.lector("Speak", "('\(Lector.veryLong)', @a{sv} {})").value != nil)

            // Count: the limit's worth of short texts is accepted, the next one refused.
            var accepted = 0
            var refusal: BusConnection.Reply?
            for i in 0..<(Self.maximumQueuedTexts + 10) {
                let reply = bus.lector("Speak", "('Queued text number \(i).', @a{sv} {'queue': <true>})")
                if reply.value != nil { accepted += 1 } else { refusal = reply; break }
            }
            #expect(accepted == Self.maximumQueuedTexts, "accepted \(accepted); \(refusal.map(String.init(describing:)) ?? "no refusal")")
            #expect(refusal?.errorName == "org.lector.Lector1.Error.QueueFull", "\(refusal.map(String.init(describing:)) ?? "none")")
            let cli = try await session.lector(["read", "--queue", "One more."])
            print("lector read --queue with a full queue: exit \(cli.status), \(cli.stderr)")
            #expect(cli.status == 1 && cli.stderr.hasPrefix("lector: ") && cli.stderr.split(separator: "\n").count == 1,
                    "\(cli)")
            #expect(bus.lectorState == "reading", "the daemon kept reading")

            // Stop empties the queue: a queued text is accepted again.
            _ = bus.lector("Stop")
            try #require(bus.lector("Speak", "('\(Lector.veryLong)', @a{sv} {})").value != nil)
            #expect(bus.lector("Speak", "('Queued after stop.', @a{sv} {'queue': <true>})").value != nil)
            _ = bus.lector("Stop")

            // Bytes: 4 MiB texts, up to the byte limit; the daemon's memory stays bounded.
            try #require(bus.lector("Speak", "('\(Lector.veryLong)', @a{sv} {})").value != nil)
            let rssBefore = Load.residentKiB(pid)
            let unit = "Many words of a long queued text are waiting for their turn here. "
            let big = String(repeating: unit, count: (4 << 20) / unit.utf8.count)
            var bytesAccepted = 0
            var bytesRefusal: BusConnection.Reply?
            for _ in 0..<(Self.maximumQueuedBytes / big.utf8.count + 16) {
                let reply = bus.call("org.lector.Lector", "/org/lector/Lector", "org.lector.Lector1", "Speak",
                                     arguments: [.string(big), .vardict(["queue": .bool(true)])], timeoutMs: 60_000)
                if reply.value != nil { bytesAccepted += 1 } else { bytesRefusal = reply; break }
            }
            let rssFull = Load.residentKiB(pid)
            print("queue of 4 MiB texts: \(bytesAccepted) accepted, RSS \(rssBefore) → \(rssFull) KiB")
            #expect(bytesAccepted == Self.maximumQueuedBytes / big.utf8.count, "accepted \(bytesAccepted)")
            #expect(bytesRefusal?.errorName == "org.lector.Lector1.Error.QueueFull",
                    "\(bytesRefusal.map(String.init(describing:)) ?? "none")")
            #expect(rssFull - rssBefore < 160 * 1024, "RSS \(rssBefore) → \(rssFull) KiB")
            #expect(bus.lectorState == "reading")
            _ = bus.lector("Stop")
            try #require(bus.lector("Speak", "('\(Lector.veryLong)', @a{sv} {})").value != nil)
            #expect(bus.lector("Speak", "('Queued after stop.', @a{sv} {'queue': <true>})").value != nil)
            try await session.quiesce()
        }
    }
}
