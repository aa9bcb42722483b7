import Foundation
import GLibKit
import Testing

extension Integration {
    /// Lector's MPRIS2 objects as the bus sees them: introspection, every property's type in every state,
    /// PropertiesChanged and Seeked as `gdbus monitor` records them, bursts of calls, a separate instance,
    /// OpenUri and Quit.
    @Suite(.privateSession)
    struct MPRISBus {
        /// The process ids whose parent is `pid` (the daemon's worker).
        static func children(of pid: Int32) -> [Int32] {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            return entries.compactMap(Int32.init).filter { child in
                guard let stat = try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8),
                    let close = stat.lastIndex(of: ")")
                else { return false }
                let fields = stat[stat.index(after: close)...].split(separator: " ")
                return fields.count > 2 && fields[0] != "Z" && Int32(fields[1]) == pid
            }
        }

        /// Checks GetAll of both interfaces: every property there with the spec's type, and the constant ones.
        /// Returns the Player properties.
        @discardableResult
        static func checkGetAll(_ bus: TestBus, _ when: String) throws -> [String: Variant] {
            let root = try bus.getAll(MPRIS.root)
            let player = try bus.getAll(MPRIS.player)
            for (properties, spec) in [(root, MPRIS.rootProperties), (player, MPRIS.playerProperties)] {
                #expect(Set(properties.keys) == Set(spec.keys), "\(when): GetAll has \(properties.keys.sorted())")
                for (name, value) in properties {
                    #expect(spec[name]?.type == value.typeString, "\(when): \(name) is \(value.typeString), not \(spec[name]?.type ?? "?")")
                }
            }
            #expect(root["Identity"]?.string == "Lector")
            #expect(root["DesktopEntry"]?.string == "org.lector.Lector")
            #expect(root["CanQuit"]?.bool == true && root["CanRaise"]?.bool == true && root["HasTrackList"]?.bool == false)
            #expect(root["SupportedUriSchemes"]?.strings == ["file"])
            #expect(root["SupportedMimeTypes"]?.strings?.contains("text/plain") == true)
            #expect(player["CanControl"]?.bool == true, "\(when)")
            let metadata = player["Metadata"]?.entries ?? [:]
            for (key, value) in metadata {
                #expect(MPRIS.metadataTypes[key] == value.typeString, "\(when): metadata \(key) is \(value.typeString)")
            }
            let track = metadata["mpris:trackid"]?.string ?? ""
            #expect(Variant.isObjectPath(track), "\(when): mpris:trackid \(track)")
            let position = player["Position"]?.int64 ?? -1
            let length = metadata["mpris:length"]?.int64 ?? 0
            #expect(position >= 0 && position <= length, "\(when): position \(position) of \(length)")
            return player
        }

        @Test("introspection lists every MPRIS2 method and property with the spec's types and access")
        func introspection() async throws {
            let session = try await world(.mpris)
            let xml = try session.bus().call(interface: "org.freedesktop.DBus.Introspectable", "Introspect")[0].string ?? ""
            for (interface, properties, methods) in [(MPRIS.root, MPRIS.rootProperties, MPRIS.rootMethods),
                                                     (MPRIS.player, MPRIS.playerProperties, MPRIS.playerMethods)] {
                guard let start = xml.range(of: "<interface name=\"\(interface)\">"),
                    let end = xml.range(of: "</interface>", range: start.upperBound..<xml.endIndex)
                else {
                    Issue.record("no \(interface) in the introspection: \(xml)")
                    continue
                }
                let body = String(xml[start.upperBound..<end.lowerBound])
                for (name, spec) in properties {
                    #expect(body.contains("<property type=\"\(spec.type)\" name=\"\(name)\" access=\"\(spec.access)\"")
                            || body.contains("<property name=\"\(name)\" type=\"\(spec.type)\" access=\"\(spec.access)\""),
                            "\(interface).\(name) is not \(spec.type) \(spec.access): \(body)")
                }
                for (name, signature) in methods {
                    guard let m = body.range(of: "<method name=\"\(name)\"") else {
                        Issue.record("no method \(interface).\(name)")
                        continue
                    }
                    let rest = body[m.upperBound...]
                    let methodBody = rest[..<(rest.range(of: "</method>")?.lowerBound ?? rest.range(of: "/>")!.lowerBound)]
                    let types = methodBody.components(separatedBy: "type=\"").dropFirst().map { $0.prefix { $0 != "\"" } }.joined()
                    #expect(types == signature, "\(interface).\(name) takes \(types), not \(signature)")
                }
                #expect(body.components(separatedBy: "<property ").count - 1 == properties.count, "\(interface): \(body)")
            }
            #expect(xml.contains("<signal name=\"Seeked\">") && xml.contains("type=\"x\" name=\"Position\""), "\(xml)")
        }

        @Test("--instance: a separate player with GetAll complete before any text, reading, paused, stopped and after a failed OpenUri; Quit ends it cleanly")
        func instanceGetAllOpenUriQuit() async throws {
            let session = try await world(.mpris)
            let owner = await session.nameOwner(Lector.busName)
            let daemon = try session.spawn(Paths.lectorBinary, ["daemon", "--instance"], tag: "instance")
            let name = "org.mpris.MediaPlayer2.lector.instance\(daemon.pid)"
            let bus = try session.bus(name)
            // The objects are exported before the name is owned: from the first moment the name answers,
            // GetAll works (before that, only "no such name").
            let deadline = ContinuousClock.now + .seconds(10)
            while true {
                do {
                    _ = try bus.getAll(MPRIS.player)
                    break
                } catch let error as DBusError {
                    let early = ["org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner"]
                    try #require(early.contains(error.name), "GetAll as soon as \(name) appeared: \(error)")
                }
                try #require(ContinuousClock.now < deadline && daemon.isRunning, "\(name) not owned: \(daemon.stderr)")
                try await Task.sleep(for: .milliseconds(1))  // every 1 ms: the first moment the name answers counts
            }
            #expect(await session.nameOwner(Lector.busName) == owner, "the instance took Lector's own name")
            let list = try await session.run("playerctl", ["-l"], timeout: 10)
            #expect(list.stdout.contains("lector.instance\(daemon.pid)"), "\(list)")

            var player = try Self.checkGetAll(bus, "before any text")
            #expect(player["PlaybackStatus"]?.string == "Stopped")
            #expect(player["Metadata"]?.entries?["mpris:trackid"]?.string == MPRIS.noTrack)
            for flag in ["CanPlay", "CanPause", "CanGoNext", "CanGoPrevious", "CanSeek"] {
                #expect(player[flag]?.bool == false, "\(flag) with nothing loaded")
            }
            // Play and PlayPause with nothing loaded do nothing.
            try bus.player("Play")
            try bus.player("PlayPause")
            #expect(bus.status == "Stopped")

            let file = session.directory.appendingPathComponent("open me.txt")
            try Data(Lector.sentences.utf8).write(to: file)
            try bus.player("OpenUri", [.string(file.absoluteString)])
            #expect(await bus.waitForStatus("Playing") == "Playing")
            player = try Self.checkGetAll(bus, "reading")
            let metadata = player["Metadata"]?.entries ?? [:]
            #expect(metadata["xesam:url"]?.string == file.absoluteString, "\(metadata)")
            // No more of the text than a widget shows: the sentence being read, as in the title.
            #expect(metadata["xesam:asText"]?.string == metadata["xesam:title"]?.string, "\(metadata)")
            for flag in ["CanPlay", "CanPause", "CanGoNext", "CanGoPrevious", "CanSeek"] {
                #expect(player[flag]?.bool == true, "\(flag) while reading")
            }
            try bus.player("Pause")
            player = try Self.checkGetAll(bus, "paused")
            #expect(player["PlaybackStatus"]?.string == "Paused" && player["CanPlay"]?.bool == true && player["CanPause"]?.bool == true)
            try bus.player("Stop")
            player = try Self.checkGetAll(bus, "stopped")
            #expect(player["PlaybackStatus"]?.string == "Stopped" && player["Position"]?.int64 == 0)
            #expect(player["CanPlay"]?.bool == true && player["CanPause"]?.bool == true, "a text is loaded")

            // Refused with a clear error; nothing changes.
            let big = session.directory.appendingPathComponent("big.txt")
            #expect(FileManager.default.createFile(atPath: big.path, contents: Data("a".utf8)))
            let handle = try FileHandle(forWritingTo: big)
            try handle.truncate(atOffset: UInt64(32 << 20) + 1)  // over the 32 MiB cap (sparse)
            try handle.close()
            for (uri, words) in [(session.directory.appendingPathComponent("missing.txt").absoluteString, "missing"),
                                 ("http://example.org/a.txt", "file"), (session.directory.absoluteString, "directory"),
                                 (big.absoluteString, "big")] {
                do {
                    try bus.player("OpenUri", [.string(uri)])
                    Issue.record("OpenUri \(uri) was accepted")
                } catch let error as DBusError {
                    #expect(!error.message.isEmpty, "OpenUri \(uri): \(error)")
                    _ = words
                }
                player = try Self.checkGetAll(bus, "after a failed OpenUri of \(uri)")
                #expect(player["PlaybackStatus"]?.string == "Stopped")
                #expect(player["Metadata"]?.entries?["xesam:url"]?.string == file.absoluteString)
            }
            try? FileManager.default.removeItem(at: big)

            // Quit while reading: the process ends with 0, its worker and its stream go, its name is released.
            try bus.player("Play")
            #expect(await bus.waitForStatus("Playing") == "Playing")
            let workers = Self.children(of: daemon.pid)
            #expect(workers.count == 1, "workers: \(workers)")
            try bus.call(interface: MPRIS.root, "Quit")
            #expect(await daemon.waitForExit(timeout: 5) == 0, "Quit: \(daemon.exitStatus.map(String.init) ?? "still running") \(daemon.stderr)")
            #expect(await session.nameOwner(name) == nil)
            _ = await eventually(timeout: 0.3) { !workers.contains(where: processExists) }
            #expect(!workers.contains(where: processExists), "the worker outlived Quit")
            #expect(try await session.sinkInputCount() == 0, "a stream outlived Quit")
            #expect(await session.nameOwner(Lector.busName) == owner, "the shared daemon was affected")
        }

        @Test("PropertiesChanged follows every state change on the right interface, never with Position, and is sent once (by the MPRIS name's connection only); ten seconds of steady reading send none")
        func propertiesChanged() async throws {
            let session = try await world(.mprisQuiet)
            let bus = try session.bus()
            let monitor = try await SignalMonitor(session: session)
            defer { Task { await monitor.stop() } }
            // Lector's own connection must not send the player's signals too (every client would get two).
            let lectorMonitor = try await SignalMonitor(session: session, name: Lector.busName)
            defer { Task { await lectorMonitor.stop() } }
            func expectChange(after mark: Int, _ key: String, _ value: String, _ comment: String) async {
                let signal = await monitor.wait(after: mark) { s in
                    s.path == MPRIS.path && s.changedInterface == MPRIS.player && s.changed[key]?.string == value
                }
                #expect(signal != nil, "\(comment): no PropertiesChanged with \(key) \(value): \(monitor.signals(after: mark))")
            }

            var mark = monitor.mark()
            // One long sentence, slowly: the title legitimately changes per sentence.
            let read = try await session.lector(["read", "--lang", "en", "--rate", "110", Lector.longRun])
            #expect(read.status == 0, "\(read)")
            await expectChange(after: mark, "PlaybackStatus", "Playing", "read")
            let track = await monitor.wait(after: mark) { $0.changed["Metadata"]?.entries?["xesam:asText"] != nil }
            #expect(track?.changed["Metadata"]?.entries?["mpris:trackid"]?.string?.hasPrefix("/org/lector/") == true)
            try await Task.sleep(for: .milliseconds(1500))  // reads for 1.5 s: the sentence's first refinements pass

            mark = monitor.mark()
            let positionBefore = bus.position
            try await Task.sleep(for: .seconds(10))  // the span under test: 10 s of steady reading
            let steady = monitor.signals(after: mark).filter { $0.member == "PropertiesChanged" || $0.member == "Seeked" }
            #expect(steady.isEmpty, "during steady reading: \(steady)")
            #expect(bus.status == "Playing" && bus.position - positionBefore > 9_000_000, "not reading steadily: \(bus.position)")

            mark = monitor.mark()
            try bus.player("Pause")
            await expectChange(after: mark, "PlaybackStatus", "Paused", "Pause")
            mark = monitor.mark()
            try bus.player("Play")
            await expectChange(after: mark, "PlaybackStatus", "Playing", "Play")
            mark = monitor.mark()
            try bus.set("Volume", .double(0.5))
            let volume = await monitor.wait(after: mark) { $0.changed["Volume"]?.double == 0.5 }
            #expect(volume != nil, "no PropertiesChanged for Volume")
            try bus.set("Volume", .double(1))
            mark = monitor.mark()
            try bus.set("Rate", .double(1.5))
            let rate = await monitor.wait(after: mark) { ($0.changed["Rate"]?.double ?? 0) > 1.4 }
            #expect(rate != nil, "no PropertiesChanged for Rate")
            mark = monitor.mark()
            try bus.player("Stop")
            await expectChange(after: mark, "PlaybackStatus", "Stopped", "Stop")

            // A second text: a new track id in Metadata.
            mark = monitor.mark()
            #expect(try await session.lector(["read", "--lang", "en", "A new text."]).status == 0)
            let next = await monitor.wait(after: mark) {
                let id = $0.changed["Metadata"]?.entries?["mpris:trackid"]?.string
                return id != nil && id != track?.changed["Metadata"]?.entries?["mpris:trackid"]?.string
            }
            #expect(next != nil, "no new mpris:trackid for a new text")
            #expect(await bus.waitForStatus("Stopped", timeout: 10) == "Stopped")
            _ = await monitor.wait(after: mark, timeout: 0.2) { $0.changed["PlaybackStatus"]?.string == "Stopped" }

            let doubled = lectorMonitor.signals.filter { $0.path == MPRIS.path }
            #expect(doubled.isEmpty, "the player's signals also came from org.lector.Lector: \(doubled)")
            for signal in monitor.signals where signal.member == "PropertiesChanged" && signal.path == MPRIS.path {
                let spec = signal.changedInterface == MPRIS.root ? MPRIS.rootProperties : MPRIS.playerProperties
                #expect([MPRIS.root, MPRIS.player].contains(signal.changedInterface ?? ""), "\(signal)")
                #expect(signal.changed["Position"] == nil, "Position in PropertiesChanged: \(signal)")
                for (name, value) in signal.changed {
                    #expect(spec[name]?.type == value.typeString, "\(name) in \(signal)")
                }
            }
        }

        @Test("reading several sentences: Metadata changes only with the sentence (mpris:length refinements ride along)")
        func metadataOnlyPerSentence() async throws {
            let session = try await world(.mprisQuiet)
            let bus = try session.bus()
            let monitor = try await SignalMonitor(session: session)
            defer { Task { await monitor.stop() } }
            let mark = monitor.mark()
            // Slowly (about 20 s), so that synthesis, which runs at most 10 s ahead, refines the length while
            // sentences are being heard.
            #expect(try await session.lector(["read", "--lang", "en", "--rate", "80", Lector.sentences]).status == 0)
            #expect(await bus.waitForStatus("Playing") == "Playing")
            #expect(await bus.waitForStatus("Stopped", timeout: 40) == "Stopped")
            _ = await monitor.wait(after: mark, timeout: 0.2) { $0.changed["PlaybackStatus"]?.string == "Stopped" }
            let changes = monitor.signals(after: mark).filter { $0.path == MPRIS.path && $0.member == "PropertiesChanged" }
            var titles: [String] = []
            var lastTitle: String?
            var lastStatus: String?
            // The first sentence heard publishes the length refined by its synthesis (Lector1 sends Sentence then).
            var firstHeard = 1
            for change in changes {
                let status = change.changed["PlaybackStatus"]?.string
                if let metadata = change.changed["Metadata"]?.entries {
                    let title = metadata["xesam:title"]?.string
                    if title == lastTitle && (status == nil || status == lastStatus) {
                        firstHeard -= 1
                        #expect(firstHeard >= 0, "Metadata changed with neither the sentence nor the state: \(change)")
                    }
                    if let title, title != lastTitle { titles.append(title) }
                    lastTitle = title
                }
                if let status { lastStatus = status }
            }
            #expect(titles == fourSentences || titles == fourSentences + [fourSentences[0]], "titles announced: \(titles)")
            let metadataChanges = changes.filter { $0.changed["Metadata"] != nil }.count
            #expect(metadataChanges <= fourSentences.count + 2, "\(metadataChanges) Metadata changes: \(changes)")
        }

        @Test("Pause, Pause, Play, Stop, PlayPause, Pause, Next: the states the spec requires, heard on the sink")
        func sequence() async throws {
            let session = try await world(.mprisQuiet)
            let recorder = session.recorder
            let bus = try session.bus()
            var mark = recorder.mark()
            #expect(try await session.lector(["read", "--lang", "en", Lector.sentences]).status == 0)
            try #require(await recorder.waitForSpeech(after: mark, timeout: 3) != nil)
            try await Task.sleep(for: .milliseconds(1000))  // reads for 1 s

            func heard(after mark: Int) async -> AudioAnalysis {
                await recorder.waitForSamples(after: mark, seconds: 0.6)
                return AudioAnalysis(recorder.samples(from: mark))
            }
            mark = recorder.mark()
            try bus.player("Pause")
            #expect(bus.status == "Paused")
            let paused = bus.position
            try bus.player("Pause")
            #expect(bus.status == "Paused", "Pause toggled")
            var audio = await heard(after: mark)
            #expect(audio.isSilent(from: 0.2), "Pause, Pause: \(audio.summary)")
            #expect(bus.position == paused)

            mark = recorder.mark()
            try bus.player("Play")
            #expect(bus.status == "Playing")
            audio = await heard(after: mark)
            #expect((audio.firstSpeech ?? 9) <= 0.5, "Play: \(audio.summary)")

            mark = recorder.mark()
            try bus.player("Stop")
            #expect(bus.status == "Stopped" && bus.position == 0)
            audio = await heard(after: mark)
            #expect(audio.isSilent(from: 0.2), "Stop: \(audio.summary)")

            mark = recorder.mark()
            try bus.player("PlayPause")
            #expect(bus.status == "Playing")
            #expect(bus.metadata["xesam:title"]?.string == fourSentences[0], "PlayPause from Stopped starts from the beginning")
            audio = await heard(after: mark)
            #expect((audio.firstSpeech ?? 9) <= 0.5, "PlayPause: \(audio.summary)")

            mark = recorder.mark()
            try bus.player("Pause")
            #expect(bus.status == "Paused")
            try bus.player("Next")
            #expect(bus.status == "Paused", "Next unpaused")
            #expect(bus.metadata["xesam:title"]?.string == fourSentences[1])
            let position = bus.position
            #expect(position > 1_000_000, "Next: position \(position)")
            audio = await heard(after: mark)
            #expect(audio.isSilent(from: 0.2), "Pause, Next: \(audio.summary)")
            #expect(bus.position == position, "the position moved while paused")
            #expect(try await session.sinkInputCount() == 1)
            try await session.quiesce()
        }

        @Test("50 PlayPause calls in one second leave one stream, one worker and a consistent state")
        func playPauseStorm() async throws {
            let session = try await world(.mprisQuiet)
            let recorder = session.recorder
            let bus = try session.bus()
            let daemon = try #require(session.runningDaemon)
            #expect(try await session.lector(["read", "--lang", "en", Lector.veryLong]).status == 0)
            #expect(await bus.waitForStatus("Playing") == "Playing")

            for (round, expected) in [(1, "Playing"), (2, "Paused")] {
                if round == 2 { try bus.player("Stop") }
                let start = ContinuousClock.now
                for i in 0..<50 {
                    try bus.player("PlayPause")
                    let due = start + .milliseconds(20 * (i + 1))
                    if ContinuousClock.now < due { try await Task.sleep(until: due) }  // the storm's pace: one call per 20 ms
                }
                try await Task.sleep(for: .milliseconds(500))  // the storm settles; then one stream, one worker
                #expect(bus.status == expected, "round \(round): \(bus.status)")
                #expect(try await session.sinkInputCount() == 1, "round \(round): streams")
                let workers = Self.children(of: daemon.pid)
                #expect(workers.count == 1, "round \(round): workers \(workers)")
                let mark = recorder.mark()
                await recorder.waitForSamples(after: mark, seconds: 0.6)
                let audio = AudioAnalysis(recorder.samples(from: mark))
                if expected == "Playing" {
                    #expect(audio.firstSpeech != nil, "round \(round): Playing but silent")
                    let p = bus.position
                    _ = await eventually(timeout: 0.3) { bus.position > p }
                    #expect(bus.position > p, "round \(round): Playing but the position does not move")
                } else {
                    #expect(audio.isSilent(from: 0), "round \(round): Paused but speech: \(audio.summary)")
                }
                try Self.checkGetAll(bus, "after 50 PlayPause")
            }
            // And it still reads.
            let mark = recorder.mark()
            try bus.player("Play")
            #expect(await recorder.waitForSpeech(after: mark, timeout: 2) != nil)
            try await session.quiesce()
        }
    }
}
