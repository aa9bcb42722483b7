import Foundation
import Testing

extension Integration {
    /// What people who listen for hours expect of a player: errors reach them on screen, a sleep timer.
    @Suite(.privateSession)
    struct Listening {
        /// A sentence that makes libespeak-ng 1.51 abort (see Tests/Fixtures/bad-inputs/engine-crash-apostrophes.txt).
        static let crashingSentence = String(repeating: "s'", count: 220)

        @Test("a failed reading is one desktop notification, not one per lost sentence")
        func failureNotifiesOnce() async throws {
            let session = try await world(.bare)
            let server = try FakeNotificationServer(busAddress: session.busAddress)
            defer { server.stop() }
            try await session.ensureDaemon()
            try await session.quiesce()

            let text = "First words. \(Self.crashingSentence). Middle words. \(Self.crashingSentence). Last words."
            let read = try await session.lector(["read", "--wait", text], timeout: 60)
            #expect(read.status == 0, "\(read)")
            _ = await eventually(timeout: 0.5) { !server.notifications.isEmpty }
            let seen = server.notifications
            #expect(seen.count == 1, "notifications: \(seen)\n\(session.daemonLogs())")
            if let first = seen.first {
                #expect(first.appName == "Lector")
                #expect(first.summary.contains("Lector"), "\(first)")
                #expect(!first.body.isEmpty, "\(first)")
            }

            // A good reading afterwards notifies nothing; the next failing one notifies again.
            let fine = try await session.lector(["read", "--wait", "hello"], timeout: 30)
            #expect(fine.status == 0, "\(fine)")
            _ = try await session.lector(["read", "--wait", "Again. \(Self.crashingSentence)."], timeout: 60)
            _ = await eventually(timeout: 0.5) { server.notifications.count >= 2 }
            #expect(server.notifications.count == 2, "notifications: \(server.notifications)")
            #expect(server.notifications.last?.replacesID == 1, "the second notification should replace the first")
        }

        /// The loudest 10 ms window between `from` and `to` seconds.
        static func loudest(_ audio: AudioAnalysis, from: Double, to: Double) -> Double {
            let lo = max(0, Int(from / AudioAnalysis.windowSeconds))
            let hi = min(audio.windowRMS.count, Int(to / AudioAnalysis.windowSeconds))
            return lo < hi ? audio.windowRMS[lo..<hi].max() ?? 0 : 0
        }

        @Test("sleep 8s: shown in status and MPRIS metadata, fades out over the last 5 s, pauses at the deadline; resume is full volume")
        func sleepTimerFadesAndPauses() async throws {
            let session = try await world()
            let start = session.recorder.mark()
            _ = try await session.lector(["read", Lector.veryLong])
            _ = await session.recorder.waitForSpeech(after: start, timeout: 5)
            let mark = session.recorder.mark()
            let set = try await session.lector(["sleep", "8s"])
            #expect(set.status == 0 && set.stdout.hasPrefix("sleep: until "), "\(set)")
            let status = try await session.status()
            #expect(status.fields["sleep"]?.hasPrefix("until ") == true, "\(status)")
            let metadata = try await session.run("playerctl", ["-p", "lector", "metadata"])
            #expect(metadata.stdout.contains("lector:sleepTimer"), "\(metadata)")

            let paused = try await session.waitForState("paused", timeout: 14)
            #expect(paused.state == "paused", "\(paused)\n\(session.daemonLogs())")
            await session.recorder.waitForSamples(after: mark, seconds: 9)
            let audio = AudioAnalysis(session.recorder.samples(from: mark))
            let full = Self.loudest(audio, from: 0.3, to: 2.8)
            let fading = Self.loudest(audio, from: 6.8, to: 7.9)
            #expect(full > 1_000, "no speech before the fade: \(audio.summary)")
            // 1.2 s before the end the gain is at most 0.24 (linear, on PulseAudio's cubic volume scale even less).
            #expect(fading < full * 0.5, "no fade: loudest \(full) before, \(fading) in the last second")
            #expect(audio.isSilent(from: 8.6), "still sound after the deadline: \(audio.summary)")
            let after = try await session.status()
            #expect(after.fields["sleep"] == "off", "\(after)")

            // Play continues at full volume.
            let resumeMark = session.recorder.mark()
            _ = try await session.lector(["resume"])
            await session.recorder.waitForSamples(after: resumeMark, seconds: 2.5)
            let resumed = AudioAnalysis(session.recorder.samples(from: resumeMark))
            #expect(Self.loudest(resumed, from: 0, to: 2.5) > full * 0.6, "resumed quietly: \(resumed.summary)")
            _ = try await session.lector(["stop"])
        }

        @Test("sleep paragraph: reading pauses where the next paragraph begins; sleep off cancels")
        func sleepAtParagraphEnd() async throws {
            let session = try await world()
            let text = "The first paragraph has a sentence. It has a second one too.\n\n"
                + "Second paragraph starts here and goes on. " + Lector.veryLong
            _ = try await session.lector(["read", text])
            _ = try await session.waitForState("reading", timeout: 5)
            let set = try await session.lector(["sleep", "paragraph"])
            #expect(set.status == 0 && set.stdout == "sleep: at the end of this paragraph\n", "\(set)")
            let paused = try await session.waitForState("paused", timeout: 20)
            #expect(paused.state == "paused", "\(paused)")
            #expect(paused.sentence?.hasPrefix("Second paragraph") == true, "paused at: \(paused)")

            // A timer that is cancelled does nothing.
            _ = try await session.lector(["resume"])
            _ = try await session.lector(["sleep", "6s"])
            let off = try await session.lector(["sleep", "off"])
            #expect(off.stdout == "sleep: off\n", "\(off)")
            try await Task.sleep(for: .seconds(7))  // the span under test: past the cancelled timer's 6 s
            #expect(try await session.status().state == "reading")
            let bad = try await session.lector(["sleep", "soon"])
            #expect(bad.status == 2 && bad.stderrLines.count == 1, "\(bad)")
            _ = try await session.lector(["stop"])
        }
    }
}

extension Integration.Listening {
    @Test("a file read again starts at the sentence where it was stopped; --from-start and an edited file start over")
    func resumeWhereLeftOff() async throws {
        let session = try await world()
        let paragraphs = [
            "The first paragraph is short. It has two sentences.",
            "The second paragraph is also short. It ends here.",
            "Third paragraph begins now, and it goes on. " + Lector.longRun + ".",
            "A fourth paragraph closes the text.",
        ]
        let file = session.directory.appendingPathComponent("book.txt")
        try Data(paragraphs.joined(separator: "\n\n").utf8).write(to: file)

        _ = try await session.lector(["read", "--file", file.path])
        let status = try await session.waitForSentence(containing: "Third paragraph", timeout: 30)
        #expect(status.sentence?.hasPrefix("Third paragraph") == true, "\(status)")
        try await Task.sleep(for: .milliseconds(500))  // reads 0.5 s into that sentence
        _ = try await session.lector(["stop"])

        _ = try await session.lector(["read", "--file", file.path])
        let again = try await session.waitForState("reading", timeout: 5)
        #expect(again.sentence?.hasPrefix("Third paragraph") == true, "did not continue where it stopped: \(again)")
        _ = try await session.lector(["stop"])

        _ = try await session.lector(["read", "--from-start", "--file", file.path])
        let fresh = try await session.waitForState("reading", timeout: 5)
        #expect(fresh.sentence?.hasPrefix("The first paragraph") == true, "--from-start: \(fresh)")
        _ = try await session.lector(["stop"])

        // The bookmark is for this text: an edited file starts from its beginning.
        try Data(("Edited. " + paragraphs.joined(separator: "\n\n")).utf8).write(to: file)
        _ = try await session.lector(["read", "--file", file.path])
        let edited = try await session.waitForState("reading", timeout: 5)
        #expect(edited.sentence?.hasPrefix("Edited.") == true, "edited file: \(edited)")
        _ = try await session.lector(["stop"])
    }
}
