import Foundation
import GLibKit
import Testing

/// The sentences of `Lector.sentences`, in order.
let fourSentences = [
    "The quick brown fox jumps over the lazy dog.",
    "A journey of a thousand miles begins with a single step.",
    "Every morning the baker opens the shop before sunrise.",
    "Rain is expected in the afternoon.",
]

extension Integration {
    /// Lector as an MPRIS2 player driven by the real `playerctl` (and by Lector's own `next`, `previous`,
    /// `seek`, `position` commands), each action confirmed by what the null sink played.
    @Suite(.privateSession)
    struct MPRISControl {
        /// Reads `arguments` (replacing anything) and returns once speech is heard and the player says Playing.
        func startReading(_ session: PrivateSession, _ bus: TestBus, _ arguments: [String]) async throws {
            _ = try await world(.mprisQuiet)
            let mark = session.recorder.mark()
            let read = try await session.lector(["read", "--lang", "en"] + arguments)
            try #require(read.status == 0, "\(read)")
            try #require(await session.recorder.waitForSpeech(after: mark, timeout: 3) != nil, "no speech")
            try #require(await bus.waitForStatus("Playing") == "Playing")
        }

        /// Whether the sink stays silent from 200 ms after `mark` for `seconds`.
        func silent(_ session: PrivateSession, after mark: Int, seconds: Double = 0.6) async -> AudioAnalysis {
            await session.recorder.waitForSamples(after: mark, seconds: seconds)
            return AudioAnalysis(session.recorder.samples(from: mark))
        }

        @Test("playerctl -l lists lector; playerctl metadata shows the text, its sentence, language, voice and icon")
        func listAndMetadata() async throws {
            let session = try await world(.bare)
            let bus = try session.bus()
            try await startReading(session, bus, [Lector.sentences])
            let list = try await session.run("playerctl", ["-l"], timeout: 10)
            #expect(list.status == 0 && list.stdout.split(separator: "\n").contains("lector"), "\(list)")
            let status = try await session.playerctl(["status"])
            #expect(status.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "Playing", "\(status)")

            let all = try await session.playerctl(["metadata"])
            #expect(all.status == 0, "\(all)")
            for key in ["mpris:trackid", "mpris:length", "mpris:artUrl", "xesam:title", "xesam:asText", "xesam:language",
                        "xesam:album", "xesam:artist", "lector:voice"] {
                #expect(all.stdout.contains("lector \(key) "), "no \(key) in playerctl metadata: \(all.stdout)")
            }
            let title = try await session.playerctl(["metadata", "xesam:title"])
            #expect(title.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == fourSentences[0], "\(title)")

            let md = bus.metadata
            for (key, value) in md {
                #expect(MPRIS.metadataTypes[key] == value.typeString, "metadata \(key) is \(value.typeString): \(value)")
            }
            let track = try #require(md["mpris:trackid"]?.string)
            #expect(track.hasPrefix("/") && track != MPRIS.noTrack, "\(track)")
            #expect(md["xesam:asText"]?.string == md["xesam:title"]?.string, "\(md)")  // the sentence, not the text
            #expect(md["xesam:language"]?.string?.hasPrefix("en") == true, "\(md)")
            // What is read (its first words, for a typed text) as album and artist; the voice under lector:voice.
            let album = try #require(md["xesam:album"]?.string)
            #expect(!album.isEmpty && fourSentences.joined(separator: " ").hasPrefix(album.replacingOccurrences(of: "…", with: "")), "album: \(album)")
            #expect(md["xesam:artist"]?.strings == [album], "\(md)")
            #expect(md["lector:voice"]?.string?.isEmpty == false, "\(md)")
            #expect(md["lector:chapter"] == nil, "\(md)")
            let length = try #require(md["mpris:length"]?.int64)
            #expect(length > 4_000_000 && length < 20_000_000, "mpris:length \(length) µs")
            let art = try #require(md["mpris:artUrl"]?.string)
            #expect(art.hasPrefix("file:///") && FileManager.default.fileExists(atPath: URL(string: art)?.path ?? ""), "\(art)")

            // A new text is a new track.
            try await startReading(session, bus, [Lector.longRun])
            #expect(bus.metadata["mpris:trackid"]?.string != track)

            // playerctl open FILE: OpenUri with its file: URI.
            let file = session.directory.appendingPathComponent("opened.txt")
            try Data(fourSentences[3].utf8).write(to: file)
            let open = try await session.playerctl(["open", file.path])
            #expect(open.status == 0, "\(open)")
            #expect(await bus.waitForStatus("Playing") == "Playing")
            #expect(bus.metadata["xesam:url"]?.string == file.absoluteString, "\(bus.metadata["xesam:url"]?.text ?? "no xesam:url")")
            #expect(bus.metadata["xesam:title"]?.string == fourSentences[3])
            try await session.quiesce()
        }

        @Test("playerctl pause, pause, play, play-pause, stop, play: states as specified, silence and speech heard")
        func playPauseStop() async throws {
            let session = try await world(.bare)
            let recorder = session.recorder
            let bus = try session.bus()
            try await startReading(session, bus, [Lector.veryLong])
            try await Task.sleep(for: .milliseconds(1200))  // reads for 1.2 s

            var mark = recorder.mark()
            #expect(try await session.playerctl(["pause"]).status == 0)
            #expect(bus.status == "Paused")
            let frozen = bus.position
            #expect(frozen > 500_000, "position \(frozen)")
            var audio = await silent(session, after: mark)
            #expect(audio.isSilent(from: 0.2), "speech after pause: \(audio.summary)")
            #expect(bus.position == frozen, "the position moved while paused")

            // Pause never toggles.
            mark = recorder.mark()
            #expect(try await session.playerctl(["pause"]).status == 0)
            #expect(bus.status == "Paused")
            audio = await silent(session, after: mark)
            #expect(audio.firstSpeech == nil, "a second pause resumed: \(audio.summary)")

            mark = recorder.mark()
            #expect(try await session.playerctl(["play"]).status == 0)
            let resumed = await recorder.waitForSpeech(after: mark, timeout: 2)
            #expect(resumed != nil && resumed! <= 0.5, "speech after play after \(secs(resumed))")
            #expect(bus.status == "Playing")
            #expect(bus.position >= frozen)

            mark = recorder.mark()
            #expect(try await session.playerctl(["play-pause"]).status == 0)
            #expect(bus.status == "Paused")
            audio = await silent(session, after: mark)
            #expect(audio.isSilent(from: 0.2), "speech after play-pause: \(audio.summary)")

            mark = recorder.mark()
            #expect(try await session.playerctl(["play-pause"]).status == 0)
            #expect(bus.status == "Playing")
            let again = await recorder.waitForSpeech(after: mark, timeout: 2)
            #expect(again != nil && again! <= 0.5, "speech after play-pause after \(secs(again))")
            try await Task.sleep(for: .milliseconds(1500))  // reads for 1.5 s

            mark = recorder.mark()
            #expect(try await session.playerctl(["stop"]).status == 0)
            #expect(bus.status == "Stopped")
            #expect(bus.position == 0)
            audio = await silent(session, after: mark)
            #expect(audio.isSilent(from: 0.2), "speech after stop: \(audio.summary)")
            #expect(try await session.sinkInputCount() == 0, "a stream is left after stop")

            // Play from Stopped: the last text from its beginning.
            for command in ["play", "play-pause"] {
                mark = recorder.mark()
                #expect(try await session.playerctl([command]).status == 0)
                let replay = await recorder.waitForSpeech(after: mark, timeout: 3)
                #expect(replay != nil && replay! <= 1.0, "\(command) from Stopped: speech after \(secs(replay))")
                #expect(bus.status == "Playing")
                #expect(bus.position < 1_200_000, "\(command) from Stopped did not start at the beginning: \(bus.position) µs")
                #expect(bus.metadata["xesam:title"]?.string?.hasPrefix("this long sentence") == true)
                #expect(try await session.playerctl(["stop"]).status == 0)
            }
            try await session.quiesce()
        }

        @Test("playerctl next and previous move by sentence and keep the state; Seeked after each; silence while paused")
        func nextPrevious() async throws {
            let session = try await world(.mpris)
            let recorder = session.recorder
            let bus = try session.bus()
            let monitor = try await SignalMonitor(session: session)
            defer { Task { await monitor.stop() } }
            try await startReading(session, bus, [Lector.sentences])
            try await Task.sleep(for: .milliseconds(800))  // reads for 0.8 s
            #expect(try await session.playerctl(["pause"]).status == 0)

            var lastPosition: Int64 = 0
            for (command, sentence) in [("next", 1), ("next", 2), ("previous", 1)] {
                let signalMark = monitor.mark()
                let mark = recorder.mark()
                let result = try await session.playerctl([command])
                #expect(result.status == 0, "\(result)")
                #expect(bus.status == "Paused", "paused did not stay paused after \(command)")
                #expect(bus.metadata["xesam:title"]?.string == fourSentences[sentence], "after \(command): \(bus.metadata["xesam:title"]?.string ?? "none")")
                let position = bus.position
                #expect(position > 0 && position != lastPosition, "after \(command): \(position) µs")
                let seeked = await monitor.wait(after: signalMark) { $0.member == "Seeked" }
                #expect(seeked?.arguments[0].int64 == position, "Seeked after \(command): \(seeked?.line ?? "none"), position \(position)")
                let audio = await silent(session, after: mark, seconds: 0.5)
                #expect(audio.isSilent(from: 0.2), "speech while paused after \(command): \(audio.summary)")
                lastPosition = position
            }
            #expect(bus.position == lastPosition, "the position moved while paused")

            // Playing: next keeps playing, at the next sentence.
            var mark = recorder.mark()
            #expect(try await session.playerctl(["play"]).status == 0)
            let heard = await recorder.waitForSpeech(after: mark, timeout: 2)
            #expect(heard != nil && heard! <= 0.5, "speech after play after \(secs(heard))")
            #expect(bus.metadata["xesam:title"]?.string == fourSentences[1])
            let signalMark = monitor.mark()
            mark = recorder.mark()
            #expect(try await session.playerctl(["next"]).status == 0)
            #expect(bus.status == "Playing")
            #expect(bus.metadata["xesam:title"]?.string == fourSentences[2])
            #expect(await monitor.wait(after: signalMark) { $0.member == "Seeked" } != nil, "no Seeked after next")
            let speech = await recorder.waitForSpeech(after: mark, timeout: 2)
            #expect(speech != nil && speech! <= 0.5, "speech after next after \(secs(speech))")
            // Reading to the end sends no Seeked: only jumps do.
            let beforeEnd = monitor.mark()
            #expect(await bus.waitForStatus("Stopped", timeout: 15) == "Stopped")
            #expect(!monitor.signals(after: beforeEnd).contains { $0.member == "Seeked" }, "Seeked during normal playback")
            #expect(monitor.signals.filter { $0.member == "Seeked" }.count == 4, "\(monitor.signals.filter { $0.member == "Seeked" })")
        }

        @Test("playerctl position 2+ and 1- seek relative; before 0 clamps to 0; SetPosition ignores stale tracks and positions outside the text")
        func seekAndSetPosition() async throws {
            let session = try await world(.mpris)
            let recorder = session.recorder
            let bus = try session.bus()
            let monitor = try await SignalMonitor(session: session)
            defer { Task { await monitor.stop() } }
            try await startReading(session, bus, [Lector.longRun])
            try await Task.sleep(for: .milliseconds(1000))  // reads for 1 s
            #expect(try await session.playerctl(["pause"]).status == 0)
            let p0 = bus.position
            let tolerance: Int64 = 1_000

            func expectJump(_ arguments: [String], to expected: Int64, _ comment: String) async throws {
                let signalMark = monitor.mark()
                let result = try await session.playerctl(arguments)
                #expect(result.status == 0, "\(result)")
                let position = bus.position
                #expect(abs(position - expected) <= tolerance, "\(comment): position \(position) µs, expected \(expected)")
                #expect(bus.status == "Paused", "\(comment): paused did not stay paused")
                let seeked = await monitor.wait(after: signalMark) { $0.member == "Seeked" }
                #expect(seeked?.arguments[0].int64 == position, "\(comment): Seeked \(seeked?.line ?? "none"), position \(position)")
            }
            try await expectJump(["position", "2+"], to: p0 + 2_000_000, "position 2+")
            try await expectJump(["position", "1-"], to: p0 + 1_000_000, "position 1-")
            try await expectJump(["position", "100-"], to: 0, "position 100-")
            try await expectJump(["position", "3"], to: 3_000_000, "position 3")

            // Ignored: another track, a position past the length or before 0; past the end of the last sentence.
            let track = try #require(bus.metadata["mpris:trackid"]?.string)
            let length = try #require(bus.metadata["mpris:length"]?.int64)
            let signalMark = monitor.mark()
            for (trackID, position) in [("/org/lector/Lector/utterance/999999", Int64(1_000_000)), (MPRIS.noTrack, 1_000_000),
                                        (track, length + 1_000_000), (track, -1)] {
                try bus.player("SetPosition", [.objectPath(trackID), .int64(position)])
                #expect(abs(bus.position - 3_000_000) <= tolerance, "SetPosition(\(trackID), \(position)) was not ignored")
            }
            try bus.player("Seek", [.int64(1_000_000_000)])
            #expect(abs(bus.position - 3_000_000) <= tolerance && bus.status == "Paused", "Seek past the end of the only sentence moved")
            try await Task.sleep(for: .milliseconds(300))  // the span under test: no Seeked follows an ignored request
            #expect(!monitor.signals(after: signalMark).contains { $0.member == "Seeked" }, "Seeked for an ignored request")

            // Lector's own commands.
            let shown = try await session.lector(["position"])
            #expect(shown.status == 0 && abs((Double(shown.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1) - 3.0) < 0.01, "\(shown)")
            #expect(try await session.lector(["seek", "+2"]).status == 0)
            #expect(abs(bus.position - 5_000_000) <= tolerance, "lector seek +2: \(bus.position)")
            #expect(try await session.lector(["seek", "-1.5"]).status == 0)
            #expect(abs(bus.position - 3_500_000) <= tolerance, "lector seek -1.5: \(bus.position)")
            #expect(try await session.lector(["position", "1"]).status == 0)
            #expect(abs(bus.position - 1_000_000) <= tolerance, "lector position 1: \(bus.position)")
            let past = try await session.lector(["position", "999"])
            #expect(past.status == 1 && past.stderr.hasPrefix("lector: "), "\(past)")

            // Played from there: speech at once, and the position goes on from the target.
            let mark = recorder.mark()
            #expect(try await session.playerctl(["play"]).status == 0)
            let heard = await recorder.waitForSpeech(after: mark, timeout: 2)
            #expect(heard != nil && heard! <= 0.5, "speech after play after \(secs(heard))")
            try await Task.sleep(for: .milliseconds(1000))  // the span under test: 1 s of reading
            let later = bus.position
            #expect(later > 1_500_000 && later < 2_800_000, "1 s after playing from 1 s: \(later) µs")
            // Seeking while playing keeps playing.
            let playingMark = monitor.mark()
            #expect(try await session.playerctl(["position", "2+"]).status == 0)
            #expect(bus.status == "Playing")
            #expect(await monitor.wait(after: playingMark) { $0.member == "Seeked" } != nil)
            let afterSeek = recorder.mark()
            let speech = await recorder.waitForSpeech(after: afterSeek, timeout: 2)
            #expect(speech != nil && speech! <= 0.5, "speech after seeking while playing after \(secs(speech))")
            try await session.quiesce()
        }

        @Test("playerctl volume 0.5 changes the playing stream; 0 is silence while Playing; clamped to [0, 1]; NaN and wrong types refused")
        func volume() async throws {
            let session = try await world(.bare)
            let recorder = session.recorder
            let bus = try session.bus()
            try await startReading(session, bus, [Lector.veryLong])
            try await Task.sleep(for: .milliseconds(500))  // reads for 0.5 s

            #expect(try await session.playerctl(["volume", "0.5"]).status == 0)
            #expect(try bus.get("Volume").double == 0.5)
            let shown = try await session.playerctl(["volume"])
            #expect(Double(shown.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) == 0.5, "\(shown)")
            let inputs = try await session.run("pactl", ["list", "sink-inputs"], timeout: 10)
            let percents = inputs.stdout.split(separator: "\n").filter { $0.contains("Volume:") && $0.contains("%") }
            #expect(percents.count == 1 && !percents[0].contains("100%"), "the playing stream's volume: \(percents)")

            var mark = recorder.mark()
            try bus.set("Volume", .double(0))
            let quiet = await silent(session, after: mark, seconds: 1.0)
            #expect(quiet.isSilent(from: 0.2), "speech at volume 0: \(quiet.summary)")
            #expect(bus.status == "Playing", "volume 0 is not a pause")
            mark = recorder.mark()
            try bus.set("Volume", .double(1))
            let loud = await recorder.waitForSpeech(after: mark, timeout: 2)
            #expect(loud != nil && loud! <= 0.5, "speech at volume 1 after \(secs(loud))")

            try bus.set("Volume", .double(2))
            #expect(try bus.get("Volume").double == 1)
            try bus.set("Volume", .double(-1))
            #expect(try bus.get("Volume").double == 0)
            try bus.set("Volume", .double(0.25))
            for bad in [Variant.double(.nan), .string("loud"), .int64(1)] {
                do {
                    try bus.set("Volume", bad)
                    Issue.record("Volume \(bad) was accepted")
                } catch let error as DBusError {
                    #expect(error.name == "org.freedesktop.DBus.Error.InvalidArgs", "Volume \(bad): \(error)")
                }
            }
            #expect(try bus.get("Volume").double == 0.25)
            try bus.set("Volume", .double(1))
            try await session.quiesce()
        }

        @Test("Rate: 2.0 speaks twice as fast (the length halves), out of range is clamped, 0.0 pauses, NaN refused")
        func rate() async throws {
            let session = try await world(.bare)
            let recorder = session.recorder
            let bus = try session.bus()
            try await startReading(session, bus, [Lector.longRun])
            let minimum = try #require(try bus.get("MinimumRate").double)
            let maximum = try #require(try bus.get("MaximumRate").double)
            #expect(abs(minimum - 80.0 / 175) < 1e-9 && abs(maximum - 450.0 / 175) < 1e-9, "eSpeak NG reads 80 to 450 wpm: \(minimum) \(maximum)")
            #expect(try bus.get("Rate").double == 1)
            // The sentence is synthesized whole by now: its length as synthesized must give way to the new rate.
            try await Task.sleep(for: .seconds(1))
            let before = try #require(bus.metadata["mpris:length"]?.int64)

            let monitor = try await SignalMonitor(session: session)
            defer { Task { await monitor.stop() } }
            let signalMark = monitor.mark()
            var mark = recorder.mark()
            try bus.set("Rate", .double(2))
            // The sentence starts again at the new rate: a jump of the position, announced by Seeked.
            #expect(await monitor.wait(after: signalMark) { $0.member == "Seeked" } != nil, "no Seeked after a rate change")
            #expect(abs((try bus.get("Rate").double ?? 0) - 2) < 0.01)
            #expect(bus.status == "Playing")
            let speech = await recorder.waitForSpeech(after: mark, timeout: 2)
            #expect(speech != nil && speech! <= 0.5, "speech after the rate change after \(secs(speech))")
            _ = await eventually(timeout: 0.5) { (bus.metadata["mpris:length"]?.int64).map { Double($0) < 0.7 * Double(before) } ?? false }
            let after = try #require(bus.metadata["mpris:length"]?.int64)
            #expect(Double(after) < 0.7 * Double(before), "length at rate 2.0: \(after) µs, at 1.0: \(before) µs")

            try bus.set("Rate", .double(100))
            #expect(try bus.get("Rate").double == maximum)
            try bus.set("Rate", .double(0.01))
            #expect(try bus.get("Rate").double == minimum)
            do {
                try bus.set("Rate", .double(.nan))
                Issue.record("Rate NaN was accepted")
            } catch let error as DBusError {
                #expect(error.name == "org.freedesktop.DBus.Error.InvalidArgs", "\(error)")
            }
            mark = recorder.mark()
            try bus.set("Rate", .double(0))
            #expect(bus.status == "Paused", "Rate 0.0 must act as Pause")
            let audio = await silent(session, after: mark)
            #expect(audio.isSilent(from: 0.2), "speech after Rate 0.0: \(audio.summary)")
            try await session.quiesce()
        }

        @Test("lector next, previous and status --follow")
        func lectorCommands() async throws {
            let session = try await world(.bare)
            let bus = try session.bus()
            try await startReading(session, bus, [Lector.sentences])
            let follow = try session.spawn(Paths.lectorBinary, ["status", "--follow"], tag: "follow")
            _ = await eventually(timeout: 5) { follow.stdout.contains("reading: ") }
            #expect(try await session.lector(["pause"]).status == 0)
            #expect(try await session.lector(["next"]).status == 0)
            #expect(bus.metadata["xesam:title"]?.string == fourSentences[1] && bus.status == "Paused")
            #expect(try await session.lector(["next"]).status == 0)
            #expect(try await session.lector(["previous"]).status == 0)
            #expect(bus.metadata["xesam:title"]?.string == fourSentences[1] && bus.status == "Paused")
            #expect(try await session.lector(["resume"]).status == 0)
            #expect(await bus.waitForStatus("Stopped", timeout: 15) == "Stopped")
            // The end is printed once the daemon's PropertiesChanged reaches --follow: wait for it, then end it.
            _ = await eventually(timeout: 5) {
                follow.stdout.split(separator: "\n").last?.hasPrefix("stopped") == true
            }
            follow.signal(SIGTERM)
            #expect(await follow.waitForExit(timeout: 5) == 0, "status --follow: \(follow.stderr)")
            let lines = follow.stdout.split(separator: "\n").map(String.init)
            for expected in ["reading: \(fourSentences[0])", "paused: \(fourSentences[1])", "paused: \(fourSentences[2])",
                             "reading: \(fourSentences[1])", "reading: \(fourSentences[3])"] {
                #expect(lines.contains(expected), "no line '\(expected)' in: \(lines)")
            }
            #expect(lines.last?.hasPrefix("stopped") == true, "\(lines)")
        }
    }
}
