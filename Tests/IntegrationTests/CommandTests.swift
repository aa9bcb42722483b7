import Foundation
import Testing

extension Integration {
    /// The `lector` command's other promises: one daemon per bus, voices and languages, offline rendering,
    /// help and usage errors.
    @Suite(.privateSession)
    struct Commands {
        @Test("a second lector daemon exits 1 with one line while the first keeps its name")
        func secondDaemonRefused() async throws {
            let session = try await world(.daemon)
            // A saved reading: the second daemon must not take it up (nor say it did) before it refuses to run.
            _ = try await session.lector(["read", "--wait", "--lang", "en", "Saved."])
            let owner = try #require(await session.nameOwner(Lector.busName))
            let second = try await session.lector(["daemon"], timeout: 15)
            #expect(second.status == 1, "\(second)")
            #expect(second.stderrLines == [Substring(Lector.secondDaemonMessage)], "\(second)")
            #expect(await session.nameOwner(Lector.busName) == owner, "the first daemon lost its name")
            if let first = session.runningDaemon {
                #expect(first.isRunning)
            }
        }

        @Test("voices --lang de lists German voices, tab-separated")
        func voicesGerman() async throws {
            let session = try await world(.bare)
            let result = try await session.lector(["voices", "--lang", "de"])
            #expect(result.status == 0, "\(result)")
            let lines = result.stdout.split(separator: "\n")
            #expect(!lines.isEmpty, "no German voice: \(result)")
            for line in lines {
                let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
                #expect(fields.count == 5, "not TAG<TAB>NAME<TAB>IDENTIFIER<TAB>GENDER<TAB>ENGINE: \(line.debugDescription)")
                #expect(fields.first?.lowercased().hasPrefix("de") == true, "not German: \(line.debugDescription)")
            }
            let all = try await session.lector(["voices"])
            #expect(all.status == 0 && all.stdout.split(separator: "\n").count > lines.count, "\(all)")
            // With a region, that region's voices (and the language's without one), not another region's.
            let british = try await session.lector(["voices", "--lang", "en-GB"])
            let tags = british.stdout.split(separator: "\n").compactMap { $0.split(separator: "\t").first?.lowercased() }
            #expect(tags.contains { $0.hasPrefix("en-gb") } && !tags.contains("en-us"), "\(british)")
        }

        @Test("an unknown language is a one-line error; close matches are named")
        func unknownLanguage() async throws {
            let session = try await world(.bare)
            let unknown = try await session.lector(["read", "--lang", "xx-YY", "hello"])
            #expect(unknown.status == 1, "\(unknown)")
            #expect(unknown.stderrLines.count == 1, "\(unknown)")
            #expect(unknown.stderr.hasPrefix("lector: unknown language 'xx-YY'"), "\(unknown)")

            let close = try await session.lector(["read", "--lang", "deu", "hallo"])
            #expect(close.status == 1, "\(close)")
            #expect(close.stderrLines.count == 1, "\(close)")
            #expect(close.stderr.contains("close matches") && close.stderr.contains("de"), "\(close)")
        }

        @Test("--lang EN_us is understood as en-US")
        func underscoreTag() async throws {
            let session = try await world()
            let (read, audio) = try await session.readAndRecord(["--lang", "EN_us", "hello there"])
            #expect(read.status == 0, "\(read)")
            #expect(audio.audibleDuration > 0.3, "\(audio.summary)")
            let status = try await session.status()
            #expect(status.language == "en-US", "\(status)")
        }

        @Test("--output renders a 22050 Hz mono 16-bit WAV, with no bus and no sound server, as long as what the daemon plays")
        func outputMatchesPlayback() async throws {
            let session = try await world()
            let wav = session.directory.appendingPathComponent("rendered.wav")
            let render = try await session.lector(
                ["read", "--lang", "en", "--output", wav.path, Lector.sentences], timeout: 60,
                environment: [
                    "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent",
                    "PULSE_SERVER": "unix:/nonexistent",
                ])
            #expect(render.status == 0, "\(render)")
            let file = try WAVFile(contentsOf: wav)
            #expect(file.formatTag == 1 && file.channels == 1 && file.sampleRate == 22050 && file.bitsPerSample == 16,
                    "format \(file.formatTag), \(file.channels) channels, \(file.sampleRate) Hz, \(file.bitsPerSample) bits")
            #expect(file.blockAlign == 2 && file.byteRate == 44100)
            let rendered = AudioAnalysis(file.samples)

            let (played, playedAudio) = try await session.readAndRecord(["--lang", "en", Lector.sentences])
            #expect(played.status == 0, "\(played)")
            #expect(abs(rendered.audibleDuration - playedAudio.audibleDuration) <= 0.05,
                    "rendered: \(rendered.summary); played: \(playedAudio.summary); read --wait: \(played)\n\(session.daemonLogs())")
        }

        @Test("lector links neither eSpeak NG, PulseAudio, ICU nor CLD2; it hands daemon, voices and read --output (standard input intact) to lector-daemon, and says so in one line when that is missing")
        func commandLineIsSmall() async throws {
            let session = try await world(.bare)
            let ldd = try await session.run("ldd", [Paths.lectorBinary])
            #expect(ldd.status == 0, "\(ldd)")
            for heavy in ["libespeak-ng", "libpulse", "libicu", "libcld2", "libswiftCore"] {
                #expect(!ldd.stdout.contains(heavy), "lector loads \(heavy):\n\(ldd.stdout)")
            }

            // read --output replaces itself with lector-daemon before reading standard input.
            let wav = session.directory.appendingPathComponent("stdin.wav")
            let render = try await session.lector(["read", "--lang", "en", "--output", wav.path, "-"],
                                                  stdin: Data("Read from standard input.".utf8), timeout: 60)
            #expect(render.status == 0, "\(render)")
            #expect(AudioAnalysis(try WAVFile(contentsOf: wav).samples).audibleDuration > 0.5)

            // A lector without its lector-daemon.
            let alone = session.directory.appendingPathComponent("alone")
            try FileManager.default.createDirectory(at: alone, withIntermediateDirectories: true)
            let copy = alone.appendingPathComponent("lector").path
            try? FileManager.default.removeItem(atPath: copy)
            try FileManager.default.copyItem(atPath: Paths.lectorBinary, toPath: copy)
            for command in [["voices"], ["daemon"], ["read", "--output", alone.appendingPathComponent("x.wav").path, "hi"]] {
                let result = try await session.run(copy, command, timeout: 15)
                #expect(result.status == 1, "\(command): \(result)")
                #expect(result.stderrLines.count == 1 && result.stderr.hasPrefix("lector: cannot find lector-daemon"), "\(command): \(result)")
            }
        }

        @Test("--help works for every command; unknown commands and options are usage errors (exit 2)")
        func helpAndUsage() async throws {
            let session = try await world(.bare)
            for command in [[], ["read"], ["pause"], ["resume"], ["toggle"], ["stop"], ["status"], ["voices"], ["daemon"]] {
                let help = try await session.lector(command + ["--help"])
                #expect(help.status == 0 && !help.stdout.isEmpty, "lector \(command) --help: \(help)")
                // The usage line names the command.
                let usage = command.isEmpty ? "lector [OPTION…]" : "lector \(command[0]) [OPTION…]"
                #expect(help.stdout.contains("Usage:\n  " + usage), "lector \(command) --help: \(help.stdout)")
            }
            let unknown = try await session.lector(["frobnicate"])
            #expect(unknown.status == 2, "\(unknown)")
            let badOption = try await session.lector(["read", "--no-such-option", "hello"])
            #expect(badOption.status == 2, "\(badOption)")
            // Usage errors the parser cannot see: exit 2 and one line, nothing sent to the daemon.
            for arguments in [["read", "--selection", "--clipboard"], ["read", "--format", "rtf", "hello"]] {
                let usage = try await session.lector(arguments)
                #expect(usage.status == 2 && usage.stderrLines.count == 1, "lector \(arguments): \(usage)")
            }
            // The window's own help; without a display, one line and nothing paused or read.
            let help = try await session.lector(["window", "--help"], environment: ["DISPLAY": "", "WAYLAND_DISPLAY": ""])
            #expect(help.status == 0 && help.stdout.contains("lector window") && help.stdout.contains("reader window"), "\(help)")
            let owner = await session.nameOwner(Lector.busName)
            let state = owner == nil ? nil : try await session.status().state
            let noDisplay = try await session.lector(["window"], environment: ["DISPLAY": "", "WAYLAND_DISPLAY": ""])
            #expect(noDisplay.status == 1 && noDisplay.stderr.contains("needs a display"), "\(noDisplay)")
            #expect(await session.nameOwner(Lector.busName) == owner, "lector window without a display started a daemon")
            if owner != nil { #expect(try await session.status().state == state) }
        }
    }
}
