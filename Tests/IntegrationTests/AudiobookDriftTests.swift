import Foundation
import Testing

extension Integration {
    /// Audiobooks whose audio stays where the text is: every format decoded by ffmpeg and followed against
    /// the WAV of the same rendering, on a book with as many joins as a four-hour one.
    @Suite(.privateSession)
    struct AudiobookDrift {
        /// A Markdown book of `chapters` chapters of `sentences` short numbered sentences.
        static func book(chapters: Int, sentences: Int) -> String {
            let words = ["amber", "basket", "candle", "dolphin", "ember", "falcon", "garden", "harbour", "island", "jacket",
                         "kettle", "lantern", "meadow", "needle", "orchard", "pepper", "quarry", "river", "saddle", "timber"]
            var out = ""
            var n = 0
            for chapter in 1...chapters {
                out += "# Chapter \(chapter)\n\n"
                out += (0..<sentences).map { _ in
                    n += 1
                    return "The \(words[n % 20]) \(words[(3 * n + 1) % 20]) \(words[(7 * n + 3) % 20]) number \(n)."
                }.joined(separator: " ") + "\n\n"
            }
            return out
        }

        /// The chapter starts ffprobe reads from `file`, s.
        static func marks(_ session: PrivateSession, _ file: URL) async throws -> [Double] {
            let probe = try await session.run("ffprobe", ["-v", "error", "-show_chapters", "-of", "csv=p=0", file.path])
            return probe.stdout.split(separator: "\n").compactMap { line in
                let fields = line.split(separator: ",", omittingEmptySubsequences: false)
                return fields.count > 3 ? Double(fields[3]) : nil
            }
        }

        @Test("MP3, Opus and Ogg Vorbis of a book cut in 240 segments (a four-hour book's joins): each chapter mark within 20 ms of where its first sentence is heard, the audio within 20 ms of the WAV's everywhere, as long as the WAV within 20 ms (Vorbis: and its last block), no click in a pause")
        func marksAndAudioStayInStep() async throws {
            let session = try await world(.bare)
            let dir = try Audiobooks.folder(session, "drift")
            let source = dir.appendingPathComponent("book.md")
            try Data(Self.book(chapters: 21, sentences: 10).utf8).write(to: source)
            // One-second segments: a join per second, as many as 240 minutes of audio in the standard minute ones.
            let environment = ["LECTOR_TEST_SEGMENT_SECONDS": "1"]
            for format in ["wav", "flac", "mp3", "opus", "ogg"] {
                let render = try await session.lector(["read", "--lang", "en", "--rate", "450", "--quiet", "--output",
                                                       dir.appendingPathComponent("book.\(format)").path, "--file", source.path],
                                                      timeout: 240, environment: environment)
                try #require(render.status == 0 && render.stderr.isEmpty, "\(format): \(render)")
            }
            let rate = 22_050
            let wav = try await Alignment.decode(session, dir.appendingPathComponent("book.wav"))
            #expect(wav.count > 200 * rate, "only \(wav.count / rate) s of audio")
            let exact = try await Self.marks(session, dir.appendingPathComponent("book.flac"))
            #expect(exact.count == 21, "\(exact)")
            for format in ["mp3", "opus", "ogg"] {
                let file = dir.appendingPathComponent("book.\(format)")
                let alignment = Alignment(reference: wav, decoded: try await Alignment.decode(session, file))
                let own = try await Self.marks(session, file)
                #expect(own.count == exact.count, "\(format): \(own.count) marks")
                for (mark, start) in zip(own, exact) {
                    let lag = try #require(alignment.lag(at: Int(start * Double(rate)) + 2_205), "\(format): no audio at \(start) s")
                    let heard = start + Double(lag) / Double(rate)
                    #expect(abs(mark - heard) <= 0.020, "\(format): mark at \(mark) s, its sentence heard at \(heard) s")
                }
                var worst = 0
                for at in stride(from: rate, to: wav.count - rate, by: 5 * rate) {
                    if let lag = alignment.lag(at: at), abs(lag) > abs(worst) { worst = lag }
                }
                #expect(abs(worst) <= rate / 50, "\(format): audio \(worst) samples off the WAV's")
                let padding = format == "ogg" ? 1_024 : 0
                let extra = alignment.decoded.count - wav.count
                #expect(extra >= -rate / 50 && extra <= rate / 50 + padding, "\(format): \(extra) samples longer than the WAV")
                let peak = alignment.peakInPauses()
                #expect(peak <= 1_036, "\(format): a sample of \(peak) in a pause (over -30 dBFS)")
            }
        }
    }
}
