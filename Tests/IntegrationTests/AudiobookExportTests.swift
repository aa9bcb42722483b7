import Foundation
import Testing

extension Integration {
    /// Exports that fail or are stopped leave nothing, names in the output folder are never followed for
    /// writing, and tags fit the format.
    @Suite(.privateSession)
    struct AudiobookExports {
        /// A Markdown book: a first chapter of one sentence, then `long` sentences in a second, and a third.
        static func book(_ dir: URL, long: Int) throws -> URL {
            let sentences = (1...long).map { "Sentence number \($0) of the long chapter is here." }.joined(separator: " ")
            let url = dir.appendingPathComponent("book.md")
            try Data("# First\n\nA short start.\n\n# Second\n\n\(sentences)\n\n# Third\n\nThe end.\n".utf8).write(to: url)
            return url
        }

        /// The names in `dir`, but `keep`.
        static func left(_ dir: URL, but keep: Set<String> = []) throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { !keep.contains($0) }.sorted()
        }

        @Test("SIGINT or SIGTERM during --split chapters, once the first chapter is finished, leaves no chapter, no playlist and no hidden file", arguments: [SIGINT, SIGTERM])
        func interruptedSplit(signal: Int32) async throws {
            let session = try await world(.bare)
            let dir = try Audiobooks.folder(session, "split-\(signal)")
            let source = try Self.book(dir, long: 300)
            let render = try session.spawn(Paths.lectorBinary, ["read", "--lang", "en", "--split", "chapters", "--output",
                                                                dir.appendingPathComponent("split.opus").path, "--file", source.path],
                                           tag: "split-\(signal)")
            // The second chapter's hidden file appears once the first chapter is complete.
            let second = await eventually(timeout: 60, every: .milliseconds(20)) {
                ((try? Self.left(dir)) ?? []).contains { $0.hasPrefix(".split-2.opus.") || $0.hasPrefix(".split-02.opus.") }
            }
            #expect(second, "the second chapter was never begun: \(render.stderr)")
            render.signal(signal)
            let status = await render.waitForExit(timeout: 30)
            #expect(status == 130, "status \(String(describing: status)): \(render.stderr)")
            #expect(render.stderr == "lector: interrupted; no file written\n", "\(render.stderr)")
            let left = try Self.left(dir, but: ["book.md"])
            #expect(left.isEmpty, "\(left)")
        }

        @Test("a full disk during --split chapters stops with one line and leaves none of the chapters (a 256 KiB tmpfs; skipped where mount is not allowed)")
        func fullDiskSplit() async throws {
            let session = try await world(.bare)
            let dir = try Audiobooks.folder(session, "split-full")
            let source = try Self.book(dir, long: 12)
            let out = dir.appendingPathComponent("out")
            try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
            let mount = try await session.run("mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", out.path])
            guard mount.status == 0 else { return }
            // The first chapter's WAV (~2 s, ~90 KB) fits; the second (~40 s) does not.
            let render = try await session.lector(["read", "--lang", "en", "--quiet", "--split", "chapters", "--output",
                                                   out.appendingPathComponent("book.wav").path, "--file", source.path], timeout: 120)
            let left = try Self.left(out)
            _ = try await session.run("umount", [out.path])
            #expect(render.status == 1 && render.stderrLines.count == 1 && render.stderr.contains("No space left on device"), "\(render)")
            #expect(left.isEmpty, "\(left)")
        }

        @Test("a playlist name taken by a link: a dangling one is refused without --force (nothing made where it points); with --force a link is replaced, its target untouched")
        func linksNotFollowed() async throws {
            let session = try await world(.bare)
            let dir = try Audiobooks.folder(session, "links")
            let outside = try Audiobooks.folder(session, "outside")
            let source = try Self.book(dir, long: 2)
            let playlist = dir.appendingPathComponent("split.m3u")
            try FileManager.default.createSymbolicLink(atPath: playlist.path, withDestinationPath: outside.appendingPathComponent("made.m3u").path)
            let arguments = ["read", "--lang", "en", "--quiet", "--split", "chapters", "--output", dir.appendingPathComponent("split.opus").path,
                             "--file", source.path]
            let refused = try await session.lector(arguments, timeout: 120)
            #expect(refused.status == 1 && refused.stderrLines == ["lector: \(playlist.path) exists; --force replaces it"], "\(refused)")
            let made = try Self.left(outside)
            #expect(made.isEmpty, "\(made)")

            let target = outside.appendingPathComponent("target.txt")
            try Data("keep".utf8).write(to: target)
            try FileManager.default.removeItem(at: playlist)
            try FileManager.default.createSymbolicLink(atPath: playlist.path, withDestinationPath: target.path)
            let chapter = dir.appendingPathComponent("split-01.opus")
            try FileManager.default.createSymbolicLink(atPath: chapter.path, withDestinationPath: target.path)
            let forced = try await session.lector(arguments + ["--force"], timeout: 120)
            #expect(forced.status == 0 && forced.stderr.isEmpty, "\(forced)")
            #expect(try Data(contentsOf: target) == Data("keep".utf8))
            for link in [playlist, chapter] {
                let type = try FileManager.default.attributesOfItem(atPath: link.path)[.type] as? FileAttributeType
                #expect(type == .typeRegular, "\(link.lastPathComponent) is \(String(describing: type))")
            }
            #expect(try String(contentsOf: playlist, encoding: .utf8).hasPrefix("#EXTM3U\n"))
            #expect(try Self.left(outside) == ["target.txt"])
        }

        @Test("17 MB of title and author: one warning, and a FLAC that flac -t accepts, an MP3 and Opus that ffprobe reads, the title cut to 4 KiB")
        func hugeTags() async throws {
            let session = try await world(.bare)
            let dir = try Audiobooks.folder(session, "tags")
            let page = dir.appendingPathComponent("big.html")
            let title = String(repeating: "A", count: 9 << 20), author = String(repeating: "B", count: 8 << 20)
            try Data("<html><head><title>\(title)</title><meta name=\"author\" content=\"\(author)\"></head><body><p>Hello there. This is short.</p></body></html>".utf8)
                .write(to: page)
            for format in ["flac", "mp3", "opus"] {
                let file = dir.appendingPathComponent("big.\(format)")
                let render = try await session.lector(["read", "--lang", "en", "--quiet", "--output", file.path, "--file", page.path], timeout: 180,
                                                      environment: ["LECTOR_TEST_DOCUMENT_TIMEOUT_MS": "120000"])
                #expect(render.status == 0 && render.stderrLines.count == 1 && render.stderr.contains("warning: the title, authors or chapter titles were too long"),
                        "\(format): \(render)")
                // Ogg keeps its comments on the stream, the others on the file.
                let probe = try await session.run("ffprobe", ["-v", "error", "-show_entries", "format_tags=title:stream_tags=title", "-of",
                                                              "default=nw=1:nk=1", file.path])
                #expect(probe.status == 0 && probe.stdout.trimmingCharacters(in: .newlines) == String(repeating: "A", count: 4_096),
                        "\(format): \(probe.stdout.count) characters, \(probe.stderr)")
            }
            let flac = try await session.run("flac", ["-t", "-s", dir.appendingPathComponent("big.flac").path])
            #expect(flac.status == 0 && flac.stderr.isEmpty, "\(flac)")
        }

        @Test("--split chapters: each file has the book as album, its track number and the total; the playlist gives each file's duration")
        func splitTags() async throws {
            let session = try await world(.bare)
            let dir = try Audiobooks.folder(session, "split-tags")
            let epub = try await DocumentAudiobooks.makeBook(session, in: dir)
            for format in ["opus", "mp3", "flac"] {
                let render = try await session.lector(["read", "--quiet", "--force", "--split", "chapters", "--output",
                                                       dir.appendingPathComponent("split.\(format)").path, "--file", epub], timeout: 120)
                #expect(render.status == 0 && render.stderr.isEmpty, "\(format): \(render)")
                for (n, chapter) in ["Harbour", "Storm"].enumerated() {
                    let file = dir.appendingPathComponent("split-0\(n + 1).\(format)")
                    let tags = try await session.run("ffprobe", ["-v", "error", "-show_entries", "format_tags:stream_tags", "-of", "default=nw=1", file.path])
                    let lower = tags.stdout.lowercased()
                    #expect(lower.contains("tag:album=two chapters") && lower.contains("tag:title=\(chapter.lowercased())"), "\(format): \(tags.stdout)")
                    #expect(lower.contains("tag:track=\(n + 1)/2\n") || (lower.contains("tag:track=\(n + 1)\n") && lower.contains("tag:tracktotal=2\n")),
                            "\(format): \(tags.stdout)")
                    #expect(!lower.contains("disc"), "\(format): \(tags.stdout)")
                }
            }
            let playlist = try String(contentsOf: dir.appendingPathComponent("split.m3u"), encoding: .utf8)
            let durations = playlist.split(separator: "\n").filter { $0.hasPrefix("#EXTINF:") }
                .compactMap { Int($0.dropFirst(8).prefix { $0 != "," }) }
            #expect(durations.count == 2 && durations.allSatisfy { $0 >= 2 }, "\(playlist)")
        }
    }
}
