/// Turns whatever a user or client hands over into text that is safe to read, to log and to send over D-Bus.
///
/// - Invalid UTF-8 becomes U+FFFD (decoding repairs it; nothing raw reaches GLib or D-Bus).
/// - ANSI/VT escape sequences (CSI `ESC [ … final`, OSC `ESC ] … BEL|ESC \`, two-byte `ESC x`) are removed.
/// - Other C0/C1 control characters become a space, except tab and line feed; CR LF and lone CR become LF;
///   form feed becomes a paragraph break (two LF). NUL is removed.
/// Nothing is parsed as markup: `<`, `>` and `&` stay as they are.
public enum TextCleaner {
    /// Decodes `bytes` as UTF-8, repairing invalid sequences with U+FFFD, then cleans the result.
    public static func clean(utf8 bytes: some Collection<UInt8>) -> String {
        clean(String(decoding: bytes, as: UTF8.self))
    }

    /// Cleans `text` as described on the type.
    public static func clean(_ text: String) -> String {
        // Most text has nothing to clean: one pass over its UTF-8 bytes proves it, far cheaper than the
        // scalar-by-scalar copy below.
        if !needsCleaning(text) { return text }
        var out = String.UnicodeScalarView()
        var it = text.unicodeScalars.makeIterator()
        var pending: Unicode.Scalar? = nil
        func next() -> Unicode.Scalar? {
            if let p = pending { pending = nil; return p }
            return it.next()
        }
        while let c = next() {
            switch c.value {
            case 0x1B: // ESC
                guard let n = next() else { break }
                if n == "[" { // CSI (ECMA-48 5.4): parameter and intermediate bytes 0x20...0x3F, then a final byte
                    while let x = next() {
                        if (0x20...0x3F).contains(x.value) { continue }
                        if !(0x40...0x7E).contains(x.value) { pending = x } // not a final byte: the sequence was cut short
                        break
                    }
                } else if n == "]" { // OSC: until BEL or ESC backslash
                    while let x = next() {
                        if x.value == 0x07 { break }
                        if x.value == 0x1B { _ = next(); break }
                    }
                } // else: a two-character sequence, both dropped
            case 0x00:
                continue
            case 0x0D: // CR, CR LF → LF
                out.append("\n")
                if let n = next(), n != "\n" { pending = n }
            case 0x0C: // form feed: a page break reads as a paragraph break
                out.append("\n"); out.append("\n")
            case 0x09, 0x0A:
                out.append(c)
            case 0x01...0x1F, 0x7F...0x9F:
                out.append(" ")
            default:
                out.append(c)
            }
        }
        return String(out)
    }

    /// Whether `text` holds a scalar that `clean` changes: U+0000–U+0008, U+000B–U+001F, U+007F–U+009F.
    /// In UTF-8 those are the bytes below 0x20 (but tab and line feed), 0x7F, and 0xC2 followed by 0x80–0x9F.
    /// Eight bytes at a time where the text is stored contiguously: a word with no byte below 0x20, no 0x7F and
    /// no 0xC2 needs no look at its bytes (~1.5 instructions a byte against ~16 byte by byte; a 1 MB text is
    /// checked while it is spoken, before its first sound).
    static func needsCleaning(_ text: String) -> Bool {
        func needs(_ b: UInt8, after previous: UInt8) -> Bool {
            if b < 0x20 { return b != 0x09 && b != 0x0A }
            return b == 0x7F || (previous == 0xC2 && b >= 0x80 && b <= 0x9F)
        }
        func scan<C: Collection<UInt8>>(_ bytes: C) -> Bool {
            var previous: UInt8 = 0
            for b in bytes {
                if needs(b, after: previous) { return true }
                previous = b
            }
            return false
        }
        func scanWords(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            let raw = UnsafeRawBufferPointer(bytes)
            let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
            var previous: UInt8 = 0
            var i = 0
            while i + 8 <= raw.count {
                let x = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                let del = x ^ (0x7F &* ones), c2 = x ^ (0xC2 &* ones)
                // A byte below 0x20, or equal to 0x7F or 0xC2 ("Bit Twiddling Hacks": hasless, haszero).
                let suspect = ((x &- 0x20 &* ones) & ~x | (del &- ones) & ~del | (c2 &- ones) & ~c2) & highs
                if suspect != 0 || previous == 0xC2 {
                    for k in i..<i + 8 {
                        if needs(raw[k], after: previous) { return true }
                        previous = raw[k]
                    }
                } else {
                    previous = 0
                }
                i += 8
            }
            while i < raw.count {
                if needs(raw[i], after: previous) { return true }
                previous = raw[i]
                i += 1
            }
            return false
        }
        return text.utf8.withContiguousStorageIfAvailable { scanWords($0) } ?? scan(text.utf8)
    }

    /// `text` made one field of a line of tab-separated output (a name taken from a file name, shown by
    /// `lector voices` and `lector status`, sent over D-Bus): cleaned as by ``clean(_:)``, every run of white
    /// space (tab, line feed, U+2028 …) made one space, the ends trimmed, and the bidirectional embedding,
    /// override and isolate controls (U+202A–U+202E, U+2066–U+2069, Unicode UAX #9) removed, so a name cannot
    /// show as another. Empty for a name of only white space and controls.
    public static func field(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        var space = false
        for s in clean(text).unicodeScalars {
            if (0x202A...0x202E).contains(s.value) || (0x2066...0x2069).contains(s.value) { continue }
            if s.properties.isWhitespace {
                space = !out.isEmpty
                continue
            }
            if space { out.append(" ") }
            space = false
            out.append(s)
        }
        return String(out)
    }

    /// True when `text` has something to read: a scalar that is neither white space, a control character,
    /// nor an invisible format character.
    public static func isReadable(_ text: some StringProtocol) -> Bool {
        text.unicodeScalars.contains { s in
            let p = s.properties
            if p.isWhitespace { return false }
            switch p.generalCategory {
            case .control, .format, .unassigned, .surrogate, .lineSeparator, .paragraphSeparator, .spaceSeparator:
                return false
            default:
                return true
            }
        }
    }

    /// A short title for media widgets: the first line of `text`, white space folded, at most `limit`
    /// characters (cut at a word boundary with "…").
    public static func title(of text: String, limit: Int = 80) -> String {
        var words: [Substring] = []
        var length = 0
        // The first line that is not blank: from the first character that is not white space to the next line
        // break. Read only as far as the title needs: the end of a line of 1 MB is never looked for.
        guard let start = text.firstIndex(where: { !$0.isWhitespace }) else { return "" }
        let line = text[start...]
        var cursor = line.startIndex
        func nextWord() -> Substring? {
            while cursor < line.endIndex && line[cursor].isWhitespace {
                if line[cursor].isNewline { return nil }
                cursor = line.index(after: cursor)
            }
            guard cursor < line.endIndex else { return nil }
            let start = cursor
            var count = 0  // a word longer than the limit is cut: no need to read it to its end
            while cursor < line.endIndex && !line[cursor].isWhitespace && count <= limit {
                cursor = line.index(after: cursor)
                count += 1
            }
            return line[start..<cursor]
        }
        while let w = nextWord() {
            if length + w.count + (words.isEmpty ? 0 : 1) > limit {
                if words.isEmpty { return String(w.prefix(limit - 1)) + "…" }
                // Room for the ellipsis: drop words until the title and "…" fit in `limit`.
                while length + 1 > limit, let last = words.popLast() {
                    length -= last.count + (words.isEmpty ? 0 : 1)
                }
                // The first word alone was `limit` long: the line's first `limit - 1` characters are within it.
                if words.isEmpty { return String(line.prefix(limit - 1)) + "…" }
                return words.joined(separator: " ") + "…"
            }
            length += w.count + (words.isEmpty ? 0 : 1)
            words.append(w)
        }
        return words.joined(separator: " ")
    }
}
