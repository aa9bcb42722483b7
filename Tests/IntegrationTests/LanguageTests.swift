import Foundation
import GLibKit
import Testing

extension Integration {
    /// Texts given no `--lang`: the language of each paragraph is detected and read with its voice, and the
    /// language heard is reported by `lector status`, the `Sentence` signal, MPRIS `xesam:language` and the
    /// stream's `media.language`. The daemon reads a configuration file with a voice for English and a bad rate.
    @Suite(.privateSession)
    struct Languages {
        static let english = "The train to the coast was late again this morning. Nobody on the platform seemed surprised by it, and a boy fed the pigeons."
        static let german = "Der Zug nach Hamburg hatte an diesem Morgen zwanzig Minuten Verspätung. Niemand auf dem Bahnsteig schien sich darüber zu wundern."
        static let french = "Après la réunion, nous irons dîner ensemble dans le petit restaurant au coin de la rue. Le patron nous attend toujours avec une bonne soupe."
        static let three = [english, german, french].joined(separator: "\n\n") + "\n"

        /// `[voices] en` picks a voice the matcher would not (it prefers English (Great Britain) for `en`);
        /// `[speech] rate` is broken and must be reported and ignored.
        static let config = "[speech]\nrate=fast\n\n[voices]\nen=English (America)\n"

        /// Writes the configuration and makes sure a daemon (which reads it at start) runs.
        static func prepare(_ session: PrivateSession) async throws {
            let dir = session.directory.appendingPathComponent("config/lector")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            try Data(config.utf8).write(to: dir.appendingPathComponent("config"))
            try await session.ensureDaemon()
            try await session.quiesce()
        }

        /// The values of `media.language` of Lector's sink inputs now.
        static func streamLanguages(_ session: PrivateSession) async throws -> [String] {
            let listing = try await session.run("pactl", ["list", "sink-inputs"], timeout: 10).stdout
            return listing.split(separator: "\n").compactMap { line in
                let t = line.trimmingCharacters(in: .whitespaces)
                guard t.hasPrefix("media.language = \"") else { return nil }
                return String(t.dropFirst("media.language = \"".count).dropLast())
            }
        }

        /// Appends `value` to `list` unless it is nil, empty or already the last entry.
        static func note(_ value: String?, in list: inout [String]) {
            if let value, !value.isEmpty, value != list.last { list.append(value) }
        }

        @Test("three paragraphs in three languages are read with three voices; every report follows the language heard")
        func threeLanguages() async throws {
            let session = try await world(.bare)
            try await Self.prepare(session)
            let monitor = try await SignalMonitor(session: session, name: Lector.busName)
            defer { Task { await monitor.stop() } }

            let read = try await session.lector(["read", Self.three])
            #expect(read.status == 0 && read.stderr.isEmpty, "\(read)")
            var statusLanguages: [String] = [], voices: [String] = [], streamLanguages: [String] = [], mpris: [String] = []
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                // Stream and MPRIS first, status last: what was seen before a status that still says reading
                // was seen while reading (a stopped text reports its first sentence's language again).
                let stream = try await Self.streamLanguages(session)
                let metadata = try await session.run("playerctl", ["-p", "lector", "metadata", "xesam:language"], timeout: 10)
                let status = try await session.status()
                if status.state == "stopped" { break }
                Self.note(status.language, in: &statusLanguages)
                Self.note(status.fields["voice"], in: &voices)
                for language in stream { Self.note(language, in: &streamLanguages) }
                if metadata.status == 0 { Self.note(metadata.stdout.trimmingCharacters(in: .whitespacesAndNewlines), in: &mpris) }
                try await Task.sleep(for: .milliseconds(150))  // the watch's sampling period
            }
            #expect(try await session.status().state == "stopped", "not finished within 60 s")
            #expect(statusLanguages == ["en", "de", "fr"], "lector status: \(statusLanguages)\n\(session.daemonLogs())")
            #expect(voices == ["English (America)", "German", "French (France)"], "voices: \(voices)")
            #expect(streamLanguages == ["en", "de", "fr"], "media.language: \(streamLanguages)")
            #expect(mpris == ["en", "de", "fr"], "xesam:language: \(mpris)")

            // Each Sentence signal carries its language: the two sentences of each paragraph, in order.
            let sentences = monitor.signals.filter { $0.interface == Lector.interface && $0.member == "Sentence" }
            let signalled = sentences.flatMap { $0.arguments.compactMap { if case .string(let s) = $0 { s } else { nil } } }
            #expect(signalled == ["en", "en", "de", "de", "fr", "fr"], "Sentence signals: \(signalled)\n\(sentences.suffix(20))")

            // The configuration's broken rate was reported with its file, line and key, and ignored.
            let logs = session.daemonLogs(limit: 20_000)
            #expect(logs.contains("lector/config:2: [speech] rate: 'fast'"), "\(logs)")
        }

        @Test("read with no --lang on the German sample reads German")
        func germanSample() async throws {
            let session = try await world(.bare)
            try await Self.prepare(session)
            let sample = Paths.packageRoot.appendingPathComponent("Tests/LanguageDetectionTests/Fixtures/de.txt").path
            let mark = session.recorder.mark()
            let read = try await session.lector(["read", "--file", sample])
            #expect(read.status == 0, "\(read)")
            #expect(await session.recorder.waitForSpeech(after: mark, timeout: 3) != nil, "no speech")
            let status = try await session.waitForState("reading", timeout: 3)
            #expect(status.language == "de", "\(status)")
            #expect(status.fields["voice"] == "German", "\(status)")
            #expect(try await Self.streamLanguages(session) == ["de"])
            try await session.quiesce()
        }
    }
}
