/// The outcome of matching a language tag to a voice.
public struct LanguageMatch: Equatable, Sendable {
    /// The canonical BCP 47 tag that matched, as the voice lists it (e.g. `"en-US"` for `"EN_us"`, `"en"` for
    /// `"en-AU"`, `"yue"` for `"zh-HK"`).
    public var tag: String
    /// The voice to read with; pass its ``Voice/identifier`` to ``WorkerRequest/configure(voice:rate:pitch:)``.
    public var voice: Voice

    /// Creates a match.
    public init(tag: String, voice: Voice) {
        self.tag = tag
        self.voice = voice
    }
}

/// Why a language tag has no voice.
public enum LanguageError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A well-formed tag (given in canonical casing) that no installed voice speaks, with up to 5 tags
    /// of installed voices that are close (same name prefix, or closest primary subtag by edit distance).
    case unknown(tag: String, suggestions: [String])
    /// Not a BCP 47 tag (RFC 5646 section 2.1), e.g. `""`, `"en--us"`, `"123"`; carries the input as given.
    case malformed(String)

    /// One line, e.g. `unknown language 'xx-YY'; close matches: xh, …` or
    /// `malformed language tag 'en--us' (expected a BCP 47 tag such as en-US)`.
    public var description: String {
        switch self {
        case let .unknown(tag, suggestions):
            if suggestions.isEmpty { return "unknown language '\(tag)'; no installed voice speaks it" }
            return "unknown language '\(tag)'; close matches: " + suggestions.joined(separator: ", ")
        case let .malformed(input):
            return "malformed language tag '\(input)' (expected a BCP 47 tag such as en-US)"
        }
    }
}

/// Finds the voice for a BCP 47 language tag among installed voices.
public struct LanguageMatcher: Sendable {
    /// The voices matched against, in the order given.
    public let voices: [Voice]

    private struct Entry: Sendable {
        var voice: Int
        var priority: Int
        var position: Int
        var tag: String
    }

    /// Lowercased tag → the voices that list it.
    private let index: [String: [Entry]]
    /// Every distinct tag in catalogue order, canonical casing.
    private let allTags: [String]

    /// Tags that lookup alone would get wrong or miss, lowercased: deprecated codes (RFC 5646 section 3.1.7,
    /// IANA registry `Preferred-Value`), Chinese regions whose everyday language is Cantonese, macrolanguage
    /// members, eSpeak NG's Pinyin voice for Latin-script Mandarin, and ISO 639-3 `tlh` for eSpeak NG's
    /// private-use Klingon code `piqd`.
    static let aliases: [String: String] = [
        "zh-hk": "yue", "zh-mo": "yue", "zh-hant-hk": "yue", "zh-hant-mo": "yue", "yue-hant": "yue",
        "zh-latn": "cmn-latn-pinyin", "cmn-latn": "cmn-latn-pinyin", "zh-guoyu": "cmn", "zh-hakka": "hak",
        "iw": "he", "in": "id", "mo": "ro", "sh": "hbs", "nn": "nb", "no-bok": "nb", "no-nyn": "nb",
        "en-uk": "en-gb", "fa-af": "fa", "prs": "fa", "pes": "fa", "zsm": "ms", "ekk": "et", "lvs": "lv",
        "tlh": "piqd",
    ]

    /// Regions of Latin America (and the United States) whose Spanish is closer to eSpeak NG's `es-419`
    /// voice than to Spain's (ISO 3166-1 alpha-2, lowercased).
    static let latinAmericanRegions: Set<String> = [
        "ar", "bo", "cl", "co", "cr", "cu", "do", "ec", "gt", "hn", "mx", "ni", "pa", "pe", "pr", "py",
        "sv", "us", "uy", "ve",
    ]

    /// Indexes the languages of `voices` (usually ``VoiceCatalog/load()``, and Piper's voices). Languages are
    /// matched to eSpeak NG voices only: a Piper voice reads a language where it is asked for by name (`--voice`,
    /// `[voices]` in the configuration), and ``voice(named:)`` finds it.
    public init(voices: [Voice]) {
        self.voices = voices
        var index: [String: [Entry]] = [:]
        var allTags: [String] = []
        for (v, voice) in voices.enumerated() where voice.engine == .espeakNG {
            for (position, tag) in voice.languages.enumerated() {
                let priority = position < voice.languagePriorities.count ? voice.languagePriorities[position] : 5
                let key = tag.lowercased()
                if index[key] == nil { allTags.append(LanguageTag.canonical(tag) ?? tag) }
                index[key, default: []].append(
                    Entry(voice: v, priority: priority, position: position, tag: LanguageTag.canonical(tag) ?? tag))
            }
        }
        self.index = index
        self.allTags = allTags
    }

    /// The voice for a BCP 47 language tag.
    ///
    /// Case-insensitive, `_` accepted as `-`, surrounding white space ignored. Lookup as in RFC 4647
    /// section 3.4: the tag, then with subtags dropped from the right (`en-AU` → `en`), each step also
    /// trying ``aliases`` (`zh-HK` → `yue`, `iw` → `he`, `nn` → `nb`; `es-MX`, `es-AR` … → `es-419`) and
    /// the step without its script subtag (`en-Latn-US` → `en-US`).
    /// When several voices speak the matched tag, eSpeak NG's priority decides (`en` → English (Great
    /// Britain)), then the voice's own language before secondary ones, then catalogue order. A tag no step
    /// matches falls back to a voice whose tag has the same primary subtag (`chr` → `chr-US-Qaaa-x-west`).
    ///
    /// - Throws: ``LanguageError/malformed(_:)`` if `tag` is not BCP 47, ``LanguageError/unknown(tag:suggestions:)``
    ///   if no installed voice speaks it.
    public func match(_ tag: String) throws(LanguageError) -> LanguageMatch {
        let trimmed = Self.trimmed(tag)
        guard let canonical = LanguageTag.canonical(trimmed) else { throw .malformed(tag) }
        for candidate in LanguageTag.fallbacks(canonical) {
            let key = candidate.lowercased()
            if let found = best(key) { return found }
            if let target = Self.alias(key), let found = best(target) { return found }
            let withoutScript = Self.droppingScript(key)
            if withoutScript != key {
                if let found = best(withoutScript) { return found }
                if let target = Self.alias(withoutScript), let found = best(target) { return found }
            }
        }
        let primary = canonical.lowercased().split(separator: "-").first.map(String.init) ?? ""
        let samePrimary = index.filter { $0.key.split(separator: "-").first.map(String.init) == primary }
            .values.flatMap { $0 }
        if let entry = samePrimary.min(by: Self.preferred) {
            return LanguageMatch(tag: entry.tag, voice: voices[entry.voice])
        }
        throw .unknown(tag: canonical, suggestions: suggestions(for: canonical, raw: trimmed))
    }

    /// The voice whose ``Voice/name`` or ``Voice/identifier`` is `name`, case-insensitively, `_` read as a
    /// space (as `espeak-ng --voices` prints names), e.g. `"english (america)"`, `"English_(America)"`,
    /// `"gmw/en-us"`; nil if none.
    public func voice(named name: String) -> Voice? {
        let wanted = Self.folded(name)
        return voices.first { Self.folded($0.name) == wanted || Self.folded($0.identifier) == wanted }
    }

    private static func folded(_ s: String) -> String {
        String(s.lowercased().map { $0 == "_" ? " " : $0 })
    }

    private static func trimmed(_ s: String) -> String {
        var scalars = s.unicodeScalars[...]
        while let first = scalars.first, first.properties.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.properties.isWhitespace { scalars.removeLast() }
        return String(Substring(scalars))
    }

    private static func alias(_ key: String) -> String? {
        if let target = aliases[key] { return target }
        let parts = key.split(separator: "-")
        if parts.count == 2, parts[0] == "es", latinAmericanRegions.contains(String(parts[1])) { return "es-419" }
        return nil
    }

    /// `key` without its script subtag (`en-latn-us` → `en-us`): eSpeak NG's tags rarely carry one.
    private static func droppingScript(_ key: String) -> String {
        let parts = key.split(separator: "-")
        guard parts.count > 1, parts[1].count == 4, parts[1].allSatisfy({ $0.isLetter }) else { return key }
        return (parts[..<1] + parts[2...]).joined(separator: "-")
    }

    private static func preferred(_ a: Entry, _ b: Entry) -> Bool {
        (a.priority, a.position, a.voice) < (b.priority, b.position, b.voice)
    }

    private func best(_ key: String) -> LanguageMatch? {
        guard let entry = index[key]?.min(by: Self.preferred) else { return nil }
        return LanguageMatch(tag: entry.tag, voice: voices[entry.voice])
    }

    /// Up to 5 tags: first of voices whose name starts with the input (`german` → `de`, `eng` → `en`), then
    /// the tags whose primary subtag is within edit distance 1 (2 for primaries over 3 letters).
    private func suggestions(for canonical: String, raw: String) -> [String] {
        var result: [String] = []
        func add(_ tag: String) {
            if result.count < 5 && !result.contains(tag) { result.append(tag) }
        }
        let word = raw.lowercased()
        if word.count >= 3 && word.allSatisfy({ $0.isLetter }) {
            for voice in voices where voice.engine == .espeakNG {
                let firstWord = voice.name.lowercased().split(whereSeparator: { !$0.isLetter }).first ?? ""
                guard firstWord.hasPrefix(word), let tag = voice.languages.first else { continue }
                // The bare language when it has a voice ("en" for every English voice), else the voice's tag.
                let primary = String(tag.split(separator: "-").first ?? "")
                add(index[primary.lowercased()] != nil ? primary : tag)
            }
        }
        let lower = canonical.lowercased()
        let primary = String(lower.split(separator: "-").first ?? "")
        let limit = primary.count <= 3 ? 1 : 2
        let scored = allTags.compactMap { tag -> (Int, Int, String)? in
            let t = tag.lowercased()
            let tagPrimary = String(t.split(separator: "-").first ?? "")
            let d = Self.editDistance(primary, tagPrimary)
            return d <= limit ? (d, Self.editDistance(lower, t), tag) : nil
        }
        for (_, _, tag) in scored.sorted(by: { ($0.0, $0.1, $0.2) < ($1.0, $1.1, $1.2) }) { add(tag) }
        return result
    }

    /// Levenshtein distance over Unicode scalars.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.unicodeScalars), b = Array(b.unicodeScalars)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
