@preconcurrency import Glibc
import Audiobook
import GLibKit
import LectorCommon
import SoundFile
import SpeechCore
import SystemKit

/// One run of `OfflineRenderer`: the loop, the workers, the file being written, the progress bar and the
/// signals that interrupt it.
final class RenderSession {
    private let renderer: OfflineRenderer
    private let format: AudioFormat
    private let parts: [OfflineRenderer.Part]
    private let marks: [(sentence: Int, title: String)]
    private let loop = MainLoop()
    private var file: AudiobookFile?
    private var partIndex = -1
    private var nextMark = 0
    private var written: [(path: String, title: String, seconds: Int)] = []
    /// The parts finished into their hidden files, renamed into place once every one is.
    private var finished: [AudiobookFile] = []
    private var failure: RenderError?
    private var interrupted = false
    private var synthesisEnded = false
    private let progress: ProgressBar?
    private var totalSamples = 0
    /// The rate of the workers' audio, in Hz (`SynthesisClient.sampleRate`, checked against each worker's).
    private let sampleRate = ParallelSynthesis.sampleRate
    /// Samples of the parts already written.
    private var earlierParts = 0
    /// Where each sentence handed to the file ends, in samples of the whole rendering and in the text, until
    /// its audio is encoded: the progress bar follows the encoding, not the synthesis ahead of it.
    private var pendingEnds: [(samples: Int, text: Int)] = []
    private var pendingHead = 0
    private var pool: EncoderPool?
    private var synthesis: ParallelSynthesis?
    /// Subtitles to write instead of audio (`--output book.srt`), else nil.
    private let subtitleFormat: SubtitleFormat?
    private var subtitles: SubtitleFile?

    /// A session writing `parts` in `format`, or with `subtitles` one subtitle file at the renderer's path.
    init(renderer: OfflineRenderer, format: AudioFormat, parts: [OfflineRenderer.Part], marks: [(sentence: Int, title: String)],
         subtitles: SubtitleFormat? = nil) {
        self.renderer = renderer
        subtitleFormat = subtitles
        self.format = format
        self.parts = parts
        self.marks = marks
        progress = renderer.options.quiet || isatty(STDERR_FILENO) == 0 ? nil
            : ProgressBar(textLength: renderer.utterance.text.unicodeScalars.count)
    }

    /// Renders every part. Returns the exit status.
    /// - Throws: `RenderError` for a failure to report (the files are removed first).
    func run() throws(RenderError) -> Int32 {
        let jobs = renderer.options.jobs ?? Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        let synthesis = ParallelSynthesis(renderer.utterance, jobs: max(1, jobs), workerArgv: renderer.workerArgv, loop: loop)
        synthesis.onSentence = { [unowned self] index, pcm in sentence(index, pcm) }
        self.synthesis = synthesis
        if subtitleFormat == nil && EncoderPool.encodes(format) {
            pool = try EncoderPool(threads: max(1, jobs), format: format, bitrate: renderer.options.bitrate,
                                   sourceRate: sampleRate)
        }
        defer { pool?.close() }
        let signals = [SIGINT, SIGTERM].map { signum in
            MainContext.unixSignal(signum) { [unowned self] in
                interrupted = true
                synthesis.stop()
                return true
            }
        }
        defer { signals.forEach { $0.cancel() } }
        do throws(RenderError) {
            if let subtitleFormat {
                subtitles = try SubtitleFile(path: renderer.options.path, format: subtitleFormat, sampleRate: sampleRate)
            } else {
                try openPart(0)
            }
            try synthesis.run()
            synthesisEnded = true
            if interrupted {
                progress?.finish()
                TemporaryFiles.removeAll()
                printError("interrupted; no file written")
                return 130
            }
            if let failure { throw failure }
            try complete()
            progress?.finish(audioSeconds: Double(totalSamples) / Double(sampleRate))
            return 0
        } catch {
            progress?.finish()
            file?.abandon()
            finished.forEach { $0.abandon() }
            subtitles?.close()
            TemporaryFiles.removeAll()
            if interrupted {
                printError("interrupted; no file written")
                return 130
            }
            throw error
        }
    }

    /// Writes a sentence's audio into the part it belongs to, with the chapter marks that start at it.
    private func sentence(_ index: Int, _ pcm: [Int16]) -> Bool {
        do throws(RenderError) {
            if let subtitles {
                try subtitles.add(text: renderer.utterance.sentences[index].text, pcm: pcm)
                totalSamples += pcm.count
                progress?.update(done: renderer.utterance.sentences[index].range.upperBound,
                                 audioSeconds: Double(totalSamples) / Double(sampleRate))
                return true
            }
            while partIndex + 1 < parts.count && parts[partIndex + 1].firstSentence <= index {
                try closePart()
                try openPart(partIndex + 1)
            }
            while nextMark < marks.count && marks[nextMark].sentence <= index {
                file?.mark(marks[nextMark].title)
                nextMark += 1
            }
            try file?.write(pcm)
            totalSamples += pcm.count
            if progress != nil {
                pendingEnds.append((totalSamples, renderer.utterance.sentences[index].range.upperBound))
                showProgress()
            }
            return true
        } catch {
            failure = error
            return false
        }
    }

    /// Moves the bar to the last sentence whose audio is encoded.
    private func showProgress() {
        guard let progress else { return }
        let encoded = earlierParts + (file?.encodedSamples ?? 0)
        var done: Int?
        while pendingHead < pendingEnds.count && pendingEnds[pendingHead].samples <= encoded {
            done = pendingEnds[pendingHead].text
            pendingHead += 1
        }
        if pendingHead > 1_024 {
            pendingEnds.removeFirst(pendingHead)
            pendingHead = 0
        }
        if let done { progress.update(done: done, audioSeconds: Double(encoded) / Double(sampleRate)) }
    }

    private func openPart(_ index: Int) throws(RenderError) {
        partIndex = index
        let part = parts[index]
        let file = try AudiobookFile(path: part.path, format: format, bitrate: renderer.options.bitrate,
                                     sourceRate: sampleRate, tags: part.tags, pool: pool)
        // While waiting for the encoders the loop stands still: the workers' silence is not a hang.
        file.segmented?.onBlocking = { [unowned self] blocking in
            if blocking { synthesis?.hold() } else { synthesis?.release() }
        }
        file.segmented?.onJoined = { [unowned self] in showProgress() }
        // After the synthesis the loop no longer runs, and the last segments may take seconds: a pending
        // SIGINT is dispatched here. (During it, a wait ends within a segment and the loop sees the signal;
        // dispatching there would re-enter the workers' callbacks.)
        file.segmented?.shouldStop = { [unowned self] in
            guard synthesisEnded else { return false }
            _ = MainContext.iterate(mayBlock: false)
            return interrupted
        }
        self.file = file
    }

    /// Finishes every file and renames them into place, only once all are complete beside their places.
    private func complete() throws(RenderError) {
        if let subtitles {
            try subtitles.finish()
            try subtitles.publish()
            return
        }
        try closePart()
        let playlist = parts.count > 1 ? try writePlaylist() : nil
        for file in finished { try file.publish() }
        if let playlist { try publish(playlist, as: ChapterPlan.playlistPath(renderer.options.path)) }
    }

    /// Finishes the part being written into its hidden file; it is renamed into place with the others.
    private func closePart() throws(RenderError) {
        guard let file else { return }
        let part = parts[partIndex]
        try file.finish()
        self.file = nil
        finished.append(file)
        earlierParts += file.samples
        written.append((part.path, part.tags.title ?? "", (file.samples + sampleRate / 2) / sampleRate))
    }

    /// Writes the playlist into a hidden file beside its place (created anew, never through a link) and
    /// returns that file's path.
    private func writePlaylist() throws(RenderError) -> String {
        let path = ChapterPlan.playlistPath(renderer.options.path)
        let (folder, name) = AudiobookFile.split(path)
        let hidden = "\(folder)/.\(name).\(getpid()).part"
        let text = ChapterPlan.playlist(written)
        do throws(Errno) {
            let fd = try FileDescriptor.open(hidden, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode: 0o644)
            TemporaryFiles.add(hidden)
            defer { try? fd.close() }
            try fd.writeAll(Array(text.utf8))
            guard fsync(fd.rawValue) == 0 else { throw Errno.current }
        } catch {
            throw RenderError(message: "cannot write \(path): \(error)")
        }
        return hidden
    }

    /// Renames the hidden file `hidden` to `path` (a file or link there is replaced, never followed).
    private func publish(_ hidden: String, as path: String) throws(RenderError) {
        guard rename(hidden, path) == 0 else { throw RenderError(message: "cannot write \(path): \(Errno.current)") }
        TemporaryFiles.remove(hidden)
    }
}

/// The progress bar on standard error (a terminal): redrawn in place at most every 100 ms.
final class ProgressBar {
    private let textLength: Int
    private let start = MainContext.monotonicMicroseconds
    private var lastDrawn: Int64 = 0
    private var drawn = false

    init(textLength: Int) { self.textLength = max(textLength, 1) }

    /// The rendering has reached scalar `done` of the text, with `audioSeconds` of audio.
    func update(done: Int, audioSeconds: Double) {
        let now = MainContext.monotonicMicroseconds
        guard now - lastDrawn >= 100_000 || done >= textLength else { return }
        lastDrawn = now
        let line = ProgressLine(fraction: Double(done) / Double(textLength), elapsed: Double(now - start) / 1e6, audio: audioSeconds)
        fputs("\r" + line.text() + "\u{1B}[K", stderr)
        drawn = true
    }

    /// Ends the bar's line; after a complete rendering (`audioSeconds` given), drawn at 100 % first.
    func finish(audioSeconds: Double? = nil) {
        if let audioSeconds {
            let elapsed = Double(MainContext.monotonicMicroseconds - start) / 1e6
            fputs("\r" + ProgressLine(fraction: 1, elapsed: elapsed, audio: audioSeconds).text() + "\u{1B}[K", stderr)
            drawn = true
        }
        if drawn { fputs("\n", stderr) }
        drawn = false
    }
}
