/// The spoken form of a sentence under `ReadingSettings`: what of its written text is read, as a `SpokenText`
/// (nil when it is read as written). Each kind is found by a scanner of its own over the sentence's scalars
/// (no regular expressions: this runs as a long text is cut, before its first sound):
/// - e-mail quote markers after a line feed (`> `, `> > `) are read as a space, and a list item's bullet
///   (`-`, `*`, `+`, `•`, … and a space) at the start or after a line feed is not read ("asterisk"), always;
/// - web addresses (`http://`, `https://`, `ftp://`, `file://`, `www.`; with their `<` `>`) as their host, in full
///   or not at all; trailing punctuation is not part of an address;
/// - e-mail addresses (`jane@example.org`, with `mailto:` and `<` `>`) as "jane at example.org", or not at all;
/// - citation markers (`[12]`, `[1, 3]`, `[4–6]`) and the space before them;
/// - numbers of 16 digits or more and hexadecimal hashes (seven hexadecimal digits or more with at least two
///   digits and a letter, dashes allowed: commit ids, UUIDs) and the space before them;
/// - runs of symbols: three or more of the same one of `= - _ * # ~ + ^ | / \ < >` (or four dots) among these
///   symbols, two alone, a table's `|` between spaces, and box drawing and block elements (U+2500–U+259F),
///   read as a space;
/// - emoji: a run of the same emoji (spaces between allowed) read once, or none read.
public enum SpokenForm {
    /// The spoken form of `written` (a sentence), or nil when it is read as written.
    public static func of(_ written: some StringProtocol, settings: ReadingSettings) -> SpokenText? {
        let s = Array(written.unicodeScalars)
        var builder = SpokenText.Builder(written: written)
        quoteMarkers(s, &builder)
        bullets(s, &builder)
        if settings.links != .full { links(s, settings.links, &builder) }
        emails(s, settings.emails, &builder)
        if settings.citations == .skip { citations(s, &builder) }
        if settings.numbers == .skip { numbers(s, &builder) }
        if settings.symbols == .skip { symbols(s, &builder) }
        if settings.emoji != .all { emoji(written, settings.emoji, &builder) }
        return builder.build()
    }

    static func isSpace(_ c: Unicode.Scalar) -> Bool { c.properties.isWhitespace }
    static func isAlnum(_ c: Unicode.Scalar) -> Bool { c.properties.isAlphabetic || ("0"..."9").contains(c) }

    /// `range` widened over the space before it, when something is dropped: "works [12]." reads "works.".
    static func withSpaceBefore(_ range: Range<Int>, _ s: [Unicode.Scalar]) -> Range<Int> {
        var lo = range.lowerBound
        while lo > 0 && (s[lo - 1] == " " || s[lo - 1] == "\t") { lo -= 1 }
        return lo..<range.upperBound
    }

    static func quoteMarkers(_ s: [Unicode.Scalar], _ b: inout SpokenText.Builder) {
        for i in s.indices where s[i] == "\n" {
            var j = i + 1
            var quoted = false
            while j < s.count && (s[j] == " " || s[j] == ">") { quoted = quoted || s[j] == ">"; j += 1 }
            if quoted { b.replace(i..<j, with: " ") }
        }
    }

    static func bullets(_ s: [Unicode.Scalar], _ b: inout SpokenText.Builder) {
        let marks = "-*+•◦‣▪▸·–".unicodeScalars
        for i in s.indices where marks.contains(s[i]) && i + 1 < s.count && (s[i + 1] == " " || s[i + 1] == "\t") {
            var j = i
            while j > 0 && (s[j - 1] == " " || s[j - 1] == "\t") { j -= 1 }
            guard j == 0 || s[j - 1] == "\n" else { continue }
            b.replace(i..<i + 2, with: "")
        }
    }

    static func links(_ s: [Unicode.Scalar], _ mode: ReadingSettings.Links, _ b: inout SpokenText.Builder) {
        let starts: [[Unicode.Scalar]] = ["http://", "https://", "ftp://", "file://", "www."].map { Array($0.unicodeScalars) }
        var i = 0
        while i < s.count {
            guard i == 0 || !isAlnum(s[i - 1]),
                  let scheme = starts.first(where: { i + $0.count < s.count && Array(s[i..<i + $0.count]).lowercased == $0 })
            else { i += 1; continue }
            var end = i + scheme.count
            while end < s.count && !isSpace(s[end]) && !"<>\"“”".unicodeScalars.contains(s[end]) { end += 1 }
            while end > i + scheme.count && ".,;:!?)]}'’".unicodeScalars.contains(s[end - 1]) {
                // A closing bracket the address opened belongs to it (Wikipedia's "…_(disambiguation)").
                let inside = s[(i + scheme.count)..<end]
                if s[end - 1] == ")" && inside.filter({ $0 == "(" }).count >= inside.filter({ $0 == ")" }).count { break }
                end -= 1
            }
            var host = Array(s[(scheme.last == "/" ? i + scheme.count : i)..<end])
            host = Array(host.prefix { !"/?#:".unicodeScalars.contains($0) })
            if let at = host.lastIndex(of: "@") { host = Array(host[(at + 1)...]) }
            if host.count > 4 && Array(host[0..<4]).lowercased == Array("www.".unicodeScalars) { host.removeFirst(4) }
            var range = i..<end
            if i > 0 && s[i - 1] == "<" && end < s.count && s[end] == ">" { range = i - 1..<end + 1 }
            if host.contains(where: isAlnum) && end > i + scheme.count {
                b.replace(mode == .skip ? withSpaceBefore(range, s) : range,
                          with: mode == .skip ? "" : String(String.UnicodeScalarView(host)))
            }
            i = end
        }
    }

    static func emails(_ s: [Unicode.Scalar], _ mode: ReadingSettings.Choice, _ b: inout SpokenText.Builder) {
        func local(_ c: Unicode.Scalar) -> Bool { isAlnum(c) || "._%+-".unicodeScalars.contains(c) }
        func domain(_ c: Unicode.Scalar) -> Bool { isAlnum(c) || c == "." || c == "-" }
        for at in s.indices where s[at] == "@" {
            var lo = at
            while lo > 0 && local(s[lo - 1]) { lo -= 1 }
            var hi = at + 1
            while hi < s.count && domain(s[hi]) { hi += 1 }
            while hi > at + 1 && (s[hi - 1] == "." || s[hi - 1] == "-") { hi -= 1 }
            let name = s[lo..<at], host = s[(at + 1)..<hi]
            guard !name.isEmpty, let dot = host.lastIndex(of: "."), hi - dot > 2,
                  s[(dot + 1)..<hi].allSatisfy({ $0.properties.isAlphabetic }) else { continue }
            var range = lo..<hi
            let mailto = Array("mailto:".unicodeScalars)
            if lo >= mailto.count && Array(s[(lo - mailto.count)..<lo]).lowercased == mailto { range = lo - mailto.count..<hi }
            if range.lowerBound > 0 && s[range.lowerBound - 1] == "<" && hi < s.count && s[hi] == ">" {
                range = range.lowerBound - 1..<hi + 1
            }
            b.replace(mode == .skip ? withSpaceBefore(range, s) : range,
                      with: mode == .skip ? "" : String(String.UnicodeScalarView(name)) + " at " + String(String.UnicodeScalarView(host)))
        }
    }

    static func citations(_ s: [Unicode.Scalar], _ b: inout SpokenText.Builder) {
        for open in s.indices where s[open] == "[" {
            var j = open + 1
            var digits = 0
            while j < s.count && (("0"..."9").contains(s[j]) || ", –-".unicodeScalars.contains(s[j])) {
                if ("0"..."9").contains(s[j]) { digits += 1 }
                j += 1
            }
            if digits > 0 && digits <= 12 && j < s.count && s[j] == "]" && ("0"..."9").contains(s[open + 1]) {
                b.replace(withSpaceBefore(open..<j + 1, s), with: "")
            }
        }
    }

    static func numbers(_ s: [Unicode.Scalar], _ b: inout SpokenText.Builder) {
        var i = 0
        while i < s.count {
            guard isAlnum(s[i]), i == 0 || !isAlnum(s[i - 1]) else { i += 1; continue }
            var end = i
            while end < s.count && (isAlnum(s[end]) || (s[end] == "-" && end + 1 < s.count && isAlnum(s[end + 1]))) { end += 1 }
            let token = s[i..<end]
            let digits = token.filter { ("0"..."9").contains($0) }.count
            let hex = token.allSatisfy { ("0"..."9").contains($0) || "abcdefABCDEF-".unicodeScalars.contains($0) }
            let letters = token.filter { "abcdefABCDEF".unicodeScalars.contains($0) }.count
            let long = digits == token.count && digits >= 16
            let hash = hex && digits >= 2 && letters >= 1
                && (digits + letters >= 7 && !token.contains("-") || digits + letters >= 32)
            if long || hash {
                var range = withSpaceBefore(i..<end, s)
                // "its hash, 9f86…, against" reads "its hash, against".
                if range.lowerBound > 0 && end < s.count && s[end] == "," && s[range.lowerBound - 1] == "," { range = range.lowerBound - 1..<end }
                b.replace(range, with: "")
            }
            i = end
        }
    }

    static func symbols(_ s: [Unicode.Scalar], _ b: inout SpokenText.Builder) {
        let lineSymbols = "=-_*#~+^|/\\<>.:".unicodeScalars
        func box(_ c: Unicode.Scalar) -> Bool { (0x2500...0x259F).contains(c.value) }
        var i = 0
        while i < s.count {
            guard lineSymbols.contains(s[i]) || box(s[i]) else { i += 1; continue }
            var end = i
            while end < s.count && (lineSymbols.contains(s[end]) || box(s[end])) { end += 1 }
            let run = s[i..<end]
            var most = 0
            for c in Set(run) where c != "." { most = max(most, run.filter { $0 == c }.count) }
            let dots = run.allSatisfy { $0 == "." } && run.count >= 4
            // Two signs alone are a rule too (an e-mail signature's "--").
            let alone = run.count >= 2 && s[..<i].allSatisfy(isSpace) && s[end...].allSatisfy(isSpace)
            // A table's cell separator: a `|` between spaces (or a line's ends).
            let cell = run.count == 1 && s[i] == "|" && (i == 0 || isSpace(s[i - 1])) && (end == s.count || isSpace(s[end]))
            if run.contains(where: box) || most >= 3 || dots || alone || cell { b.replace(i..<end, with: " ") }
            i = end
        }
    }

    static func isEmoji(_ c: Character) -> Bool {
        guard let first = c.unicodeScalars.first, first.value > 0xFF else { return false }
        let p = first.properties
        return p.isEmojiPresentation || (p.isEmoji && c.unicodeScalars.contains("\u{FE0F}"))
            || (0x1F1E6...0x1F1FF).contains(first.value)
    }

    static func emoji(_ written: some StringProtocol, _ mode: ReadingSettings.Emoji, _ b: inout SpokenText.Builder) {
        var offset = 0
        var run: (start: Int, end: Int, kept: [Character])?
        func flush() {
            guard let r = run else { return }
            let said = mode == .skip ? "" : String(r.kept)
            let count = r.end - r.start
            if said.unicodeScalars.count != count { b.replace(r.start..<r.end, with: said) }
            run = nil
        }
        for c in written {
            let n = c.unicodeScalars.count
            if isEmoji(c) {
                if run == nil { run = (offset, offset + n, []) }
                if run!.kept.last != c { run!.kept.append(c) }
                run!.end = offset + n
            } else if !(c == " " && run != nil) {
                flush()
            }
            offset += n
        }
        flush()
    }
}

private extension Array where Element == Unicode.Scalar {
    /// ASCII letters in lower case (what scheme and host comparisons need).
    var lowercased: [Unicode.Scalar] {
        map { ("A"..."Z").contains($0) ? Unicode.Scalar($0.value + 32)! : $0 }
    }
}
