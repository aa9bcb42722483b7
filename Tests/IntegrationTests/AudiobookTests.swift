import Foundation
import Testing

extension Integration {
    /// `lector read --output` as an audiobook maker: every format decoded back by an independent tool, the
    /// same PCM from any number of workers, progress on a terminal only, and no partial file ever.
    @Suite(.privateSession)
    struct Audiobooks {
        /// About 25 s of speech in 12 sentences.
        static let text = Array(repeating: Lector.sentences, count: 3).joined(separator: " ")

        /// A fresh folder for one test's files.
        static func folder(_ session: PrivateSession, _ name: String) throws -> URL {
            let url = session.directory.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            return url
        }

        /// `ffprobe`'s duration of a file, s (the stream's when the container gives none).
        static func duration(_ session: PrivateSession, _ file: URL) async throws -> Double? {
            let probe = try await session.run("ffprobe", ["-v", "error", "-show_entries", "format=duration:stream=duration",
                                                          "-of", "default=nw=1:nk=1", file.path])
            return probe.stdout.split(separator: "\n").compactMap { Double($0) }.max()
        }

        @Test("every format is written with title and language, decodes with ffprobe, opusinfo, flac -t and sndfile-info, and lasts as long as the WAV within 1 %")
        func formats() async throws {
            let session = try await world(.bare)
            let dir = try Self.folder(session, "formats")
            for format in ["wav", "flac", "ogg", "opus", "mp3"] {
                let render = try await session.lector(["read", "--lang", "en", "--quiet", "--output",
                                                       dir.appendingPathComponent("book.\(format)").path, Self.text], timeout: 120)
                #expect(render.status == 0 && render.stderr.isEmpty, "\(format): \(render)")
            }
            let wav = try #require(await Self.duration(session, dir.appendingPathComponent("book.wav")))
            #expect(wav > 15, "WAV of \(wav) s")
            for format in ["flac", "ogg", "opus", "mp3"] {
                let file = dir.appendingPathComponent("book.\(format)")
                let seconds = try #require(await Self.duration(session, file), "\(format) not decoded")
                #expect(abs(seconds - wav) <= wav * 0.01, "\(format): \(seconds) s, WAV \(wav) s")
                let tags = try await session.run("ffprobe", ["-v", "error", "-show_entries", "format_tags:stream_tags",
                                                             "-of", "default=nw=1", file.path])
                #expect(tags.stdout.lowercased().contains("tag:title=the quick brown fox"), "\(format): \(tags.stdout)")
                #expect(tags.stdout.lowercased().contains("tag:language=en"), "\(format): \(tags.stdout)")
            }
            let opus = try await session.run("opusinfo", [dir.appendingPathComponent("book.opus").path])
            #expect(opus.status == 0 && opus.stdout.contains("Original sample rate: 22050 Hz"), "\(opus)")
            let flac = try await session.run("flac", ["-t", "-s", dir.appendingPathComponent("book.flac").path])
            #expect(flac.status == 0, "\(flac)")
            let info = try await session.run("sndfile-info", [dir.appendingPathComponent("book.wav").path])
            #expect(info.stdout.contains("Sample Rate : 22050"), "\(info)")
            let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
            #expect(left == ["book.flac", "book.mp3", "book.ogg", "book.opus", "book.wav"], "\(left)")
        }

        @Test("--jobs 2 writes the same PCM as --jobs 1")
        func jobs() async throws {
            let session = try await world(.bare)
            let dir = try Self.folder(session, "jobs")
            // 48 sentences: more than one segment, so both workers read.
            let long = Array(repeating: Lector.sentences, count: 12).joined(separator: " ")
            for jobs in ["1", "2"] {
                let render = try await session.lector(["read", "--lang", "en", "--jobs", jobs, "--output",
                                                       dir.appendingPathComponent("j\(jobs).wav").path, long], timeout: 120)
                #expect(render.status == 0, "\(render)")
            }
            let one = try Data(contentsOf: dir.appendingPathComponent("j1.wav"))
            let two = try Data(contentsOf: dir.appendingPathComponent("j2.wav"))
            #expect(one.count > 1_000_000 && one == two, "\(one.count) and \(two.count) bytes")
        }

        @Test("Opus and MP3 encoded in segments on two threads join into one valid stream, as long as the WAV within 1 %")
        func segmentsJoined() async throws {
            let session = try await world(.bare)
            let dir = try Self.folder(session, "segments")
            // About 100 s of speech: two segments of encoding.
            let long = Array(repeating: Lector.sentences, count: 12).joined(separator: " ")
            for format in ["wav", "opus", "mp3"] {
                let render = try await session.lector(["read", "--lang", "en", "--jobs", "2", "--quiet", "--output",
                                                       dir.appendingPathComponent("long.\(format)").path, long], timeout: 180)
                #expect(render.status == 0 && render.stderr.isEmpty, "\(format): \(render)")
            }
            let wav = try #require(await Self.duration(session, dir.appendingPathComponent("long.wav")))
            #expect(wav > 70, "WAV of \(wav) s")
            for format in ["opus", "mp3"] {
                let file = dir.appendingPathComponent("long.\(format)")
                let seconds = try #require(await Self.duration(session, file))
                #expect(abs(seconds - wav) <= wav * 0.01, "\(format): \(seconds) s, WAV \(wav) s")
                let decode = try await session.run("ffmpeg", ["-v", "error", "-i", file.path, "-f", "null", "-"], timeout: 120)
                #expect(decode.status == 0 && decode.stderr.isEmpty, "\(format): \(decode)")
            }
            let opus = try await session.run("opusinfo", [dir.appendingPathComponent("long.opus").path])
            #expect(opus.status == 0, "\(opus)")
            #expect(opus.stdout.components(separatedBy: "New logical stream").count == 2, "not one stream: \(opus)")
            #expect(!opus.stdout.contains("WARNING") && !opus.stdout.contains("ERROR") && opus.stderr.isEmpty, "\(opus)")
            let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
            #expect(left == ["long.mp3", "long.opus", "long.wav"], "\(left)")
        }

        @Test("FLAC and Ogg Vorbis encoded in segments: --jobs 2 decodes to the samples --jobs 1 does; FLAC decodes to the WAV's PCM and passes flac -t; Ogg Vorbis is one stream that ogginfo and ffmpeg accept without a warning; both as long as the WAV within 1 %")
        func flacAndVorbisJoined() async throws {
            let session = try await world(.bare)
            let dir = try Self.folder(session, "joined")
            // About 100 s of speech: two segments of encoding, one join.
            let long = Array(repeating: Lector.sentences, count: 12).joined(separator: " ")
            for (format, jobs) in [("wav", "2"), ("flac", "1"), ("flac", "2"), ("ogg", "1"), ("ogg", "2")] {
                let render = try await session.lector(["read", "--lang", "en", "--jobs", jobs, "--quiet", "--output",
                                                       dir.appendingPathComponent("j\(jobs).\(format)").path, long], timeout: 180)
                #expect(render.status == 0 && render.stderr.isEmpty, "\(format) --jobs \(jobs): \(render)")
            }
            let wav = try #require(await Self.duration(session, dir.appendingPathComponent("j2.wav")))
            #expect(wav > 70, "WAV of \(wav) s")
            /// The decoded samples; ffmpeg's warnings too, but for WAV's (it guesses a mono layout, and says so).
            func pcm(_ name: String) async throws -> Data {
                let raw = dir.appendingPathComponent(name + ".raw")
                let level = name.hasSuffix(".wav") ? "error" : "warning"
                let decode = try await session.run("ffmpeg", ["-v", level, "-i", dir.appendingPathComponent(name).path,
                                                              "-f", "s16le", "-y", raw.path], timeout: 120)
                #expect(decode.status == 0 && decode.stderr.isEmpty, "\(name): \(decode)")
                defer { try? FileManager.default.removeItem(at: raw) }
                return try Data(contentsOf: raw)
            }
            for format in ["flac", "ogg"] {
                // (Ogg files differ in their stream's random serial number.)
                let one = try await pcm("j1.\(format)"), two = try await pcm("j2.\(format)")
                #expect(one.count > 1_000_000 && one == two, "\(format): \(one.count) and \(two.count) bytes")
                let seconds = try #require(await Self.duration(session, dir.appendingPathComponent("j2.\(format)")))
                #expect(abs(seconds - wav) <= wav * 0.01, "\(format): \(seconds) s, WAV \(wav) s")
            }
            let flac = try await session.run("flac", ["-t", "-s", dir.appendingPathComponent("j2.flac").path])
            #expect(flac.status == 0 && flac.stderr.isEmpty, "\(flac)")
            let lossless = try await pcm("j2.flac"), original = try await pcm("j2.wav")
            #expect(lossless.count > 1_000_000 && lossless == original, "\(lossless.count) and \(original.count) bytes")
            let ogginfo = try await session.run("ogginfo", [dir.appendingPathComponent("j2.ogg").path])
            #expect(ogginfo.status == 0, "\(ogginfo)")
            #expect(ogginfo.stdout.components(separatedBy: "New logical stream").count == 2, "not one stream: \(ogginfo)")
            #expect(!ogginfo.stdout.contains("WARNING") && !ogginfo.stdout.contains("Warning") && !ogginfo.stdout.contains("ERROR"),
                    "\(ogginfo)")
        }

        @Test("a progress bar with percent, elapsed, time left and speed on a terminal; nothing on a pipe or with --quiet")
        func progress() async throws {
            let session = try await world(.bare)
            let dir = try Self.folder(session, "progress")
            let script = """
            import os, pty, sys
            pid, fd = pty.fork()
            if pid == 0:
                os.execv(sys.argv[1], sys.argv[1:])
            out = b""
            while True:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                out += chunk
            os.waitpid(pid, 0)
            sys.stdout.write(out.decode("utf-8", "replace"))
            """
            let long = Array(repeating: Lector.sentences, count: 12).joined(separator: " ")
            let tty = try await session.run("python3", ["-c", script, Paths.lectorBinary, "read", "--lang", "en", "--output",
                                                        dir.appendingPathComponent("tty.opus").path, long], timeout: 120)
            #expect(tty.stdout.contains("100%") && tty.stdout.contains("elapsed") && tty.stdout.contains("× real time"), "\(tty)")
            #expect(tty.stdout.contains("\r["), "not redrawn in place: \(tty)")
            let pipe = try await session.lector(["read", "--lang", "en", "--output", dir.appendingPathComponent("pipe.wav").path, long], timeout: 120)
            #expect(pipe.status == 0 && pipe.stderr.isEmpty, "\(pipe)")
            let quiet = try await session.run("python3", ["-c", script, Paths.lectorBinary, "read", "--quiet", "--lang", "en", "--output",
                                                          dir.appendingPathComponent("quiet.wav").path, "Hello there."], timeout: 60)
            #expect(quiet.stdout.isEmpty, "\(quiet)")
        }

        @Test("Ctrl-C while rendering leaves no file and says so in one line")
        func interrupt() async throws {
            let session = try await world(.bare)
            let dir = try Self.folder(session, "interrupt")
            let long = Array(repeating: Lector.sentences, count: 200).joined(separator: " ")
            let render = try session.spawn(Paths.lectorBinary, ["read", "--lang", "en", "--output",
                                                                dir.appendingPathComponent("book.opus").path, long], tag: "interrupt")
            // Interrupted once the hidden file is being written.
            let started = await eventually(timeout: 30, every: .milliseconds(20)) {
                ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).contains { $0.hasSuffix(".part") }
            }
            #expect(started, "no hidden file appeared: \(render.stderr)")
            // As a terminal's Ctrl-C, to the synthesis workers too (its whole foreground process group), first.
            let children = try await session.run("pgrep", ["-P", String(render.pid)]).stdout.split(separator: "\n")
            for child in children.compactMap({ Int32($0) }) { kill(child, SIGINT) }
            render.signal(SIGINT)
            let status = await render.waitForExit(timeout: 20)
            #expect(status == 130, "status \(String(describing: status)): \(render.stderr)")
            #expect(render.stderr == "lector: interrupted; no file written\n", "\(render.stderr)")
            let left = try FileManager.default.contentsOfDirectory(atPath: dir.path)
            #expect(left.isEmpty, "\(left)")
        }

        @Test("a full disk stops the rendering with one line and leaves no file (a 256 KiB tmpfs; skipped where mount is not allowed)")
        func fullDisk() async throws {
            let session = try await world(.bare)
            let dir = try Self.folder(session, "full")
            let mount = try await session.run("mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", dir.path])
            guard mount.status == 0 else { return } // not root, or no mount namespace of our own
            var results: [ProcessResult] = []
            for format in ["wav", "opus"] {
                results.append(try await session.lector(["read", "--lang", "en", "--quiet", "--output", dir.appendingPathComponent("book.\(format)").path,
                                                         Array(repeating: Lector.sentences, count: 4).joined(separator: " ")], timeout: 60))
            }
            let left = try FileManager.default.contentsOfDirectory(atPath: dir.path)
            _ = try await session.run("umount", [dir.path])
            for render in results {
                #expect(render.status == 1 && render.stderrLines.count == 1 && render.stderr.contains("No space left on device"), "\(render)")
            }
            #expect(left.isEmpty, "\(left)")
        }

        @Test("an existing file is refused unless --force, an unknown extension or format lists the formats, a missing folder, a bit rate or job count out of range is one line")
        func badOutputs() async throws {
            let session = try await world(.bare)
            let dir = try Self.folder(session, "bad")
            let existing = dir.appendingPathComponent("there.wav")
            try Data("keep".utf8).write(to: existing)
            let refused = try await session.lector(["read", "--output", existing.path, "hello"])
            #expect(refused.status == 1 && refused.stderrLines == ["lector: \(existing.path) exists; --force replaces it"], "\(refused)")
            #expect(try Data(contentsOf: existing) == Data("keep".utf8))
            let forced = try await session.lector(["read", "--force", "--quiet", "--output", existing.path, "hello"], timeout: 60)
            let replaced = try Data(contentsOf: existing)
            #expect(forced.status == 0 && replaced.count > 1_000, "\(forced)")
            let unknown = try await session.lector(["read", "--output", dir.appendingPathComponent("x.aac").path, "hello"])
            #expect(unknown.status == 1 && unknown.stderrLines.count == 1 && unknown.stderr.contains("wav, flac, ogg, opus, mp3"), "\(unknown)")
            let format = try await session.lector(["read", "--format", "wma", "--output", dir.appendingPathComponent("x").path, "hello"])
            #expect(format.status == 1 && format.stderrLines.count == 1 && format.stderr.contains("wav, flac, ogg, opus, mp3"), "\(format)")
            let missing = try await session.lector(["read", "--output", dir.appendingPathComponent("no/such/x.ogg").path, "hello"])
            #expect(missing.status == 1 && missing.stderrLines.count == 1 && missing.stderr.contains("cannot write"), "\(missing)")
            for (arguments, message) in [(["--bitrate", "500"], "--bitrate for opus takes 6 to 256 kbit/s, not 500"),
                                         (["--jobs", "0"], "--jobs takes 1 to 64, not 0")] {
                let refused = try await session.lector(["read", "--output", dir.appendingPathComponent("x.opus").path] + arguments + ["hello"])
                #expect(refused.status == 1 && refused.stderrLines == ["lector: " + message], "\(refused)")
            }
            let alone = try await session.lector(["read", "--jobs", "2", "hello"])
            #expect(alone.status == 2 && alone.stderrLines == ["lector: --jobs goes with --output"], "\(alone)")
            let left = try FileManager.default.contentsOfDirectory(atPath: dir.path)
            #expect(left == ["there.wav"], "\(left)")
        }

        @Test("a sentence that crashes the engine is skipped with one line, and the file is still complete")
        func engineCrash() async throws {
            let session = try await world(.bare)
            let dir = try Self.folder(session, "crash")
            let file = dir.appendingPathComponent("book.opus")
            let render = try await session.lector(["read", "--lang", "en", "--quiet", "--output", file.path,
                                                   "First sentence here. CRASHME now. Last sentence here."], timeout: 60,
                                                  environment: ["LECTOR_TEST_WORKER_FAULT": "abort:CRASHME"])
            #expect(render.status == 0, "\(render)")
            #expect(render.stderrLines.count == 1 && render.stderr.contains("sentence 2"), "\(render)")
            let seconds = try #require(await Self.duration(session, file))
            #expect(seconds > 1.5, "\(seconds) s")
        }
    }
}
