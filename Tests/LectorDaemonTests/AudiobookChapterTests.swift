import Foundation
import LectorCommon
import SpeechCore
import Testing
@testable import LectorDaemon

/// Chapter marks and `--split chapters` from an utterance's `TextStructure`, rendered by the real worker
/// (`lector-daemon worker`, built beside this test bundle) and read back by ffprobe. Serialized: rendering
/// runs the GLib default main context.
@Suite(.serialized) struct AudiobookChapterTests {
    static let one = "The lighthouse keeper climbed the spiral stairs at dusk. The lamp needed oil."
    static let two = "Tonight the wind came from the north-east. Three fishing boats were still out past the reef."
    static let three = "At midnight the last boat came home. He wrote the time in the logbook and slept."

    /// `lector-daemon` beside the running test executable.
    static var daemonBinary: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        return URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("lector-daemon").path
    }

    /// An utterance of three chapters with a title, an author and a language.
    static func book() throws -> Utterance {
        let text = [one, two, three].joined(separator: "\n\n")
        var utterance = try UtterancePreparer(voices: testVoices).prepare(text, options: SpeakOptions(language: "en"))
        let starts = [0, one.unicodeScalars.count + 2, one.unicodeScalars.count + two.unicodeScalars.count + 4]
        utterance.structure = TextStructure(title: "The Keeper", authors: ["Ann Author"], language: "en-GB",
                                            chapters: zip(["Dusk", "Wind", "Midnight"], starts).map { Chapter(title: $0, start: $1) })
        return utterance
    }

    static func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("lector-chapters-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func run(_ tool: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// The chapters' titles and start times (s) as ffprobe reads them.
    static func chapters(_ file: URL) throws -> [(String, Double)] {
        let out = try run("ffprobe", ["-v", "error", "-show_chapters", "-of", "csv=p=0", file.path])
        // id,time_base,start,start_time,end,end_time,title
        return out.split(separator: "\n").map { line in
            let f = line.split(separator: ",", omittingEmptySubsequences: false)
            return (f.count > 6 ? String(f[6]) : "", Double(f.count > 3 ? f[3] : "") ?? -1)
        }
    }

    @Test("Ogg Vorbis, Opus, FLAC and MP3 carry the three chapters, in order, at the time each starts, with title, author and language",
          arguments: ["ogg", "opus", "flac", "mp3"])
    func marks(format: String) throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        var options = RenderOptions(path: dir.appendingPathComponent("book.\(format)").path)
        options.quiet = true
        #expect(OfflineRenderer(utterance: try Self.book(), options: options, workerArgv: [Self.daemonBinary, "worker"]).run() == 0)
        let chapters = try Self.chapters(URL(fileURLWithPath: options.path))
        #expect(chapters.map(\.0) == ["Dusk", "Wind", "Midnight"], "\(chapters)")
        let starts = chapters.map(\.1)
        #expect(starts.first == 0 && starts == starts.sorted() && Set(starts).count == 3 && (starts.last ?? 0) > 5, "\(starts)")
        let tags = try Self.run("ffprobe", ["-v", "error", "-show_entries", "format_tags:stream_tags", "-of", "default=nw=1", options.path])
        for expected in ["title=The Keeper", "artist=Ann Author"] {
            #expect(tags.lowercased().contains(expected.lowercased()), "\(format): \(tags)")
        }
        #expect(tags.lowercased().contains("language=en"), "\(format): \(tags)")
    }

    @Test("--split chapters writes one numbered file per chapter, titled, and a playlist listing them in order")
    func split() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        var options = RenderOptions(path: dir.appendingPathComponent("book.opus").path)
        options.quiet = true
        options.splitChapters = true
        #expect(OfflineRenderer(utterance: try Self.book(), options: options, workerArgv: [Self.daemonBinary, "worker"]).run() == 0)
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        #expect(files == ["book-01.opus", "book-02.opus", "book-03.opus", "book.m3u"], "\(files)")
        let playlist = try String(contentsOf: dir.appendingPathComponent("book.m3u"), encoding: .utf8)
        let entries = playlist.split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(entries == ["book-01.opus", "book-02.opus", "book-03.opus"], "\(playlist)")
        #expect(playlist.contains(",Dusk\n") && playlist.contains(",Midnight\n"), "\(playlist)")
        let title = try Self.run("ffprobe", ["-v", "error", "-show_entries", "stream_tags=title", "-of", "default=nw=1:nk=1",
                                             dir.appendingPathComponent("book-02.opus").path])
        #expect(title.trimmingCharacters(in: .whitespacesAndNewlines) == "Wind")
        // Re-rendering refuses every existing file.
        #expect(OfflineRenderer(utterance: try Self.book(), options: options, workerArgv: [Self.daemonBinary, "worker"]).run() == 1)
    }
}
