/// The lexicon file, `$XDG_CONFIG_HOME/lector/lexicon`: UTF-8 text, one entry a line, fields separated by tabs.
/// The first field is what is written; each other field is `say=RESPELLING`, `phonemes=ESPEAK-PHONEMES`,
/// `lang=BCP-47-TAG` or the word `regex` (the first field is then a regular expression). Empty lines and
/// lines starting with `#` are ignored; an entry needs `say` or `phonemes`.
///
///     # written	how it is said
///     Lector	say=Lecktor
///     nginx	say=engine x	phonemes='EndZIn'Eks
///     \bv(\d+)\b	regex	say=version
///     Nguyễn	lang=vi	say=Nwin
public enum LexiconFile {
    /// The longest line read; a longer one is refused (a lexicon is typed by people, or imported).
    public static let maxLine = 4096
    /// The most entries read; the rest are refused with one problem line.
    public static let maxEntries = 10_000

    /// The lexicon in `text`, and one line per problem (each problem line's entry is left out).
    public static func parse(_ text: String) -> (Lexicon, problems: [String]) {
        var lexicon = Lexicon()
        var problems: [String] = []
        for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = line.hasSuffix("\r") ? line.dropLast() : line
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard lexicon.entries.count < maxEntries else {
                problems.append("lexicon: more than \(maxEntries) entries; the rest are ignored")
                break
            }
            switch entry(line) {
            case .success(let e): lexicon.add(e)
            case .failure(let p): problems.append("lexicon line \(n + 1): \(p.message)")
            }
        }
        return (lexicon, problems)
    }

    /// The entry of one line.
    public static func entry(_ line: Substring) -> Result<LexiconEntry, LexiconError> {
        guard line.unicodeScalars.count <= maxLine else { return .failure(.init("longer than \(maxLine) characters")) }
        let fields = line.split(separator: "\t", omittingEmptySubsequences: true)
        guard let match = fields.first, !match.isEmpty else { return .failure(.init("no written word before the first tab")) }
        var e = LexiconEntry(match: String(match))
        for field in fields.dropFirst() {
            if field == "regex" { e.isPattern = true; continue }
            let kv = field.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let value = kv.count == 2 ? String(kv[1]) : ""
            switch kv[0] {
            case "say": e.say = value
            case "phonemes": e.phonemes = value
            case "lang": e.language = value
            default: return .failure(.init("unknown field '\(field)' (say=, phonemes=, lang= or regex)"))
            }
        }
        return validated(e)
    }

    /// `e` if it can be written to the file and applied, else why not.
    public static func validated(_ e: LexiconEntry) -> Result<LexiconEntry, LexiconError> {
        let fields = [e.match, e.say ?? "", e.phonemes ?? "", e.language ?? ""]
        if fields.contains(where: { $0.contains("\t") || $0.contains("\n") || $0.contains("\r") }) {
            return .failure(.init("a tab or line break in '\(e.match)'"))
        }
        if e.match.hasPrefix("#") && !e.isPattern { return .failure(.init("a word cannot start with #")) }
        if (e.say ?? "").isEmpty && (e.phonemes ?? "").isEmpty {
            return .failure(.init("'\(e.match)' has neither say= nor phonemes="))
        }
        if e.phonemes?.contains("]]") == true { return .failure(.init("phonemes of '\(e.match)' contain ]]")) }
        if e.isPattern, let why = Lexicon.patternError(e.match) { return .failure(.init(why)) }
        return .success(e)
    }

    /// The file's text for `lexicon`, which `parse` reads back.
    public static func encode(_ lexicon: Lexicon) -> String {
        var out = "# Lector's pronunciation lexicon: written<TAB>say=…<TAB>phonemes=…<TAB>lang=…<TAB>regex\n"
        for e in lexicon.entries { out += line(e) + "\n" }
        return out
    }

    /// One entry's line.
    public static func line(_ e: LexiconEntry) -> String {
        var fields = [e.match]
        if e.isPattern { fields.append("regex") }
        if let say = e.say { fields.append("say=" + say) }
        if let p = e.phonemes { fields.append("phonemes=" + p) }
        if let l = e.language { fields.append("lang=" + l) }
        return fields.joined(separator: "\t")
    }
}

/// A lexicon line or entry that cannot be used, in one line.
public struct LexiconError: Error, Equatable, CustomStringConvertible {
    /// The line.
    public var message: String
    /// Makes the error.
    public init(_ message: String) { self.message = message }
    /// The line.
    public var description: String { message }
}
