import Foundation
import Testing

extension Integration {
    /// SSML documents, plain text that looks like markup, and live rate changes, heard on the null sink.
    @Suite(.privateSession)
    struct MarkupAndRate {
        static let document = """
            <?xml version="1.0" encoding="UTF-8"?>
            <speak version="1.1" xmlns="http://www.w3.org/2001/10/synthesis" xml:lang="en">
              <p>The first part is read <prosody rate="slow" pitch="high">slowly and high</prosody>.</p>
              <break time="1s"/>
              <p>The second part <audio src="/usr/share/sounds/alsa/Front_Center.wav">follows</audio> the pause.</p>
            </speak>
            """

        /// Renders `arguments` with `lector read --output` (no daemon, no sound server) and analyses the file.
        private func render(_ session: PrivateSession, _ arguments: [String]) async throws -> AudioAnalysis {
            let wav = session.directory.appendingPathComponent("render-\(UUID().uuidString).wav")
            defer { try? FileManager.default.removeItem(at: wav) }
            let result = try await session.lector(["read", "--output", wav.path] + arguments, timeout: 60)
            guard result.status == 0 else { throw HarnessError("render failed: \(result)") }
            return AudioAnalysis(try WAVFile(contentsOf: wav).samples)
        }

        @Test("an SSML file with prosody and a 1 s break is read: the break is a ~1 s silence")
        func ssmlDocumentIsRead() async throws {
            let session = try await world()
            let file = session.directory.appendingPathComponent("document.ssml")
            try Self.document.write(to: file, atomically: true, encoding: .utf8)
            let (read, audio) = try await session.readAndRecord(["--file", file.path])
            #expect(read.status == 0 && read.stderr.isEmpty, "\(read)")
            #expect(audio.longestSilence >= 0.95 && audio.longestSilence <= 1.6, "\(audio.summary)")
            #expect(audio.audibleDuration > 2.5, "\(audio.summary)")

            // Without the break, no such silence: it comes from <break>, not from the paragraphs.
            let unbroken = Self.document.replacingOccurrences(of: #"<break time="1s"/>"#, with: "")
            let (plain, plainAudio) = try await session.readAndRecord(["--ssml", unbroken])
            #expect(plain.status == 0, "\(plain)")
            #expect(plainAudio.longestSilence < 0.7, "\(plainAudio.summary)")
            #expect(abs(plainAudio.audibleDuration - audio.audibleDuration) <= 0.15,
                    "with break: \(audio.summary); without: \(plainAudio.summary)")

            // The markup is not read aloud: as long as the text content read as plain text, give or take
            // the slow prosody.
            let content = try await render(session, ["--lang", "en",
                "The first part is read slowly and high. The second part follows the pause."])
            #expect(audio.audibleDuration >= content.audibleDuration - 0.1
                    && audio.audibleDuration <= content.audibleDuration + 1.5,
                    "SSML: \(audio.summary); text content: \(content.summary)")
            // Offline rendering reads it alike.
            let rendered = try await render(session, ["--file", file.path])
            #expect(abs(rendered.audibleDuration - audio.audibleDuration) <= 0.1, "\(rendered.summary) vs \(audio.summary)")
            #expect(rendered.longestSilence >= 0.95, "\(rendered.summary)")

            // MPRIS OpenUri of the same file reads it as SSML too.
            let mark = session.recorder.mark()
            let open = try await session.run("gdbus", [
                "call", "--session", "--dest", "org.mpris.MediaPlayer2.lector", "--object-path", "/org/mpris/MediaPlayer2",
                "--method", "org.mpris.MediaPlayer2.Player.OpenUri", file.absoluteURL.absoluteString,
            ])
            #expect(open.status == 0, "\(open)")
            let done = try await session.waitForState("stopped", timeout: 20)
            #expect(done.state == "stopped", "\(done)")
            await session.recorder.waitForSamples(after: session.recorder.mark(), seconds: 0.4)
            let opened = AudioAnalysis(session.recorder.samples(from: mark))
            #expect(abs(opened.audibleDuration - audio.audibleDuration) <= 0.1, "\(opened.summary) vs \(audio.summary)")
            #expect(opened.longestSilence >= 0.95, "\(opened.summary)")
        }

        @Test("malformed SSML and DOCTYPEs are one-line errors with line and column, from read and from Speak")
        func malformedSSMLIsRefused() async throws {
            let session = try await world(.daemon)
            let malformed = "<speak>\n  <p>Hello <emphasis>world</p>\n</speak>"
            for extra in [[], ["--output", session.directory.appendingPathComponent("never.wav").path]] {
                let result = try await session.lector(["read", "--ssml"] + extra + [malformed])
                #expect(result.status == 1, "\(result)")
                #expect(result.stderrLines.count == 1, "\(result)")
                #expect(result.stderr.hasPrefix("lector: malformed SSML: line 2, column "), "\(result)")
            }
            let doctype = session.directory.appendingPathComponent("entity.ssml")
            try "<?xml version=\"1.0\"?>\n<!DOCTYPE speak [<!ENTITY x SYSTEM \"file:///etc/hostname\">]>\n<speak>&x;</speak>"
                .write(to: doctype, atomically: true, encoding: .utf8)
            let refused = try await session.lector(["read", "--file", doctype.path])
            #expect(refused.status == 1, "\(refused)")
            #expect(refused.stderr.hasPrefix("lector: malformed SSML: line 2, column 1: DOCTYPE"), "\(refused)")

            // The shared bad input: detected as SSML by its name, refused with its position, the daemon unharmed.
            let shared = Paths.badInputs.appendingPathComponent("malformed.ssml")
            if FileManager.default.fileExists(atPath: shared.path) {
                let result = try await session.lector(["read", "--file", shared.path])
                #expect(result.status == 1 && result.stderrLines.count == 1, "\(result)")
                #expect(result.stderr.hasPrefix("lector: malformed SSML: line 1, column "), "\(result)")
            }
            let notSSML = try await session.lector(["read", "--ssml", "Just words."])
            #expect(notSSML.status == 1, "\(notSSML)")
            #expect(notSSML.stderr == "lector: malformed SSML: line 1, column 1: an SSML document starts with <speak> (after an optional XML prolog)\n",
                    "\(notSSML)")

            let call = try await session.run("gdbus", [
                "call", "--session", "--dest", Lector.busName, "--object-path", Lector.objectPath,
                "--method", Lector.interface + ".Speak", malformed, "{'ssml': <true>}",
            ])
            #expect(call.status != 0, "\(call)")
            #expect(call.stderr.contains("org.lector.Lector1.Error.MalformedSSML"), "\(call)")
            #expect(call.stderr.contains("line 2, column "), "\(call)")
            let status = try await session.status()
            #expect(status.state != "reading", "\(status)")
        }

        @Test("plain text with <, > and & speaks every word, as text")
        func markupCharactersAreText() async throws {
            let session = try await world()
            let text = "a < b & c > d"
            let rendered = try await render(session, ["--lang", "en", text])
            // eSpeak NG reads "&" as "and" and "<", ">" as pauses: the words of "a b and c d".
            let words = try await render(session, ["--lang", "en", "a b and c d"])
            #expect(abs(rendered.audibleDuration - words.audibleDuration) <= 0.1,
                    "\(text): \(rendered.summary); a b and c d: \(words.summary)")
            let (read, played) = try await session.readAndRecord(["--lang", "en", text])
            #expect(read.status == 0, "\(read)")
            #expect(abs(played.audibleDuration - rendered.audibleDuration) <= 0.05,
                    "played: \(played.summary); rendered: \(rendered.summary)")
            // Markup look-alikes are read too, not dropped as tags.
            let tags = try await render(session, ["--lang", "en", "one <two> three &amp; four"])
            let tagWords = try await render(session, ["--lang", "en", "one two three and amp four"])
            #expect(tags.audibleDuration >= tagWords.audibleDuration - 0.15, "\(tags.summary) vs \(tagWords.summary)")
        }

        @Test("lector rate 400 during a long sentence speeds up its rest, without reading it again from its start")
        func rateChangeIsHeardAtTheNextWord() async throws {
            let session = try await world()
            let recorder = session.recorder
            let slow = try await render(session, ["--lang", "en", Lector.longRun])
            let fast = try await render(session, ["--lang", "en", "--rate", "400", Lector.longRun])

            let mark = recorder.mark()
            let reader = try session.spawn(Paths.lectorBinary, ["read", "--wait", "--lang", "en", Lector.longRun], tag: "rate-read")
            let first = try #require(await recorder.waitForSpeech(after: mark, timeout: 3), "no speech")
            try await Task.sleep(for: .milliseconds(3000))  // reads for 3 s
            let before = try await session.status()
            let change = try await session.lector(["rate", "400"])
            #expect(change.status == 0 && change.stderr.isEmpty, "\(change)")
            let changedAt = Double(recorder.mark() - mark) / Double(AudioAnalysis.sampleRate) - first
            let after = try await session.status()
            #expect(after.state == "reading", "\(after)")
            #expect((after.position ?? 0) >= (before.position ?? 0) - 0.06,
                    "position went back: \(secs(before.position)) then \(secs(after.position))")
            let status = await reader.waitForExit(timeout: 30)
            #expect(status == 0, "lector read --wait: \(status.map(String.init) ?? "still running") \(reader.stderr)")
            await recorder.waitForSamples(after: recorder.mark(), seconds: 0.4)
            let heard = AudioAnalysis(recorder.samples(from: mark))
            let prefix = min(changedAt, slow.audibleDuration)
            // The rest at 400 wpm: what remained of the sentence, at the fast rendering's pace.
            let expected = prefix + fast.audibleDuration * max(0, 1 - prefix / slow.audibleDuration)
            let context = "heard \(heard.summary); changed after \(secs(changedAt)); expected ≈ \(secs(expected)); "
                + "175 wpm \(slow.summary); 400 wpm \(fast.summary)\n\(session.daemonLogs())"
            #expect(heard.audibleDuration < slow.audibleDuration - 2, "\(context)")
            #expect(heard.audibleDuration < prefix + fast.audibleDuration - 0.7, "read again from its start? \(context)")
            #expect(heard.audibleDuration > fast.audibleDuration, "\(context)")
            #expect(abs(heard.audibleDuration - expected) < 1.2, "\(context)")
        }

        @Test("in SSML, a rate change is heard from the next unit; lector pitch works alike; out of range is a usage error")
        func rateChangeInSSMLAndPitch() async throws {
            let session = try await world()
            let recorder = session.recorder
            let document = "<speak><p>\(Lector.longRun)</p><p>\(Lector.longRun)</p></speak>"
            let slow = try await render(session, ["--lang", "en", "--ssml", document])
            let fast = try await render(session, ["--lang", "en", "--rate", "400", "--ssml", document])

            let mark = recorder.mark()
            let reader = try session.spawn(Paths.lectorBinary, ["read", "--wait", "--lang", "en", "--ssml", document], tag: "ssml-rate")
            try #require(await recorder.waitForSpeech(after: mark, timeout: 3) != nil, "no speech")
            try await Task.sleep(for: .milliseconds(2000))  // reads for 2 s
            #expect(try await session.lector(["rate", "400"]).status == 0)
            #expect(try await session.lector(["pitch", "80"]).status == 0)
            let status = await reader.waitForExit(timeout: 60)
            #expect(status == 0, "lector read --wait: \(status.map(String.init) ?? "still running") \(reader.stderr)")
            await recorder.waitForSamples(after: recorder.mark(), seconds: 0.4)
            let heard = AudioAnalysis(recorder.samples(from: mark))
            // The first unit at 175 wpm, whole; the second at 400 wpm.
            let expected = slow.audibleDuration / 2 + fast.audibleDuration / 2
            #expect(abs(heard.audibleDuration - expected) < 1.0,
                    "heard \(heard.summary); expected ≈ \(secs(expected)); 175 wpm \(slow.summary); 400 wpm \(fast.summary)")

            for bad in [["rate", "1000"], ["rate", "fast"], ["pitch", "100"], ["pitch"]] {
                let result = try await session.lector(bad)
                #expect(result.status == 2 && result.stderrLines.count == 1, "\(bad): \(result)")
            }
        }

        @Test("lector voice de switches the voice from the next word; the language is reported; the sentence is not read again")
        func voiceChange() async throws {
            let session = try await world()
            let recorder = session.recorder
            let english = try await render(session, ["--lang", "en", Lector.longRun])
            let mark = recorder.mark()
            let reader = try session.spawn(Paths.lectorBinary, ["read", "--wait", "--lang", "en", Lector.longRun], tag: "voice-read")
            try #require(await recorder.waitForSpeech(after: mark, timeout: 3) != nil, "no speech")
            try await Task.sleep(for: .milliseconds(2000))  // reads for 2 s
            let before = try await session.status()
            let change = try await session.lector(["voice", "de"])
            #expect(change.status == 0 && change.stderr.isEmpty, "\(change)")
            let after = try await session.status()
            #expect(after.state == "reading" && after.language?.hasPrefix("de") == true, "\(after)")
            #expect(after.fields["voice"] != before.fields["voice"], "\(before) then \(after)")
            #expect((after.position ?? 0) >= (before.position ?? 0), "\(before) then \(after)")
            let unknown = try await session.lector(["voice", "qqq"])
            #expect(unknown.status == 1 && unknown.stderr.hasPrefix("lector: unknown voice"), "\(unknown)")
            let status = await reader.waitForExit(timeout: 60)
            #expect(status == 0, "lector read --wait: \(status.map(String.init) ?? "still running") \(reader.stderr)")
            await recorder.waitForSamples(after: recorder.mark(), seconds: 0.4)
            let heard = AudioAnalysis(recorder.samples(from: mark))
            // German reads English words at about the same pace: not the sentence twice.
            #expect(heard.audibleDuration < english.audibleDuration * 1.5, "heard \(heard.summary); English \(english.summary)")
        }

        @Test("MPRIS Rate 2.0 while paused keeps the pause and the position, and speeds up what follows")
        func mprisRateWhilePaused() async throws {
            let session = try await world()
            let recorder = session.recorder
            let start = recorder.mark()
            #expect(try await session.lector(["read", "--lang", "en", Lector.longRun]).status == 0)
            try #require(await recorder.waitForSpeech(after: start, timeout: 3) != nil, "no speech")
            try await Task.sleep(for: .milliseconds(1500))  // reads for 1.5 s
            #expect(try await session.lector(["pause"]).status == 0)
            let paused = try await session.status()
            let set = try await session.run("gdbus", [
                "call", "--session", "--dest", "org.mpris.MediaPlayer2.lector", "--object-path", "/org/mpris/MediaPlayer2",
                "--method", "org.freedesktop.DBus.Properties.Set", "org.mpris.MediaPlayer2.Player", "Rate", "<2.0>",
            ])
            #expect(set.status == 0, "\(set)")
            let still = try await session.status()
            #expect(still.state == "paused", "\(still)")
            #expect(still.position == paused.position, "\(paused) then \(still)")
            let rate = try await session.run("gdbus", [
                "call", "--session", "--dest", "org.mpris.MediaPlayer2.lector", "--object-path", "/org/mpris/MediaPlayer2",
                "--method", "org.freedesktop.DBus.Properties.Get", "org.mpris.MediaPlayer2.Player", "Rate",
            ])
            #expect(rate.stdout.contains("2.0"), "\(rate)")
            let resumeMark = recorder.mark()
            #expect(try await session.lector(["resume"]).status == 0)
            let again = await recorder.waitForSpeech(after: resumeMark, timeout: 2)
            #expect(again != nil && again! <= 0.5, "speech after resume after \(secs(again))")
            try await session.quiesce()
        }
    }
}
