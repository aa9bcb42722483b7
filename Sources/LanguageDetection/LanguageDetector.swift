internal import CLectorCLD2

/// What the detector found in a text.
public struct DetectedLanguage: Equatable, Sendable {
    /// The language as a BCP 47 tag, e.g. `"en"`, `"de"`, `"zh"`, `"zh-Hant"`, `"he"` (CLD2's codes, with its
    /// deprecated ones replaced: `iw` → `he`, `jw` → `jv`, `no` → `nb`).
    public var tag: String
    /// CLD2's verdict that the language is clearly more probable than the next best (`is_reliable`).
    public var isReliable: Bool
    /// Share of the text's letters in that language, 0...100.
    public var percent: Int
    /// Bytes of UTF-8 letters CLD2 scored (punctuation, digits and white space left out): the evidence the
    /// verdict rests on. A Latin letter counts 1, a Cyrillic one 2, a Chinese character 3.
    public var letterBytes: Int

    /// Makes a result by hand (for tests and callers with their own detector).
    public init(tag: String, isReliable: Bool, percent: Int = 100, letterBytes: Int) {
        self.tag = tag
        self.isReliable = isReliable
        self.percent = percent
        self.letterBytes = letterBytes
    }
}

/// A stretch of a text (one paragraph, or consecutive paragraphs) read in one language.
public struct LanguageRun: Equatable, Sendable {
    /// Where the run lies in the text, in Unicode scalar values, 0-based; from the first letter of its first
    /// paragraph to the end of its last one (blank lines between its paragraphs included).
    public var range: Range<Int>
    /// The detected language (BCP 47), or nil when detection was unsure: the caller's default applies.
    public var language: String?

    /// Makes a run.
    public init(range: Range<Int>, language: String?) {
        self.range = range
        self.language = language
    }
}

/// Detects the language of texts and of their paragraphs with CLD2, the Compact Language Detector 2
/// (Debian's `libcld2`, `compact_lang_det.h`: `CLD2::ExtDetectLanguageSummaryCheckUTF8`, plain-text mode;
/// text that is not interchange-valid UTF-8, such as one with noncharacters, gives no language).
///
/// CLD2 knows 83 languages in the tables Debian builds as `libcld2`; it is thread-safe and needs no set-up.
public struct LanguageDetector: Sendable {
    /// Paragraphs with fewer letter bytes than this (see ``DetectedLanguage/letterBytes``) are too short to
    /// tell: they take the language of the paragraph before (or of the first one after, at the start).
    public var minimumLetterBytes: Int

    /// A detector; `minimumLetterBytes` defaults to 24 (about four short words, or eight Chinese characters).
    public init(minimumLetterBytes: Int = 24) {
        self.minimumLetterBytes = minimumLetterBytes
    }

    /// The language of `text` as CLD2 sees it, or nil when it finds none (empty text, only digits or
    /// punctuation, or a script with no language of its own).
    public func detect(_ text: String) -> DetectedLanguage? {
        detect(utf8: Array(text.utf8))
    }

    /// `detect(_:)` for text already encoded in UTF-8.
    func detect(utf8: [UInt8]) -> DetectedLanguage? {
        guard !utf8.isEmpty, utf8.count <= Int(Int32.max) else { return nil }
        var result = lector_cld2_result()
        utf8.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { chars in
                lector_cld2_detect(chars.baseAddress, Int32(chars.count), &result)
            }
        }
        let code = withUnsafeBytes(of: &result.code) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        guard let tag = Self.tag(forCLD2Code: code) else { return nil }
        return DetectedLanguage(tag: tag, isReliable: result.reliable != 0, percent: Int(result.percent),
                                letterBytes: Int(result.text_bytes))
    }

    /// The language of each paragraph of `text` (see ``Paragraphs``), adjacent paragraphs of one language
    /// merged into one run. In order, covering every paragraph; empty for a text of white space only.
    ///
    /// A paragraph (a piece of one, for one longer than ``Paragraphs/maximumLength``) is detected on its own.
    /// One that is too short (``minimumLetterBytes``) or that CLD2 finds nothing in takes the language of the
    /// paragraph before it, or, at the start of the text, of the first paragraph after it that has one (a
    /// title takes its text's language). One that is long enough but that CLD2 judges unreliable gets nil:
    /// the caller's default language.
    public func runs(in text: String) -> [LanguageRun] {
        let reader = LanguageRunReader(text: text, detector: self)
        var runs: [LanguageRun] = []
        while !reader.isDone { LanguageRunReader.append(reader.next(approximately: Int.max), to: &runs) }
        return runs
    }

    /// The merging rules of ``runs(in:)`` over paragraphs already detected (`nil`: CLD2 found nothing).
    public static func runs(_ paragraphs: [(range: Range<Int>, detected: DetectedLanguage?)], minimumLetterBytes: Int)
        -> [LanguageRun]
    {
        var previous: String?? = nil
        return runs(paragraphs, minimumLetterBytes: minimumLetterBytes, previous: &previous)
    }

    /// The merging rules of ``runs(in:)`` over paragraphs that follow others: `previous` is the language of
    /// the last paragraph before them that had one (`.some(nil)`: unsure), or nil at the start of a text;
    /// it is updated to the last one among these.
    static func runs(_ paragraphs: [(range: Range<Int>, detected: DetectedLanguage?)], minimumLetterBytes: Int,
                     previous: inout String??) -> [LanguageRun]
    {
        enum Verdict: Equatable { case language(String?), tooShort }
        var verdicts: [Verdict] = paragraphs.map { p in
            guard let d = p.detected, d.letterBytes >= minimumLetterBytes else { return .tooShort }
            return .language(d.isReliable ? d.tag : nil)
        }
        // Too short: the previous paragraph's language; leading ones, the first language that follows.
        for i in verdicts.indices {
            if case .language(let l) = verdicts[i] { previous = .some(l) } else if let p = previous { verdicts[i] = .language(p) }
        }
        if let first = verdicts.firstIndex(where: { $0 != .tooShort }), case .language(let l) = verdicts[first] {
            for i in 0..<first { verdicts[i] = .language(l) }
        }
        var result: [LanguageRun] = []
        LanguageRunReader.append(zip(paragraphs, verdicts).map { p, verdict in
            let language: String? = if case .language(let l) = verdict { l } else { nil }
            return LanguageRun(range: p.range, language: language)
        }, to: &result)
        return result
    }

    /// CLD2's code (`CLD2::LanguageCode`) as a BCP 47 tag; nil for "un" (unknown) and the script-only
    /// pseudo-languages ("xx-…").
    static func tag(forCLD2Code code: String) -> String? {
        switch code {
        case "", "un", "xxx": return nil
        case "iw": return "he"   // deprecated ISO 639 codes CLD2 still uses (IANA registry Preferred-Value)
        case "jw": return "jv"
        case "in": return "id"
        case "no": return "nb"   // CLD2's Norwegian is Bokmål
        default: return code.hasPrefix("xx-") ? nil : code
        }
    }
}

/// The language runs of a text found a few paragraphs at a time, so that a long text is read before all of it
/// is detected: ``LanguageDetector/runs(in:)`` is every `next` of a reader, adjacent runs of one language
/// merged (``append(_:to:)``).
public final class LanguageRunReader {
    private let text: String
    private let detector: LanguageDetector
    /// The next paragraph starts at or after this index of `text.unicodeScalars`, `offset` scalars in.
    private var index: String.Index
    private var offset = 0
    /// The language of the last paragraph that had one (see `LanguageDetector.runs(_:minimumLetterBytes:previous:)`).
    private var previous: String?? = nil

    /// A reader of `text`'s runs with `detector`'s rules.
    public init(text: String, detector: LanguageDetector) {
        self.text = text
        self.detector = detector
        index = text.unicodeScalars.startIndex
    }

    /// Every paragraph has been read.
    public var isDone: Bool { index == text.unicodeScalars.endIndex }

    /// The runs of the next paragraphs: at least about `length` scalars of text, to the end of a paragraph
    /// (more at the start of a text, until a paragraph long enough to tell its language). Ranges in scalars of
    /// the whole text. Empty only once the text is done.
    public func next(approximately length: Int) -> [LanguageRun] {
        let scalars = text.unicodeScalars
        var paragraphs: [(range: Range<Int>, detected: DetectedLanguage?)] = []
        let length = max(length, 1)
        var want = length
        var chunk: [Unicode.Scalar] = []
        // The scalars from `index` on, read into `chunk` with an iterator (cheaper than index(after:) each).
        var rest = scalars[index...].makeIterator()
        var atEnd = false
        var utf8: [UInt8] = []
        while !isDone {
            chunk.reserveCapacity(want)
            while chunk.count < want {
                guard let scalar = rest.next() else { atEnd = true; break }
                chunk.append(scalar)
            }
            let ranges = Paragraphs.ranges(in: chunk)
            // White space only so far, or one paragraph longer than the chunk: a longer chunk (the last
            // paragraph may go on after it). One of more than `maximumLength` scalars holds a cut of a
            // paragraph that goes on: at once, not doubling up to it (each try reads the chunk again).
            guard atEnd || ranges.count > 1 else {
                want = want > Int.max / 2 ? Int.max : max(want * 2, Paragraphs.maximumLength + 1)
                continue
            }
            // The paragraphs that hold `length` scalars, except one that may go on after the chunk: the rest
            // is read again with the next chunk.
            var count = 0
            while count < ranges.count && (atEnd || count < ranges.count - 1) {
                let range = ranges[count]
                // Encoded straight from the scalars: a String made of them costs more than CLD2's reading.
                utf8.removeAll(keepingCapacity: true)
                for scalar in chunk[range] { UTF8.encode(scalar) { utf8.append($0) } }
                paragraphs.append((range.lowerBound + offset..<range.upperBound + offset, detector.detect(utf8: utf8)))
                count += 1
                if range.upperBound >= length { break }
            }
            let cut = count < ranges.count ? ranges[count].lowerBound : chunk.count
            index = cut == chunk.count && atEnd ? scalars.endIndex : scalars.index(index, offsetBy: cut)
            offset += cut
            chunk.removeAll(keepingCapacity: true)
            rest = scalars[index...].makeIterator()
            atEnd = false
            // At the start of a text, short paragraphs take the language of the first one that has one.
            let told = paragraphs.contains { p in (p.detected?.letterBytes ?? 0) >= detector.minimumLetterBytes }
            if previous != nil || told || isDone { break }
        }
        return LanguageDetector.runs(paragraphs, minimumLetterBytes: detector.minimumLetterBytes, previous: &previous)
    }

    /// Appends `more` runs to `runs`, the first merged into the last when both have the same language.
    public static func append(_ more: [LanguageRun], to runs: inout [LanguageRun]) {
        for run in more {
            if let last = runs.last, last.language == run.language {
                runs[runs.count - 1].range = last.range.lowerBound..<run.range.upperBound
            } else {
                runs.append(run)
            }
        }
    }
}

/// Paragraphs: the pieces of a text between blank lines (a line break, then only spaces or tabs, then
/// another line break; `\r\n`, `\r`, U+2028 and U+2029 count as line breaks, U+2029 also alone).
///
/// A paragraph longer than ``maximumLength`` scalars is cut into pieces of at most that length: at its last
/// line break within the limit, else at its last white space, else at the limit. A text whose paragraphs are
/// separated by single line breaks (one "paragraph" of a whole book) is so detected a few lines at a time.
public enum Paragraphs {
    /// The longest piece, in Unicode scalars: ~2 KB of text (some 300 words), which CLD2 tells reliably. The
    /// first step of a long text detects one piece before reading starts, so a piece no longer than that
    /// keeps the first sound early (figures: bench/analysis.md).
    public static let maximumLength = 2048

    /// The paragraphs of `text` in Unicode scalar offsets, 0-based, in order; each trimmed of white space at
    /// both ends, none empty.
    public static func ranges(in text: String) -> [Range<Int>] {
        ranges(in: Array(text.unicodeScalars))
    }

    static func ranges(in scalars: [Unicode.Scalar], maximumLength: Int = maximumLength) -> [Range<Int>] {
        var result: [Range<Int>] = []
        var start: Int?      // first non-white-space scalar of the current paragraph
        var end = 0          // one past its last non-white-space scalar
        var breaks = 0       // line breaks since the last non-white-space scalar
        // Where the current paragraph could be cut: the end of a piece and the start of the next one, at its
        // last line break and at its last white space (-1: none).
        var line = (end: -1, next: -1), space = (end: -1, next: -1)
        var i = 0
        func close() {
            if let s = start { result.append(s..<end) }
            start = nil
            line = (-1, -1)
            space = (-1, -1)
        }
        while i < scalars.count {
            let c = scalars[i]
            switch c {
            case "\r":
                breaks += 1
                if i + 1 < scalars.count && scalars[i + 1] == "\n" { i += 1 }
            case "\n", "\u{0B}", "\u{0C}", "\u{85}", "\u{2028}": breaks += 1
            case "\u{2029}": breaks += 2
            case " ", "\t": break
            default:
                if c.value >= 0x80 && c.properties.isWhitespace { break }
                if breaks >= 2 { close() }
                if let s = start {
                    if end < i { // white space before this scalar: a place to cut
                        if breaks > 0 { line = (end, i) } else { space = (end, i) }
                    }
                    if i - s >= maximumLength {
                        let cut: (end: Int, next: Int) = line.end > s ? line : space.end > s ? space : (end, i)
                        result.append(s..<cut.end)
                        start = cut.next
                        if line.next <= cut.next { line = (-1, -1) }
                        if space.next <= cut.next { space = (-1, -1) }
                    }
                } else {
                    start = i
                }
                end = i + 1
                breaks = 0
            }
            i += 1
        }
        close()
        return result
    }
}
