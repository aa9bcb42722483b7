import Foundation
import Testing

extension Integration {
    /// `--output book.srt` / `book.vtt`: one cue per sentence, timed where the WAV of the same text holds it.
    @Suite(.privateSession)
    struct Subtitles {
        static let sentences = (1...12).map { "Sentence \($0) tells of the \(["harbour", "storm", "lantern"][$0 % 3]) at night." }

        /// The cues ffprobe reads from `file`: start and end, s.
        static func cues(_ session: PrivateSession, _ file: URL) async throws -> [(start: Double, end: Double)] {
            let probe = try await session.run("ffprobe", ["-v", "error", "-show_entries", "packet=pts_time,duration_time", "-of", "csv=p=0", file.path])
            #expect(probe.status == 0 && probe.stderr.isEmpty, "\(probe)")
            return probe.stdout.split(separator: "\n").compactMap { line in
                let fields = line.split(separator: ",").compactMap { Double($0) }
                return fields.count == 2 ? (fields[0], fields[0] + fields[1]) : nil
            }
        }

        @Test("SubRip and WebVTT: ffprobe reads one cue per sentence, in order, each holding speech in the WAV of the same text and the gaps between them silent; the text is each sentence's")
        func cuePerSentence() async throws {
            let session = try await world(.bare)
            let dir = try Audiobooks.folder(session, "subtitles")
            let source = dir.appendingPathComponent("book.txt")
            try Data((Self.sentences.joined(separator: " ") + "\n").utf8).write(to: source)
            for format in ["wav", "srt", "vtt"] {
                let render = try await session.lector(["read", "--lang", "en", "--quiet", "--output", dir.appendingPathComponent("book.\(format)").path,
                                                       "--file", source.path], timeout: 120)
                try #require(render.status == 0 && render.stderr.isEmpty, "\(format): \(render)")
            }
            let rate = 22_050
            let wav = try await Alignment.decode(session, dir.appendingPathComponent("book.wav"), rate: rate)
            func loudest(_ from: Double, _ to: Double) -> Int {
                let a = max(0, Int(from * Double(rate))), b = min(wav.count, Int(to * Double(rate)))
                return a < b ? wav[a..<b].map { abs(Int($0)) }.max() ?? 0 : 0
            }
            for format in ["srt", "vtt"] {
                let file = dir.appendingPathComponent("book.\(format)")
                let cues = try await Self.cues(session, file)
                #expect(cues.count == Self.sentences.count, "\(format): \(cues.count) cues")
                for (n, cue) in cues.enumerated() {
                    #expect(cue.end > cue.start && loudest(cue.start, cue.end) >= 1_000, "\(format): cue \(n + 1) \(cue) holds no speech")
                    if n + 1 < cues.count {
                        let next = cues[n + 1].start
                        #expect(next >= cue.end && loudest(cue.end + 0.02, next - 0.02) < 1_000, "\(format): speech between cue \(n + 1) and \(n + 2)")
                    }
                }
                #expect(loudest(0, (cues.first?.start ?? 0) - 0.02) < 1_000 && loudest((cues.last?.end ?? 0) + 0.02, Double(wav.count) / Double(rate)) < 1_000,
                        "\(format): speech outside the cues")
                let text = try String(contentsOf: file, encoding: .utf8)
                #expect(text.hasPrefix(format == "vtt" ? "WEBVTT\n\n1\n" : "1\n00:00:00"), "\(format): \(text.prefix(40))")
                let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
                #expect(Self.sentences.allSatisfy { lines.contains(Substring($0)) }, "\(format): \(text)")
            }
        }

        @Test("a subtitle name taken by a dangling link is refused without --force; --bitrate and --split chapters are refused in one line")
        func refusals() async throws {
            let session = try await world(.bare)
            let dir = try Audiobooks.folder(session, "subtitle-refusals")
            let source = dir.appendingPathComponent("short.txt")
            try Data("Hello there.\n".utf8).write(to: source)
            let link = dir.appendingPathComponent("taken.srt")
            try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: dir.appendingPathComponent("nowhere.srt").path)
            let taken = try await session.lector(["read", "--lang", "en", "--quiet", "--output", link.path, "--file", source.path], timeout: 60)
            #expect(taken.status == 1 && taken.stderrLines == ["lector: \(link.path) exists; --force replaces it"], "\(taken)")
            #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("nowhere.srt").path))
            let out = dir.appendingPathComponent("out.vtt").path
            let bitrate = try await session.lector(["read", "--lang", "en", "--bitrate", "32", "--output", out, "--file", source.path], timeout: 60)
            #expect(bitrate.status == 1 && bitrate.stderrLines == ["lector: --bitrate does not apply to vtt subtitles"], "\(bitrate)")
            let split = try await session.lector(["read", "--lang", "en", "--split", "chapters", "--output", out, "--file", source.path], timeout: 60)
            #expect(split.status == 1 && split.stderrLines == ["lector: --split chapters does not apply to vtt subtitles"], "\(split)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["short.txt", "taken.srt"])
        }
    }
}
