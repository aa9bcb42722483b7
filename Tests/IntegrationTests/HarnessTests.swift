import Foundation
import Testing

extension Integration {
    /// Self-tests of the harness: the private session, the recorder and the audio measures work on their
    /// own, with PulseAudio's and eSpeak NG's own tools (no Lector involved).
    @Suite(.privateSession)
    struct Harness {
        @Test("the session's bus and sound server are private and reachable")
        func sessionIsPrivate() async throws {
            let session = try await world(.bare)
            let info = try await session.run("pactl", ["info"], timeout: 10)
            #expect(info.status == 0, "\(info)")
            #expect(info.stdout.contains("Server String: \(session.pulseServer)"), "\(info.stdout)")
            #expect(info.stdout.contains("Default Sink: \(PrivateSession.sinkName)"), "\(info.stdout)")
            let id = try await session.run(
                "gdbus",
                ["call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
                 "--method", "org.freedesktop.DBus.GetId"], timeout: 10)
            #expect(id.status == 0, "\(id)")
            #expect(session.busAddress.contains(session.directory.path))
        }

        @Test("the monitor delivers digital silence at real-time pace when nothing plays")
        func silenceWhenNothingPlays() async throws {
            let recorder = try await world(.bare).recorder
            let mark = recorder.mark()
            let start = ContinuousClock.now
            try await Task.sleep(for: .milliseconds(600))  // the span under test: 0.6 s with nothing playing
            let elapsed = ContinuousClock.now - start
            let got = recorder.samples(from: mark)
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            let expected = seconds * Double(Recorder.sampleRate)
            #expect(abs(Double(got.count) - expected) < 0.1 * expected, "\(got.count) samples in \(seconds) s")
            let analysis = AudioAnalysis(got)
            #expect(analysis.peak == 0, "\(analysis.summary)")
            #expect(analysis.firstSpeech == nil)
            #expect(analysis.audibleDuration == 0)
        }

        @Test("a 1 s 440 Hz tone played with pacat is recorded and measured as 1 s of sound")
        func toneMeasuresOneSecond() async throws {
            let session = try await world(.bare)
            let raw = session.directory.appendingPathComponent("tone.raw")
            try encodeS16LE(sineTone(seconds: 1.0)).write(to: raw)
            let mark = session.recorder.mark()
            let played = try await session.run(
                "pacat",
                ["--playback", "--raw", "--format=s16le", "--rate=22050", "--channels=1",
                 "-d", PrivateSession.sinkName, raw.path], timeout: 20)
            #expect(played.status == 0, "\(played)")
            await session.recorder.waitForSamples(after: session.recorder.mark(), seconds: 0.3)
            let analysis = AudioAnalysis(session.recorder.samples(from: mark))
            // The sliding window reaches half a window (5 ms) past each end of the tone.
            #expect(abs(analysis.audibleDuration - 1.01) < 0.02, "\(analysis.summary)")
            let first = try #require(analysis.firstSpeech, "no sound recorded: \(analysis.summary)")
            let last = try #require(analysis.lastSpeech)
            #expect(abs(last - first - 1.0) < 0.03, "\(analysis.summary)")
            #expect(analysis.longestSilence == 0, "\(analysis.summary)")
            #expect(analysis.isSilent(from: 0, to: first) && analysis.isSilent(from: last))
        }

        @Test("speech played from a WAV file measures the same as the file itself")
        func recordedSpeechMatchesItsFile() async throws {
            let session = try await world(.bare)
            let wav = session.directory.appendingPathComponent("speech.wav")
            let made = try await session.run(
                "espeak-ng", ["-v", "en", "-w", wav.path, "The quick brown fox jumps over the lazy dog. A journey of a thousand miles."])
            try #require(made.status == 0, "\(made)")
            let file = AudioAnalysis(try WAVFile(contentsOf: wav).samples)
            let mark = session.recorder.mark()
            let played = try await session.run("paplay", ["-d", PrivateSession.sinkName, wav.path], timeout: 60)
            #expect(played.status == 0, "\(played)")
            await session.recorder.waitForSamples(after: session.recorder.mark(), seconds: 0.3)
            let recorded = AudioAnalysis(session.recorder.samples(from: mark))
            #expect(abs(recorded.audibleDuration - file.audibleDuration) < 0.005,
                    "recorded: \(recorded.summary); file: \(file.summary)")
            #expect(recorded.longestSilence < file.duration)
        }

        @Test("inserting silence into speech (a corked stream) moves the audible duration by < 10 ms a pause")
        func audibleDurationIgnoresInsertedSilence() async throws {
            let session = try await world(.bare)
            let reference = try await session.espeakReference(Lector.sentences)
            let s = reference.samples
            let gap = [Int16](repeating: 0, count: 11025)
            var interrupted: [Int16] = []
            for (i, cut) in [0, s.count / 3, 2 * s.count / 3 + 1234, s.count].adjacentPairs().enumerated() {
                if i > 0 { interrupted += gap }
                interrupted += s[cut.0..<cut.1]
            }
            let measured = AudioAnalysis(interrupted)
            #expect(abs(measured.audibleDuration - reference.audibleDuration) < 0.02,
                    "interrupted: \(measured.summary); whole: \(reference.summary)")
            #expect(measured.longestSilence >= 0.45, "\(measured.summary)")
        }
    }
}

private extension Array {
    /// Consecutive pairs: [a, b, c] → [(a, b), (b, c)].
    func adjacentPairs() -> [(Element, Element)] {
        guard count > 1 else { return [] }
        return (1..<count).map { (self[$0 - 1], self[$0]) }
    }
}
