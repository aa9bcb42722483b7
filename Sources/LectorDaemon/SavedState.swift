@preconcurrency import Glibc
import GLibKit
import LectorCommon
import SpeechCore

/// Keeps the reading across daemon restarts (a crash, a logout): the text and where it was heard, in
/// `$XDG_STATE_HOME/lector/` (`~/.local/state/lector/` by default, XDG Base Directory Specification).
///
/// Two files, each replaced atomically (`writeFileAtomically`: write a new file, then rename it; no fsync,
/// which could stall the main loop on a busy disk):
/// - `text`: the line `lector-text 1 KEY`, then the text exactly as read (cleaned), written only when the
///   text changes;
/// - `reading`: `key value` lines — `lector-reading 2`, `text KEY`, `state reading|paused|stopped`,
///   `sentence N` (0-based), `offset N` (where that sentence starts, in Unicode scalars of the text),
///   `language`, `voice` (eSpeak NG identifier), `rate` (wpm), `pitch`, `title`, `url`, each value escaped
///   (`StateFiles.escape`: no value can break a line; version 1 files, unescaped, are still read), `title`
///   and `url` shortened to `StateFiles.maximumFieldBytes` — written when the
///   sentence heard, the state, the text or the rate changes, at most once a second (a new text 250 ms after
///   it came, when its first audio is on its way), never while nothing changes (so not while idle), and once
///   more when the daemon ends on SIGTERM/SIGINT/SIGHUP.
///
/// A daemon that starts finds the text loaded and `stopped`; when the saved state was `reading` or
/// `paused`, `resume`, MPRIS `Play` and `toggle` go on from the saved sentence (`SpeechManager.restore`).
/// Both are read back with `readRegularFile` (no link followed, no FIFO waited on, a regular file of at most
/// `StateFiles.maximumReadingBytes` and `StateFiles.maximumTextBytes`). A missing file is a fresh start; an
/// unreadable or inconsistent one is logged in one line and ignored.
/// The queue of `lector read --queue` is not kept.
final class StateKeeper {
    /// The folder of the files.
    static var directory: String { SavedReading.directory }
    static var readingPath: String { SavedReading.readingPath }
    static var textPath: String { directory + "/text" }
    /// At most one write of `reading` per this many µs.
    static let minimumInterval: Int64 = 1_000_000
    /// How long a new text waits before it is written, in µs.
    static let newTextDelay: Int64 = 250_000

    private struct Snapshot: Equatable {
        var textKey: String
        var state: String
        var sentence: Int
        var rate: Int
    }

    private let engine: ReadingEngine
    private let preparer: UtterancePreparer
    private var saved: Snapshot?
    private var savedTextKey: String?
    private var lastWrite: Int64 = .min / 2
    private var timer: Source?
    private var finished = false
    private var failedOnce = false
    /// The key of a text too long to keep, already logged (logged once per text).
    private var unsavedTextKey: String?
    /// This daemon's prefix of text keys: utterance ids restart at 1 in every daemon.
    private let keyPrefix = "\(getpid())-\(MainContext.monotonicMicroseconds)"
    /// The restored utterance keeps the key of the text file it came from (no need to write it again).
    private var restoredKey: (utterance: UInt64, key: String)?

    /// Cuts the rest of a restored text after its start, as for any long text (the reader's).
    private let pending: PendingSentences?

    init(engine: ReadingEngine, preparer: UtterancePreparer, pending: PendingSentences? = nil) {
        self.engine = engine
        self.preparer = preparer
        self.pending = pending
    }

    // MARK: restoring

    /// Loads the saved reading, if any, into the engine (stopped, text loaded, resume point set).
    func restore() {
        do {
            guard let (utterance, sentence, state, key, rest) = try load() else { return }
            restoredKey = (utterance.id, key)
            let resumable = state == "reading" || state == "paused"
            try? engine.apply { m in m.restore(utterance, resumeAt: resumable ? sentence : nil) }
            if let rest { pending?.begin(rest, utterance: utterance.id) }
            saved = snapshot()
            savedTextKey = saved?.textKey
            let where_ = resumable ? "; resume goes on from sentence \(sentence + 1)" : ""
            Log.message("restored the last text (\(utterance.sentences.count) sentences, was \(state))\(where_)")
        } catch {
            Log.warning("cannot restore the last reading: \(error.message); starting empty")
        }
    }

    private struct Failure: Error { var message: String }

    /// The saved utterance (cut to past its saved sentence), the sentence to resume at, the state, the text's
    /// key and what is left to cut of it; nil when nothing is saved.
    /// Failure messages name the file at fault.
    private func load() throws(Failure) -> (Utterance, Int, String, String, SentenceCutter?)? {
        let reading: [UInt8]
        do {
            guard let bytes = try StateFiles.read(Self.readingPath, maximumBytes: StateFiles.maximumReadingBytes) else { return nil }
            reading = bytes
        } catch { throw Failure(message: error.message) }
        let version = StateFiles.fields(Array(reading.prefix { $0 != 10 }), escaped: false)["lector-reading"]
        guard version == "1" || version == "2" else {
            throw Failure(message: "\(Self.readingPath): not a Lector reading file (version 1 or 2)")
        }
        let fields = StateFiles.fields(reading, escaped: version == "2")
        guard let key = fields["text"], let state = fields["state"], ["reading", "paused", "stopped"].contains(state),
              let sentence = fields["sentence"].flatMap({ Int($0) }), sentence >= 0,
              let offset = fields["offset"].flatMap({ Int($0) }), offset >= 0,
              let rate = fields["rate"].flatMap({ Int($0) }), let pitch = fields["pitch"].flatMap({ Int($0) })
        else { throw Failure(message: "\(Self.readingPath): a field is missing or malformed") }

        let read: [UInt8]?
        do { read = try StateFiles.read(Self.textPath, maximumBytes: StateFiles.maximumTextBytes) } catch {
            throw Failure(message: error.message)
        }
        guard let bytes = read else { throw Failure(message: "\(Self.textPath): missing") }
        guard let newline = bytes.firstIndex(of: 10),
              String(decoding: bytes[..<newline], as: UTF8.self) == "lector-text 1 \(key)" else {
            throw Failure(message: "the text file \(Self.textPath) does not belong to \(Self.readingPath)")
        }
        let text = String(decoding: bytes[(newline + 1)...], as: UTF8.self)

        var options = SpeakOptions()
        options.language = fields["language"]
        options.voice = fields["voice"]
        options.rate = rate
        options.pitch = pitch
        options.title = fields["title"]
        options.url = fields["url"]
        // Cut to the saved sentence now, the rest in idle steps as any long text is: a book of 100,000
        // chapters took 20 s to cut whole before the daemon answered.
        let utterance: Utterance
        var rest: SentenceCutter?
        do {
            if pending != nil {
                (utterance, rest) = try preparer.prepareStart(text, options: options,
                                                              firstSlice: offset + PendingSentences.firstSliceLength)
            } else {
                utterance = try preparer.prepare(text, options: options)
            }
        } catch {
            throw Failure(message: "\(Self.textPath): \(error.message)")
        }
        // The sentence that starts at the saved offset (the same cut as before), else the index as saved.
        let index = utterance.sentences.lastIndex { $0.range.lowerBound <= offset } ?? min(sentence, utterance.sentences.count - 1)
        return (utterance, index, state, key, rest)
    }

    // MARK: saving

    /// Something changed in the engine: saves now, or once a second has passed since the last write, if what
    /// is worth keeping (text, state, sentence, rate) differs from what was saved.
    func changed() {
        guard !finished, timer == nil, let now = snapshot(), now != saved else { return }
        // Never in the dispatch that made the change: what it sent to the sound server (a cork) goes out first.
        // A new text waits until its first audio is on its way: writing a long text holds the main loop.
        var wait = lastWrite + Self.minimumInterval - MainContext.monotonicMicroseconds
        if now.textKey != savedTextKey { wait = max(wait, Self.newTextDelay) }
        guard wait > 0 else {
            timer = MainContext.idle { [unowned self] in
                self.timer = nil
                self.save()
            }
            return
        }
        timer = MainContext.timeout(milliseconds: UInt32(wait / 1000 + 1)) { [unowned self] in
            self.timer = nil
            self.save()
            return false
        }
    }

    /// Writes what is not saved yet, and nothing after (the daemon is ending).
    func finish() {
        guard !finished else { return }
        timer?.cancel()
        timer = nil
        save()
        finished = true
    }

    private func snapshot() -> Snapshot? {
        let m = engine.manager
        guard let u = m.current else { return nil }
        let state = m.state == .stopped && m.resumeSentence != nil ? "paused" : m.state.rawValue
        // With the text's length: a file read in two steps keeps its utterance while its text grows.
        let key = restoredKey?.utterance == u.id ? restoredKey!.key : "\(keyPrefix)-\(u.id)-\(u.text.utf8.count)"
        return Snapshot(textKey: key, state: state, sentence: m.sentenceIndex, rate: u.rate)
    }

    private func save() {
        guard !finished, let now = snapshot(), now != saved, let u = engine.manager.current else { return }
        lastWrite = MainContext.monotonicMicroseconds
        _ = mkdir(UserDirs.state, 0o700)
        _ = mkdir(Self.directory, 0o700)
        do {
            if savedTextKey != now.textKey {
                let header = Array("lector-text 1 \(now.textKey)\n".utf8)
                // What the loader would refuse is not written; nor is the reading of an older text kept, which
                // a restart would bring back in place of this one.
                guard header.count + u.text.utf8.count <= StateFiles.maximumTextBytes else {
                    if unsavedTextKey != now.textKey {
                        Log.warning("not keeping the text across restarts: it is longer than the \(StateFiles.maximumTextBytes >> 20) MiB kept")
                        removeFile(Self.readingPath)
                        savedTextKey = nil
                    }
                    unsavedTextKey = now.textKey
                    saved = now
                    return
                }
                try writeFileAtomically(Self.textPath, contents: header + Array(u.text.utf8))
                savedTextKey = now.textKey
            }
            let sentence = min(now.sentence, u.sentences.count - 1)
            func line(_ key: String, _ value: String) -> String {
                key + " " + StateFiles.escape(value, maximumBytes: StateFiles.maximumFieldBytes)
            }
            var lines = [
                "lector-reading 2", line("text", now.textKey), line("state", now.state), line("sentence", "\(sentence)"),
                line("offset", "\(u.sentences[sentence].range.lowerBound)"), line("language", u.language),
                line("voice", u.engineVoice), line("rate", "\(u.rate)"), line("pitch", "\(u.pitch)"), line("title", u.title),
            ]
            if let url = u.url { lines.append(line("url", url)) }
            try writeFileAtomically(Self.readingPath, contents: Array((lines.joined(separator: "\n") + "\n").utf8))
            saved = now
            failedOnce = false
        } catch {
            if !failedOnce { Log.warning("cannot save the reading in \(Self.directory): \(error.message)") }
            failedOnce = true
        }
    }
}
