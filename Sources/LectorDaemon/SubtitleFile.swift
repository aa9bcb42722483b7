@preconcurrency import Glibc
import Audiobook
import SystemKit

/// A subtitle file being rendered (`--output book.srt` / `book.vtt`): one cue per sentence, from where its
/// audio starts to its last sample above the silence floor, written as the sentences come into a hidden file
/// beside `path` (so memory stays flat in the book's length) and renamed into place when complete.
final class SubtitleFile {
    /// The file that exists once `publish` has run.
    let path: String
    private let format: SubtitleFormat
    private let hiddenPath: String
    private let fd: FileDescriptor
    private let sampleRate: Int
    /// Samples of audio before the next sentence's.
    private(set) var samples = 0
    private var cues = 0
    private var pending: [UInt8] = []
    /// A sample at or under this magnitude is silence (about -54 dBFS): a cue ends at the last louder one.
    static let silenceFloor: Int16 = 64
    /// Bytes gathered before they are written.
    static let writeChunk = 1 << 16

    /// Starts a file of `format` for `path`, timed at `sampleRate` Hz.
    /// - Throws: `RenderError` with one line when the hidden file cannot be created.
    init(path: String, format: SubtitleFormat, sampleRate: Int) throws(RenderError) {
        self.path = path
        self.format = format
        self.sampleRate = sampleRate
        let (folder, name) = AudiobookFile.split(path)
        hiddenPath = "\(folder)/.\(name).\(getpid()).part"
        do throws(Errno) {
            fd = try FileDescriptor.open(hiddenPath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode: 0o644)
        } catch {
            throw RenderError(message: "cannot write \(path): \(error)")
        }
        TemporaryFiles.add(hiddenPath)
        pending = Array(format.header.utf8)
    }

    /// Adds the cue of a sentence of `text` whose audio is `pcm` (mono, `sampleRate` Hz), heard right after
    /// the sentences added before it.
    /// - Throws: `RenderError` with one line on a write error.
    func add(text: String, pcm: [Int16]) throws(RenderError) {
        let start = samples
        samples += pcm.count
        guard let last = pcm.lastIndex(where: { $0 > SubtitleFile.silenceFloor || $0 < -SubtitleFile.silenceFloor }) else { return }
        let first = pcm.firstIndex(where: { $0 > SubtitleFile.silenceFloor || $0 < -SubtitleFile.silenceFloor }) ?? 0
        let cue = format.cue(number: cues + 1, start: milliseconds(start + first), end: milliseconds(start + last + 1), text: text)
        guard !cue.isEmpty else { return }
        cues += 1
        pending += Array(cue.utf8)
        if pending.count >= SubtitleFile.writeChunk { try flush() }
    }

    /// Writes what is gathered and syncs the hidden file.
    /// - Throws: `RenderError` with one line on a write error.
    func finish() throws(RenderError) {
        try flush()
        guard fsync(fd.rawValue) == 0 else { throw RenderError(message: "cannot write \(path): \(Errno.current)") }
    }

    /// Renames the finished file into place: a file or link there is replaced, never followed.
    /// - Throws: `RenderError` with one line.
    func publish() throws(RenderError) {
        close()
        guard rename(hiddenPath, path) == 0 else { throw RenderError(message: "cannot write \(path): \(Errno.current)") }
        TemporaryFiles.remove(hiddenPath)
    }

    private var isOpen = true

    /// Closes the hidden file's descriptor once (the file itself is removed with the `TemporaryFiles`).
    func close() {
        if isOpen { try? fd.close() }
        isOpen = false
    }

    private func flush() throws(RenderError) {
        do throws(Errno) { try fd.writeAll(pending) } catch {
            throw RenderError(message: "cannot write \(path): \(error)")
        }
        pending.removeAll(keepingCapacity: true)
    }

    private func milliseconds(_ sample: Int) -> Int { sample * 1_000 / sampleRate }
}
