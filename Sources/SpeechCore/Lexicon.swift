/// One entry of a pronunciation lexicon: what is written (a word or phrase, or a regular expression) and how it
/// is said instead (a respelling, eSpeak NG phonemes, or both).
public struct LexiconEntry: Equatable, Sendable {
    /// The word or phrase matched as whole words, or with `isPattern` a regular expression (Swift `Regex`
    /// syntax, the ICU/PCRE syntax for what lexicons need: `\b`, classes, `(?i)`, alternation).
    public var match: String
    /// Whether `match` is a regular expression; its matches need not be whole words unless it says `\b`.
    public var isPattern: Bool
    /// What is said instead, spelled as the language spells it ("Lecktor"); read by every engine.
    public var say: String?
    /// eSpeak NG phoneme mnemonics (the text between `[[` and `]]`, e.g. `l'EktO@`): used by eSpeak NG voices
    /// instead of `say`. Piper's text input takes no phonemes: a Piper voice says `say`, or the word as written.
    public var phonemes: String?
    /// The language it is for: a BCP 47 tag whose subtags must prefix the sentence's ("en" matches "en-GB");
    /// nil: every language.
    public var language: String?

    /// Makes an entry.
    public init(match: String, isPattern: Bool = false, say: String? = nil, phonemes: String? = nil, language: String? = nil) {
        self.match = match
        self.isPattern = isPattern
        self.say = say
        self.phonemes = phonemes
        self.language = language
    }

    /// Whether a word entry matches letters' case exactly: one written with a capital letter does ("US" is not
    /// "us"); one in small letters alone matches any case ("nginx", "Nginx", "NGINX").
    public var matchesCase: Bool { match.unicodeScalars.contains { $0.properties.isUppercase } }

    /// Whether it applies to sentences in `language` (a BCP 47 tag).
    public func applies(to language: String) -> Bool {
        guard let own = self.language else { return true }
        let a = own.lowercased().split(separator: "-"), b = language.lowercased().split(separator: "-")
        return b.count >= a.count && Array(b.prefix(a.count)) == a
    }

    /// The text said for it by an engine that reads eSpeak NG phonemes (`phonemeInput`) or not: the phonemes
    /// in `[[…]]`, else the respelling, else nil (the written word is kept).
    public func said(phonemeInput: Bool) -> String? {
        if phonemeInput, let phonemes, !phonemes.isEmpty { return "[[" + phonemes + "]]" }
        return say
    }
}

/// A user's pronunciation lexicon: entries applied to a sentence before it goes to an engine. A later entry
/// for the same match and language replaces an earlier one; where matches overlap, the longest written match
/// wins, then the earlier one.
public struct Lexicon: Equatable, Sendable {
    /// The entries, in the file's order.
    public private(set) var entries: [LexiconEntry] = []

    /// An empty lexicon.
    public init() {}

    /// A lexicon of `entries` (later ones replacing earlier ones of the same match and language).
    public init(_ entries: [LexiconEntry]) {
        for e in entries { add(e) }
    }

    /// Whether it has no entry.
    public var isEmpty: Bool { entries.isEmpty }

    /// Adds `entry`, replacing the entry of the same match and language.
    public mutating func add(_ entry: LexiconEntry) {
        if let i = entries.firstIndex(where: { $0.match == entry.match && $0.language == entry.language }) {
            entries[i] = entry
        } else {
            entries.append(entry)
        }
    }

    /// Removes the entries for `match` (of `language`, or of every language when nil); returns how many.
    @discardableResult
    public mutating func remove(_ match: String, language: String? = nil) -> Int {
        let before = entries.count
        entries.removeAll { $0.match == match && (language == nil || $0.language == language) }
        return before - entries.count
    }

    /// One rewrite of a sentence: the written scalars `written` (from the sentence's start) are said as `text`.
    public struct Rewrite: Equatable, Sendable {
        /// The written range, in Unicode scalars from the sentence's start.
        public var written: Range<Int>
        /// What the engine is given instead.
        public var text: String
    }

    /// The rewrites of `text` (a sentence in `language`) for an engine that reads eSpeak NG phonemes
    /// (`phonemeInput`) or not, ascending and not overlapping.
    public func rewrites(of text: String, language: String, phonemeInput: Bool) -> [Rewrite] {
        let scalars = Array(text.unicodeScalars)
        var found: [(range: Range<Int>, order: Int, text: String)] = []
        for (order, entry) in entries.enumerated() where entry.applies(to: language) {
            guard let said = entry.said(phonemeInput: phonemeInput) else { continue }
            let ranges = entry.isPattern ? Self.patternMatches(entry.match, in: text)
                                         : Self.wordMatches(entry, in: scalars)
            found += ranges.filter { !$0.isEmpty }.map { ($0, order, said) }
        }
        found.sort { ($0.range.count, -$0.order) > ($1.range.count, -$1.order) }
        var kept: [Rewrite] = []
        for f in found where !kept.contains(where: { $0.written.overlaps(f.range) }) {
            kept.append(Rewrite(written: f.range, text: f.text))
        }
        return kept.sorted { $0.written.lowerBound < $1.written.lowerBound }
    }

    /// The spoken text of `text` (a sentence in `language`) under this lexicon, with the map of its offsets back
    /// to `text`'s; nil when no entry applies.
    public func spoken(of text: String, language: String, phonemeInput: Bool) -> SpokenText? {
        let found = rewrites(of: text, language: language, phonemeInput: phonemeInput)
        guard !found.isEmpty else { return nil }
        var builder = SpokenText.Builder(written: text)
        for r in found { builder.replace(r.written, with: r.text) }
        return builder.build()
    }

    static func isWordScalar(_ c: Unicode.Scalar) -> Bool {
        c.properties.isAlphabetic || c.properties.numericType != nil || c == "_"
    }

    /// The whole-word matches of a word entry: not inside a longer word on either side.
    static func wordMatches(_ entry: LexiconEntry, in s: [Unicode.Scalar]) -> [Range<Int>] {
        let exact = entry.matchesCase
        let key = Array((exact ? entry.match : entry.match.lowercased()).unicodeScalars)
        guard !key.isEmpty, key.count <= s.count else { return [] }
        var result: [Range<Int>] = []
        var i = 0
        while i + key.count <= s.count {
            let before = i == 0 || !isWordScalar(s[i - 1]) || !isWordScalar(key[0])
            let end = i + key.count
            let after = end == s.count || !isWordScalar(s[end]) || !isWordScalar(key[key.count - 1])
            if before && after && equal(s[i..<end], key, exact: exact) {
                result.append(i..<end)
                i = end
            } else {
                i += 1
            }
        }
        return result
    }

    static func equal(_ text: ArraySlice<Unicode.Scalar>, _ key: [Unicode.Scalar], exact: Bool) -> Bool {
        for (a, b) in zip(text, key) where a != b {
            guard !exact, a.properties.lowercaseMapping == String(Character(b)) else { return false }
        }
        return true
    }

    /// The matches of regular expression `pattern` in `text`, in scalars; none for an invalid pattern (which
    /// `LexiconFile.parse` and `lector lexicon add` refuse).
    static func patternMatches(_ pattern: String, in text: String) -> [Range<Int>] {
        guard let regex = try? Regex(pattern) else { return [] }
        let scalars = text.unicodeScalars
        return text.matches(of: regex).map {
            let lo = scalars.distance(from: scalars.startIndex, to: $0.range.lowerBound)
            return lo..<lo + scalars.distance(from: $0.range.lowerBound, to: $0.range.upperBound)
        }
    }

    /// Whether `pattern` is a regular expression `Regex` takes; nil if so, else the reason in one line.
    public static func patternError(_ pattern: String) -> String? {
        do { _ = try Regex(pattern); return nil } catch { return "not a regular expression: \(pattern) (\(error))" }
    }
}
