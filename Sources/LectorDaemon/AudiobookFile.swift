@preconcurrency import Glibc
import Audiobook
import Resampling
import SoundFile
import SystemKit

/// One audio file being rendered: encoded into a hidden file beside the final one, then (for formats whose
/// tags libsndfile cannot write) copied once more with Lector's tags, and renamed into place only when
/// complete, so that an interruption or a full disk leaves no partial file.
final class AudiobookFile {
    /// The file that will exist once `commit` has run.
    let path: String
    let format: AudioFormat
    private var tags: AudioTags
    private let encodedPath: String
    private let taggedPath: String
    private let fd: FileDescriptor
    private var writer: SoundFileWriter?
    private let resampler: Resampler?
    /// The encoding in parallel segments (every format but WAV, with encoder threads), else nil: `writer` encodes.
    let segmented: SegmentedOutput?
    /// Samples at the source rate written so far.
    private(set) var samples = 0
    private let sourceRate: Int

    /// Starts writing `format` for the final `path`; `tags` are written at the end, their chapter marks
    /// added with `mark`.
    /// - Throws: `RenderError` with one line when the hidden file cannot be created or the format not written.
    /// With `pool`, every format but WAV is encoded in segments on its threads (`SegmentedOutput`).
    init(path: String, format: AudioFormat, bitrate: Int?, sourceRate: Int, tags: AudioTags, pool: EncoderPool?) throws(RenderError) {
        self.path = path
        self.format = format
        self.tags = tags
        self.sourceRate = sourceRate
        let (folder, name) = AudiobookFile.split(path)
        encodedPath = "\(folder)/.\(name).\(getpid()).part"
        taggedPath = "\(folder)/.\(name).\(getpid()).tagged"
        do throws(Errno) {
            fd = try FileDescriptor.open(encodedPath, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode: 0o644)
        } catch {
            throw RenderError(message: "cannot write \(path): \(error)")
        }
        TemporaryFiles.add(encodedPath)
        let rate = format.encodingRate(forSourceRate: sourceRate)
        if let pool, EncoderPool.encodes(format) {
            segmented = SegmentedOutput(pool: pool, format: format, output: fd, basePath: encodedPath, sourceRate: sourceRate)
            resampler = nil
            writer = nil
            return
        }
        segmented = nil
        do {
            resampler = rate == sourceRate ? nil : try Resampler(from: sourceRate, to: rate)
            // Only WAV keeps libsndfile's own strings; the others get theirs when retagged.
            let own = format == .wav
            writer = try SoundFileWriter(fd: fd, format: format, sampleRate: rate, bitrate: bitrate,
                                         title: own ? tags.title : nil, artist: own ? tags.authors.first : nil,
                                         album: own ? tags.album : nil, track: own ? tags.track.map { "\($0.number)" } : nil,
                                         originalRate: sourceRate)
        } catch {
            try? fd.close()
            unlink(encodedPath)
            TemporaryFiles.remove(encodedPath)
            throw RenderError(message: "cannot write \(format.rawValue) (\(path)): \(error)")
        }
    }

    /// Samples at the source rate encoded into the file so far (behind `samples` while segments are encoded).
    var encodedSamples: Int { segmented?.joinedSamples ?? samples }

    /// Chapter marks: their titles and source samples, placed in the audio when the file is complete.
    private var marks: [(title: String, sample: Int)] = []

    /// A chapter mark at the current position.
    func mark(_ title: String) {
        marks.append((title, samples))
    }

    /// Where source sample `sample` is heard in the finished file, ms.
    func milliseconds(atSample sample: Int) -> Int {
        (sample + (segmented?.shift(at: sample) ?? 0)) * 1_000 / sourceRate
    }

    /// Encodes `pcm` (16-bit mono at the source rate).
    /// - Throws: `RenderError` when it cannot be written (a full disk).
    func write(_ pcm: [Int16]) throws(RenderError) {
        if let segmented {
            try segmented.write(pcm)
            samples += pcm.count
            return
        }
        guard let writer else { return }
        do {
            if let resampler { try writer.write(resampler.process(pcm)) } else { try writer.write(pcm) }
        } catch {
            throw RenderError(message: "cannot write \(path): \(error)")
        }
        samples += pcm.count
    }

    /// Finishes the encoding and writes the tags into the hidden file, synced; `publish` renames it into place.
    /// - Throws: `RenderError` with one line; nothing is left behind then.
    func finish() throws(RenderError) {
        if let segmented {
            do throws(RenderError) { try segmented.finish() } catch {
                abandon()
                throw RenderError(message: "cannot write \(path): \(error)")
            }
        }
        tags.chapters = marks.map { AudioTags.Mark(title: $0.title, start: milliseconds(atSample: $0.sample)) }
        tags = tags.bounded(totalBytes: OfflineRenderer.tagBudget(format)).tags
        do {
            if let resampler { try writer?.write(resampler.flush()) }
            try writer?.finish()
            writer = nil
            let container: Retagging.Container? = switch format {
            case .wav: nil
            case .flac: .flac
            case .ogg, .opus: .ogg
            case .mp3: .mp3
            }
            if let container {
                TemporaryFiles.add(taggedPath)
                let out = try FileDescriptor.open(taggedPath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode: 0o644)
                defer { try? out.close() }
                _ = try fd.seek(offset: 0, from: .start)
                try Retagging.rewrite(container, from: fd, to: out, tags: tags, durationMs: samples * 1_000 / sourceRate)
                guard fsync(out.rawValue) == 0 else { throw Errno.current }
                finished = taggedPath
                unlink(encodedPath)
                TemporaryFiles.remove(encodedPath)
            } else {
                guard fsync(fd.rawValue) == 0 else { throw Errno.current }
                finished = encodedPath
            }
            closeFile()
        } catch {
            abandon()
            throw RenderError(message: "cannot write \(path): \(error)")
        }
    }

    /// The hidden file holding the finished audio, once `finish` has run.
    private var finished: String?

    /// Renames the finished file into place: a file or link already there is replaced, never followed.
    /// - Throws: `RenderError` with one line (the hidden file is removed).
    func publish() throws(RenderError) {
        guard let finished else { throw RenderError(message: "cannot write \(path): not finished") }
        guard rename(finished, path) == 0 else {
            let error = Errno.current
            abandon()
            throw RenderError(message: "cannot write \(path): \(error)")
        }
        TemporaryFiles.remove(finished)
        self.finished = nil
    }

    /// Removes the hidden files (after a failure or once renamed).
    func abandon() {
        segmented?.abandon()
        writer = nil
        closeFile()
        for file in [encodedPath, taggedPath] where TemporaryFiles.contains(file) {
            unlink(file)
            TemporaryFiles.remove(file)
        }
    }

    private var isOpen = true

    /// Closes the hidden file's descriptor once.
    private func closeFile() {
        if isOpen { try? fd.close() }
        isOpen = false
    }

    /// The folder (`.` for a bare name) and the name of `path`.
    static func split(_ path: String) -> (String, String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let folder = String(path[..<slash])
        return (folder.isEmpty ? "/" : folder, String(path[path.index(after: slash)...]))
    }
}

/// The hidden files of renderings under way, removed on an interruption.
enum TemporaryFiles {
    nonisolated(unsafe) private static var paths: Set<String> = []
    static func add(_ path: String) { paths.insert(path) }
    static func remove(_ path: String) { paths.remove(path) }
    static func contains(_ path: String) -> Bool { paths.contains(path) }
    /// Unlinks every hidden file.
    static func removeAll() {
        for path in paths { unlink(path) }
        paths.removeAll()
    }
}
