@preconcurrency import Glibc
import Audiobook
import GLibKit
import LectorCommon
import SoundFile
import SpeechCore
import SystemKit

/// `lector read --output FILE`: synthesizes an utterance with the daemon's own `SynthesisClient`s (the one
/// client of the worker protocol: its restarts, watchdog and retry), several workers at once
/// (`ParallelSynthesis`), on a GLib main loop run for the duration of the rendering, with no daemon and no
/// sound server, and encodes it as it comes (`AudiobookFile`: libsndfile, libsoxr for Opus's 48 kHz) to WAV,
/// FLAC, Ogg Vorbis, Ogg Opus or MP3, with title, authors, language and chapter marks from
/// `Utterance.structure`, or one file per chapter and a playlist. A sentence a worker is lost on is skipped
/// with one line; an interruption (SIGINT, SIGTERM) or a write error leaves no file and one line.
struct OfflineRenderer {
    let utterance: Utterance
    let options: RenderOptions
    /// The command that starts a synthesis worker.
    let workerArgv: [String]

    /// The output format `options` ask for.
    /// - Throws: `RenderError` listing the formats for an unknown one.
    static func format(of options: RenderOptions) throws(RenderError) -> AudioFormat {
        let known = (AudioFormat.allCases.map(\.rawValue) + SubtitleFormat.allCases.map(\.rawValue)).joined(separator: ", ")
        if let name = options.format {
            guard let format = AudioFormat(rawValue: name.lowercased()) else {
                throw RenderError(message: "unknown format “\(name)”; formats: \(known)")
            }
            return format
        }
        guard let format = AudioFormat(fileName: options.path) else {
            throw RenderError(message: "cannot tell the format of \(options.path) from its extension; formats: \(known) (or --format)")
        }
        return format
    }

    /// Refuses a bit rate the format does not take, or fewer than one job, in one line.
    /// - Throws: `RenderError` naming the accepted range.
    static func checkLimits(_ options: RenderOptions, format: AudioFormat) throws(RenderError) {
        if let jobs = options.jobs, jobs < 1 || jobs > 64 {
            throw RenderError(message: "--jobs takes 1 to 64, not \(jobs)")
        }
        guard let bitrate = options.bitrate else { return }
        guard let (range, _) = format.bitrates else {
            throw RenderError(message: "--bitrate does not apply to \(format.rawValue), which is lossless")
        }
        guard range.contains(bitrate) else {
            throw RenderError(message: "--bitrate for \(format.rawValue) takes \(range.lowerBound) to \(range.upperBound) kbit/s, not \(bitrate)")
        }
    }

    /// One output file of the rendering: its path, tags, and the first sentence read into it.
    struct Part {
        var path: String
        var tags: AudioTags
        var firstSentence: Int
    }

    /// The files to write: one with every chapter marked, or with `--split chapters` one per top-level chapter
    /// (what precedes the first one goes into the first).
    func parts(format: AudioFormat) -> (parts: [Part], marks: [(sentence: Int, title: String)]) {
        let structure = utterance.structure
        let base = AudioTags(title: structure.title ?? utterance.title, authors: structure.authors,
                             language: structure.language ?? utterance.language)
        let ends = utterance.sentences.map(\.range.upperBound)
        let marks = zip(structure.chapters, ChapterPlan.firstSentences(chapterStarts: structure.chapters.map(\.start), sentenceEnds: ends))
            .map { (sentence: $1, title: $0.title) }
        guard options.splitChapters, !structure.chapters.isEmpty else {
            return ([Part(path: options.path, tags: base, firstSentence: 0)], marks)
        }
        let top = structure.chapters.map(\.level).min() ?? 1
        let chapters = zip(structure.chapters, marks).filter { $0.0.level == top }
        let parts = chapters.enumerated().map { n, chapter in
            var tags = base
            tags.title = chapter.0.title
            tags.album = base.title
            tags.track = (n + 1, chapters.count)
            return Part(path: ChapterPlan.splitPath(options.path, number: n + 1, count: chapters.count), tags: tags,
                        firstSentence: n == 0 ? 0 : chapter.1.sentence)
        }
        return (parts, [])
    }

    /// The most bytes of tags a file of `format` holds: FLAC's metadata block length is 24 bits (RFC 9639
    /// §8.1), ID3v2's tag size 28 (ID3v2.4 §3.1); Ogg's comment header has no limit of its own and gets FLAC's.
    static func tagBudget(_ format: AudioFormat) -> Int {
        format == .mp3 ? (1 << 28) - 1 - 1_024 : (1 << 24) - 1 - 1_024
    }

    /// `parts` with their tags within what `format` holds (`AudioTags.bounded`; the chapter `marks`, added
    /// while rendering, are bounded again with the rest when the file is finished), one warning when cut.
    static func bounding(_ parts: [Part], marks: [(sentence: Int, title: String)], format: AudioFormat) -> [Part] {
        var cut = false
        let bounded = parts.map { part in
            var part = part
            var all = part.tags
            all.chapters = marks.map { AudioTags.Mark(title: $0.title, start: 0) }
            cut = cut || all.bounded(totalBytes: tagBudget(format)).cut
            part.tags = part.tags.bounded(totalBytes: tagBudget(format)).tags
            return part
        }
        if cut {
            printError("warning: the title, authors or chapter titles were too long for \(format.rawValue) tags; shortened "
                       + "(at most \(AudioTags.maximumFieldBytes) bytes each, \(AudioTags.maximumAuthors) authors)")
        }
        return bounded
    }

    /// Renders to the file(s). Returns the exit status: 0, 1 after one line on failure, 130 when interrupted.
    func run() -> Int32 {
        do throws(RenderError) {
            if let subtitles = OfflineRenderer.subtitleFormat(of: options) { return try renderSubtitles(subtitles) }
            let format = try OfflineRenderer.format(of: options)
            try OfflineRenderer.checkLimits(options, format: format)
            if options.splitChapters && utterance.structure.chapters.isEmpty {
                printError("warning: the text has no chapters; writing one file")
            }
            let (unbounded, marks) = self.parts(format: format)
            let parts = OfflineRenderer.bounding(unbounded, marks: marks, format: format)
            var paths = parts.map(\.path)
            if options.splitChapters && parts.count > 1 { paths.append(ChapterPlan.playlistPath(options.path)) }
            // A name taken by anything, a dangling link too, is refused (`--force` replaces it, never its target).
            var status = stat()
            if !options.force, let existing = paths.first(where: { lstat($0, &status) == 0 }) {
                throw RenderError(message: "\(existing) exists; --force replaces it")
            }
            return try RenderSession(renderer: self, format: format, parts: parts, marks: marks).run()
        } catch {
            printError(error.message)
            return 1
        }
    }
}

extension OfflineRenderer {
    /// The subtitle format `options` ask for (`--format srt`, or a `.srt` / `.vtt` path without `--format`), else nil.
    static func subtitleFormat(of options: RenderOptions) -> SubtitleFormat? {
        if let name = options.format { return SubtitleFormat(rawValue: name.lowercased()) }
        return SubtitleFormat(fileName: options.path)
    }

    /// Renders the text's audio to time one cue per sentence and writes only the subtitles.
    /// - Throws: `RenderError` for an option that applies to audio alone, or a name taken without `--force`.
    func renderSubtitles(_ subtitles: SubtitleFormat) throws(RenderError) -> Int32 {
        if options.bitrate != nil { throw RenderError(message: "--bitrate does not apply to \(subtitles.rawValue) subtitles") }
        if options.splitChapters { throw RenderError(message: "--split chapters does not apply to \(subtitles.rawValue) subtitles") }
        if let jobs = options.jobs, jobs < 1 || jobs > 64 { throw RenderError(message: "--jobs takes 1 to 64, not \(jobs)") }
        var status = stat()
        if !options.force && lstat(options.path, &status) == 0 {
            throw RenderError(message: "\(options.path) exists; --force replaces it")
        }
        return try RenderSession(renderer: self, format: .wav, parts: [], marks: [], subtitles: subtitles).run()
    }
}

/// A failure of offline rendering, one line.
struct RenderError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
