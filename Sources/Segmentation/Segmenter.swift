import CLectorICU
import SpeechCore

/// Cuts text into sentences with ICU's sentence break iterator (Unicode UAX #29 rules with the language's
/// tailoring; every language ICU knows, no home-made rules), then cuts sentences longer than
/// `maximumLength` scalars at the last white space before the limit (or hard at the limit in a word that
/// long), so that synthesis of any piece is short and the first sound comes quickly.
public struct Segmenter: Sendable {
    /// Longest piece handed to the synthesizer at once, in Unicode scalars.
    public var maximumLength: Int
    /// What is read of web addresses, citation markers, symbols, …: each sentence's `spoken` form.
    public var reading: ReadingSettings

    /// A segmenter cutting pieces at `maximumLength` scalars (at least 16), whose sentences are read as
    /// `reading` says.
    public init(maximumLength: Int = 600, reading: ReadingSettings = ReadingSettings()) {
        self.maximumLength = max(16, maximumLength)
        self.reading = reading
    }

    /// The sentences of `text` for `language` (BCP 47), in order, with white space trimmed off both ends
    /// and pieces with nothing to read (see `TextCleaner.isReadable`) left out. Ranges count Unicode scalars.
    public func sentences(of text: String, language: String) -> [Sentence] {
        let scalars = Array(text.unicodeScalars)
        guard !scalars.isEmpty else { return [] }
        // What ICU and the trimming see: soft line feeds (hard-wrapped prose) and quote markers read as spaces,
        // so a wrapped paragraph is cut as the same paragraph on one line (see `LineBreaks`).
        var view = scalars
        if scalars.contains("\n") {
            for range in LineBreaks.softRanges(in: scalars) + LineBreaks.quotePrefixes(in: scalars) {
                for i in range { view[i] = " " }
            }
        }
        // ICU works on UTF-16: keep the UTF-16 offset of every scalar to map boundaries back.
        var utf16: [UInt16] = []
        utf16.reserveCapacity(view.count)
        var scalarAtUTF16: [Int32] = []
        scalarAtUTF16.reserveCapacity(view.count + 1)
        for (i, s) in view.enumerated() {
            if s.value < 0x10000 {
                utf16.append(UInt16(s.value))
                scalarAtUTF16.append(Int32(i))
            } else { // a surrogate pair (Unicode 15, 3.9 "UTF-16")
                let v = s.value - 0x10000
                utf16.append(UInt16(0xD800 + (v >> 10)))
                utf16.append(UInt16(0xDC00 + (v & 0x3FF)))
                scalarAtUTF16.append(Int32(i))
                scalarAtUTF16.append(Int32(i))
            }
        }
        scalarAtUTF16.append(Int32(view.count))
        var breaks = [Int32](repeating: 0, count: utf16.count + 1)
        let count = utf16.withUnsafeBufferPointer { u in
            breaks.withUnsafeMutableBufferPointer { b in
                lector_sentence_breaks(u.baseAddress, Int32(u.count), language, b.baseAddress, Int32(b.count))
            }
        }
        var ends: [Int] = count > 0 ? breaks[0..<Int(count)].map { Int(scalarAtUTF16[Int($0)]) } : [view.count]
        if ends.last != view.count { ends.append(view.count) }
        ends = SentenceEnds.filter(ends, in: view, language: language)

        var result: [Sentence] = []
        var start = 0
        var cursor = (index: text.unicodeScalars.startIndex, offset: 0)
        for end in ends where end > start {
            appendPieces(of: view, start..<end, in: text, cursor: &cursor, to: &result)
            start = end
        }
        return result
    }

    /// One slice of a long text: the sentences of about `length` scalars of `text` from `start` on (never past
    /// scalar offset `end`), so that a long text can be cut a slice at a time while it is already being read.
    /// `start` is a `text.unicodeScalars` index and `offset` its offset in scalars; the sentences' ranges count
    /// scalars of the whole `text`. Costs what the slice costs, whatever the length of the text.
    ///
    /// The slice ends after the last paragraph's end (a blank line, U+0085, U+2029) in the second half of the
    /// window, where a sentence always ends, so the sentences are those `sentences(of:language:)` finds in the
    /// whole text (the width of hard-wrapped lines, `LineBreaks`, is measured on the slice). A window with no
    /// paragraph end keeps all but its last sentence, and the next slice starts where that one started.
    /// - Returns: the sentences, and where the next slice starts (at `end`, or the end of the text, when
    ///   everything up to there is cut) with its scalar offset.
    public func sentences(of text: String, from start: String.Index, offset: Int, upTo end: Int,
                          approximately length: Int, language: String)
        -> (sentences: [Sentence], next: String.Index, nextOffset: Int) {
        let window = max(length, 2 * maximumLength)
        if let slice = text.utf8.withContiguousStorageIfAvailable({ bytes in
            sliceOfBytes(bytes, of: text, from: start, offset: offset, upTo: end, window: window, language: language)
        }) {
            return slice
        }
        let scalars = text.unicodeScalars
        var stop = start
        var count = 0
        while count < window && offset + count < end && stop < scalars.endIndex {
            scalars.formIndex(after: &stop)
            count += 1
        }
        guard count > 0 else { return ([], stop, offset) }
        var exact = offset + count >= end || stop == scalars.endIndex
        if !exact {
            // Back to just after a paragraph's end (a blank line, U+0085, U+2029), if one lies in the second half
            // of the window.
            var i = stop
            var n = count
            while n > window / 2 {
                let previous = scalars.index(before: i)
                if Self.endsParagraph(scalars, at: previous, from: start) {
                    stop = i
                    count = n
                    exact = true
                }
                if exact { break }
                i = previous
                n -= 1
            }
        }
        var found = sentences(of: String(Substring(scalars[start..<stop])), language: language)
        if !exact && found.count >= 2 {
            // The last sentence may go on past the window: the next slice cuts it again from its start.
            let last = found.removeLast()
            count = last.range.lowerBound
            stop = scalars.index(start, offsetBy: count)
        }
        var cursor = (index: start, offset: 0)
        func index(_ target: Int) -> String.Index {
            cursor.index = scalars.index(cursor.index, offsetBy: target - cursor.offset)
            cursor.offset = target
            return cursor.index
        }
        for i in found.indices {
            let r = found[i].range
            let slice = Substring(scalars[index(r.lowerBound)..<index(r.upperBound)])
            let spoken = found[i].spoken
            found[i] = Sentence(range: r.lowerBound + offset..<r.upperBound + offset, text: slice)
            found[i].spoken = spoken
        }
        return (found, stop, offset + count)
    }

    /// `sentences(of:from:offset:upTo:approximately:language:)` on the UTF-8 bytes of `text` (a scalar starts at
    /// every byte that is not a continuation byte, 0b10xxxxxx), which walks the window ~5× faster than the
    /// scalar view.
    private func sliceOfBytes(_ bytes: UnsafeBufferPointer<UInt8>, of text: String, from start: String.Index,
                              offset: Int, upTo end: Int, window: Int, language: String)
        -> (sentences: [Sentence], next: String.Index, nextOffset: Int) {
        let utf8 = text.utf8
        let first = utf8.distance(from: utf8.startIndex, to: start)
        /// The byte `scalars` scalars after byte `from`, stopping at `limit` scalars of the text.
        func advance(from: Int, scalars: Int) -> (byte: Int, count: Int) {
            var i = from, n = 0
            while n < scalars && offset + n < end && i < bytes.count {
                i += 1
                n += 1
                while i < bytes.count && bytes[i] & 0xC0 == 0x80 { i += 1 }
            }
            return (i, n)
        }
        var (stop, count) = advance(from: first, scalars: window)
        guard count > 0 else { return ([], start, offset) }
        var exact = offset + count >= end || stop == bytes.count
        if !exact {
            // Back to just after a paragraph's end (a blank line, U+0085, U+2029), if one lies in the second half
            // of the window.
            var j = stop, n = count
            while n > window / 2 {
                var k = j - 1
                while bytes[k] & 0xC0 == 0x80 { k -= 1 }
                if Self.endsParagraph(bytes, at: k, from: first) {
                    stop = j
                    count = n
                    exact = true
                    break
                }
                j = k
                n -= 1
            }
        }
        var found = sentences(of: String(decoding: UnsafeBufferPointer(rebasing: bytes[first..<stop]), as: UTF8.self),
                              language: language)
        if !exact && found.count >= 2 {
            // The last sentence may go on past the window: the next slice cuts it again from its start.
            (stop, count) = advance(from: first, scalars: found.removeLast().range.lowerBound)
        }
        // Each sentence's text becomes a slice of `text` itself (the window's copy is dropped).
        var byte = first, scalar = 0
        func index(_ target: Int) -> String.Index {
            while scalar < target {
                byte += 1
                scalar += 1
                while byte < bytes.count && bytes[byte] & 0xC0 == 0x80 { byte += 1 }
            }
            return utf8.index(utf8.startIndex, offsetBy: byte)
        }
        for i in found.indices {
            let r = found[i].range
            let slice = Substring(text.unicodeScalars[index(r.lowerBound)..<index(r.upperBound)])
            let spoken = found[i].spoken
            found[i] = Sentence(range: r.lowerBound + offset..<r.upperBound + offset, text: slice)
            found[i].spoken = spoken
        }
        return (found, utf8.index(utf8.startIndex, offsetBy: stop), offset + count)
    }

    /// Whether the scalar at `i` ends a paragraph: a line feed ending a blank line (only spaces or tabs since the
    /// line feed before it, which lies at or after `start`), U+0085 or U+2029. A single line feed does not:
    /// it may only wrap a paragraph (`LineBreaks`), which is cut whole.
    static func endsParagraph(_ scalars: String.UnicodeScalarView, at i: String.Index, from start: String.Index) -> Bool {
        switch scalars[i].value {
        case 0x85, 0x2029: return true
        case 0x0A:
            var p = i
            while p > start {
                p = scalars.index(before: p)
                switch scalars[p].value {
                case 0x0A: return true
                case 0x20, 0x09: continue
                default: return false
                }
            }
            return false
        default: return false
        }
    }

    /// `endsParagraph` on UTF-8 bytes: the byte at `k` starts the scalar (U+0085 is C2 85, U+2029 E2 80 A9).
    static func endsParagraph(_ bytes: UnsafeBufferPointer<UInt8>, at k: Int, from first: Int) -> Bool {
        let b = bytes[k]
        if (b == 0xC2 && bytes[k + 1] == 0x85) || (b == 0xE2 && bytes[k + 1] == 0x80 && bytes[k + 2] == 0xA9) { return true }
        guard b == 0x0A else { return false }
        var p = k - 1
        while p >= first {
            switch bytes[p] {
            case 0x0A: return true
            case 0x20, 0x09: p -= 1
            default: return false
            }
        }
        return false
    }

    /// Whether `next` belongs to the grapheme cluster that `previous` is in (UAX #29's Extend, ZWJ, SpacingMark
    /// and emoji-modifier rules, which are what a hard cut can meet).
    static func continuesCluster(_ previous: Unicode.Scalar, _ next: Unicode.Scalar) -> Bool {
        let p = next.properties
        if p.isGraphemeExtend || p.isEmojiModifier || previous.value == 0x200D || next.value == 0x200D { return true }
        switch p.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: return true
        default: break
        }
        // A pair of regional indicators is one flag.
        let ri: ClosedRange<UInt32> = 0x1F1E6...0x1F1FF
        return ri.contains(previous.value) && ri.contains(next.value)
    }

    /// Appends the pieces of `scalars[range]` (the scalars of `text`) to `result`, their texts slices of `text`;
    /// `cursor` is an index of `text.unicodeScalars` and its offset, moved forward as pieces are found.
    private func appendPieces(of scalars: [Unicode.Scalar], _ range: Range<Int>, in text: String,
                              cursor: inout (index: String.Index, offset: Int), to result: inout [Sentence]) {
        func index(_ offset: Int) -> String.Index {
            cursor.index = text.unicodeScalars.index(cursor.index, offsetBy: offset - cursor.offset)
            cursor.offset = offset
            return cursor.index
        }
        var lo = range.lowerBound, hi = range.upperBound
        while lo < hi && scalars[lo].properties.isWhitespace { lo += 1 }
        while hi > lo && scalars[hi - 1].properties.isWhitespace { hi -= 1 }
        while lo < hi {
            var end = hi
            if end - lo > maximumLength {
                end = lo + maximumLength
                if let space = (lo + maximumLength / 2..<end).last(where: { scalars[$0].properties.isWhitespace }) {
                    end = space
                } else {
                    // A hard cut: never inside a grapheme cluster (combining marks, ZWJ sequences, modifiers).
                    while end > lo + 1 && Self.continuesCluster(scalars[end - 1], scalars[end]) { end -= 1 }
                }
            }
            var pieceEnd = end
            while pieceEnd > lo && scalars[pieceEnd - 1].properties.isWhitespace { pieceEnd -= 1 }
            // A slice of `text`, not a copy (scalar-exact: a String subscript would round to characters).
            let piece = Substring(text.unicodeScalars[index(lo)..<index(pieceEnd)])
            if TextCleaner.isReadable(piece) {
                var sentence = Sentence(range: lo..<pieceEnd, text: piece)
                sentence.spoken = SpokenForm.of(piece, settings: reading)
                // A sentence of clutter alone (a line of `=====`) is not read at all.
                if sentence.spoken.map({ TextCleaner.isReadable($0.text) }) ?? true { result.append(sentence) }
            }
            lo = end
            while lo < hi && scalars[lo].properties.isWhitespace { lo += 1 }
        }
    }
}
