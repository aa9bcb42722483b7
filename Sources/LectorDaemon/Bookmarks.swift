import GLibKit
import LectorCommon
import SpeechCore

/// Where each file was left off: reading the same file again starts at the last sentence heard, as an audiobook
/// player does (`lector read --from-start` and the Speak option `from-start` start from the beginning).
///
/// A bookmark belongs to a file's URI and to its text (a 64-bit FNV-1a hash of it): an edited file starts from its
/// beginning. Reading a file to its end removes its bookmark. Kept in `$XDG_STATE_HOME/lector/bookmarks`, one line
/// per file, "HASH<TAB>SENTENCE<TAB>URI" (the URI escaped with `StateFiles.escape`, so that no URI adds a line or
/// a field), the most recent first, at most `capacity` of them; written atomically, at most every 5 s while
/// reading and at once on pause, stop and exit. Read back with `readRegularFile` (at most `maximumFileBytes`);
/// a file that cannot be is one log line, and reading starts with no bookmarks.
final class Bookmarks {
    /// Most bookmarks kept; the oldest go first.
    static let capacity = 200
    /// Longest URI bookmarked, in bytes once escaped (16 KiB: a `file://` URI of a path of `PATH_MAX`, 4096
    /// bytes, percent-encoded, is at most 12 KiB); a text with a longer one gets no bookmark.
    static let maximumURIBytes = 16 << 10
    /// Largest bookmarks file read back, in bytes: `capacity` lines of a URI of `maximumURIBytes`, a hash and a
    /// sentence number.
    static let maximumFileBytes = capacity * (maximumURIBytes + 64)
    static var path: String { SavedReading.directory + "/bookmarks" }

    private struct Entry {
        var hash: UInt64
        var sentence: Int
        var uri: String
    }

    private var entries: [Entry]
    private var dirty = false
    private var flushTimer: Source?
    private var textHash: (utterance: UInt64, bytes: Int, hash: UInt64)?
    private let engine: ReadingEngine

    init(engine: ReadingEngine) {
        self.engine = engine
        entries = Self.load()
    }

    /// The sentence to start `utterance` at: its file's bookmark, or nil (no file, no bookmark, another text).
    /// While the utterance is still being cut into sentences (`Utterance.isComplete` false), the bookmark may
    /// lie past the sentences it has so far.
    func resumePoint(for utterance: Utterance) -> Int? {
        guard let uri = utterance.url, let entry = entries.first(where: { $0.uri == uri }), entry.sentence > 0,
              !utterance.isComplete || entry.sentence < utterance.sentences.count,
              entry.hash == hash(of: utterance) else { return nil }
        return entry.sentence
    }

    /// Whether the file at `uri` has a bookmark past its first sentence (reading it again may resume there).
    func hasBookmark(uri: String) -> Bool {
        entries.contains { $0.uri == uri && $0.sentence > 0 }
    }

    /// Follows what is heard: the sentence of a file's utterance moves its bookmark; its end removes it.
    func observe(_ event: SpeechEvent) {
        guard let u = engine.manager.current, u.id == event.utterance, let uri = u.url else { return }
        switch event {
        case .sentence(_, let index, _):
            set(uri: uri, hash: hash(of: u), sentence: index)
            scheduleFlush()
        case .finished:
            entries.removeAll { $0.uri == uri }
            dirty = true
            flush()
        case .paused, .stopped, .error(_, _, true):
            flush()
        default:
            break
        }
    }

    /// Writes the bookmarks now if they changed.
    func flush() {
        flushTimer?.cancel()
        flushTimer = nil
        guard dirty else { return }
        dirty = false
        let text = entries.map { "\(String($0.hash, radix: 16))\t\($0.sentence)\t\(StateFiles.escape($0.uri))\n" }.joined()
        do { try writeFileAtomically(Self.path, contents: Array(text.utf8)) } catch {
            Log.warning("cannot keep bookmarks: \(error)")
        }
    }

    private func set(uri: String, hash: UInt64, sentence: Int) {
        guard uri.utf8.count <= Self.maximumURIBytes, StateFiles.escape(uri).utf8.count <= Self.maximumURIBytes else { return }
        if let i = entries.firstIndex(where: { $0.uri == uri }) {
            if i == 0 && entries[0].sentence == sentence { return }
            entries.remove(at: i)
        }
        entries.insert(Entry(hash: hash, sentence: sentence, uri: uri), at: 0)
        if entries.count > Self.capacity { entries.removeLast(entries.count - Self.capacity) }
        dirty = true
    }

    private func scheduleFlush() {
        guard flushTimer == nil else { return }
        flushTimer = MainContext.timeout(milliseconds: 5_000) { [unowned self] in
            self.flushTimer = nil
            self.flush()
            return false
        }
    }

    /// `hash(utterance.text)`, worked out once per utterance and text (each sentence heard moves the bookmark;
    /// a file read in two steps keeps its utterance while its text grows from its start to all of it).
    private func hash(of utterance: Utterance) -> UInt64 {
        let bytes = utterance.text.utf8.count
        if let cached = textHash, cached.utterance == utterance.id, cached.bytes == bytes { return cached.hash }
        let h = Self.hash(utterance.text)
        textHash = (utterance.id, bytes, h)
        return h
    }

    /// 64-bit FNV-1a of the text's UTF-8 (read in place where the text is stored contiguously: ~4 instructions a
    /// byte, against ~30 through the UTF-8 view's iterator).
    static func hash(_ text: String) -> UInt64 {
        func fnv<C: Sequence<UInt8>>(_ bytes: C) -> UInt64 {
            var h: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in bytes {
                h ^= UInt64(byte)
                h = h &* 0x100_0000_01b3
            }
            return h
        }
        return text.utf8.withContiguousStorageIfAvailable { fnv($0) } ?? fnv(text.utf8)
    }

    private static func load() -> [Entry] {
        let read: [UInt8]?
        do { read = try StateFiles.read(path, maximumBytes: maximumFileBytes) } catch {
            Log.warning("cannot read the bookmarks: \(error.message); starting with none")
            return []
        }
        guard let bytes = read else { return [] }
        return Array(parse(bytes).prefix(capacity))
    }

    /// The entries of a bookmarks file; lines that are not "HASH<TAB>SENTENCE<TAB>URI" are skipped.
    private static func parse(_ bytes: [UInt8]) -> [Entry] {
        bytes.split(separator: 10).compactMap { line in
            let fields = String(decoding: line, as: UTF8.self).split(separator: "\t", maxSplits: 2)
            guard fields.count == 3, let hash = UInt64(fields[0], radix: 16), let sentence = Int(fields[1]),
                  sentence >= 0 else { return nil }
            return Entry(hash: hash, sentence: sentence, uri: StateFiles.unescape(fields[2]))
        }
    }
}
