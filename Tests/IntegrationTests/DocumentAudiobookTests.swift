import Foundation
import Testing

extension Integration {
    /// `lector read --output` of a document: read by the document worker as the daemon reads it, so the audio
    /// file carries the document's title, author and chapters.
    @Suite(.privateSession)
    struct DocumentAudiobooks {
        /// An EPUB made by pandoc with a title, an author and two chapters; returns its path.
        static func makeBook(_ session: PrivateSession, in dir: URL) async throws -> String {
            let md = "# Harbour\n\nThe boats came home in the evening. The nets were full.\n\n# Storm\n\nThe storm came at midnight. Waves broke on the rocks.\n"
            let source = dir.appendingPathComponent("book.md")
            try Data(md.utf8).write(to: source)
            let epub = dir.appendingPathComponent("book.epub").path
            let made = try await session.run("pandoc", [source.path, "--metadata", "title=Two Chapters", "--metadata", "author=Ann Writer",
                                                        "--metadata", "lang=en", "-o", epub])
            try #require(made.status == 0, "pandoc: \(made)")
            return epub
        }

        @Test("an EPUB rendered to Opus has its title, author and two chapters; --split chapters writes two files and an .m3u")
        func epubToOpus() async throws {
            let session = try await world(.bare)
            let dir = try Audiobooks.folder(session, "document")
            let epub = try await Self.makeBook(session, in: dir)
            let opus = dir.appendingPathComponent("book.opus")
            let render = try await session.lector(["read", "--quiet", "--output", opus.path, "--file", epub], timeout: 120)
            #expect(render.status == 0 && render.stderr.isEmpty, "\(render)")
            let tags = try await session.run("ffprobe", ["-v", "error", "-show_chapters", "-show_entries", "format_tags:stream_tags",
                                                         "-of", "default=nw=1", opus.path])
            let lower = tags.stdout.lowercased()
            #expect(lower.contains("tag:title=two chapters"), "\(tags.stdout)")
            #expect(lower.contains("tag:artist=ann writer"), "\(tags.stdout)")
            let chapters = try await session.run("ffprobe", ["-v", "error", "-show_chapters", "-of", "csv=p=0", opus.path])
            let lines = chapters.stdout.split(separator: "\n")
            #expect(lines.count == 2, "\(chapters)")
            #expect(lines.map { $0.split(separator: ",").last.map(String.init) ?? "" } == ["Harbour", "Storm"], "\(chapters)")

            let split = dir.appendingPathComponent("split.opus")
            let parts = try await session.lector(["read", "--quiet", "--split", "chapters", "--output", split.path, "--file", epub], timeout: 120)
            #expect(parts.status == 0 && parts.stderr.isEmpty, "\(parts)")
            let written = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("split") }.sorted()
            #expect(written == ["split-01.opus", "split-02.opus", "split.m3u"], "\(written)")
            let playlist = try String(contentsOf: dir.appendingPathComponent("split.m3u"), encoding: .utf8)
            #expect(playlist.contains(",Harbour\nsplit-01.opus") && playlist.contains(",Storm\nsplit-02.opus"), "\(playlist)")
        }

        @Test("a truncated EPUB rendered to a file is one line and no file")
        func brokenDocument() async throws {
            let session = try await world(.bare)
            let dir = try Audiobooks.folder(session, "broken")
            let epub = try await Self.makeBook(session, in: dir)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: epub))
            let truncated = dir.appendingPathComponent("truncated.epub")
            try bytes.prefix(bytes.count / 2).write(to: truncated)
            let out = dir.appendingPathComponent("truncated.opus")
            let render = try await session.lector(["read", "--quiet", "--output", out.path, "--file", truncated.path], timeout: 60)
            #expect(render.status == 1 && render.stderr.split(separator: "\n").count == 1 && render.stderr.contains("cannot read truncated.epub"), "\(render)")
            #expect(!FileManager.default.fileExists(atPath: out.path))
        }
    }
}
