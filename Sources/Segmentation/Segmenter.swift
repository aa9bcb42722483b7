import CLectorICU
import SpeechCore

/// Cuts text into sentences with ICU's sentence break iterator (Unicode UAX #29 rules with the language's
/// tailoring; every language ICU knows, no home-made rules), then cuts sentences longer than
/// `maximumLength` scalars at the last white space before the limit (or hard at the limit in a word that
/// long), so that synthesis of any piece is short and the first sound comes quickly.
public struct Segmenter: Sendable {
    /// Longest piece handed to the synthesizer at once, in Unicode scalars.
    public var maximumLength: Int

    /// A segmenter cutting pieces at `maximumLength` scalars (at least 16).
    public init(maximumLength: Int = 600) {
        self.maximumLength = max(16, maximumLength)
    }

    /// The sentences of `text` for `language` (BCP 47), in order, with white space trimmed off both ends
    /// and pieces with nothing to read (see `TextCleaner.isReadable`) left out. Ranges count Unicode scalars.
    public func sentences(of text: String, language: String) -> [Sentence] {
        let scalars = Array(text.unicodeScalars)
        guard !scalars.isEmpty else { return [] }
        // ICU works on UTF-16: keep the UTF-16 offset of every scalar to map boundaries back.
        var utf16: [UInt16] = []
        utf16.reserveCapacity(scalars.count)
        var scalarAtUTF16: [Int32] = []
        scalarAtUTF16.reserveCapacity(scalars.count + 1)
        for (i, s) in scalars.enumerated() {
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
        scalarAtUTF16.append(Int32(scalars.count))
        var breaks = [Int32](repeating: 0, count: utf16.count + 1)
        let count = utf16.withUnsafeBufferPointer { u in
            breaks.withUnsafeMutableBufferPointer { b in
                lector_sentence_breaks(u.baseAddress, Int32(u.count), language, b.baseAddress, Int32(b.count))
            }
        }
        var ends: [Int] = count > 0 ? breaks[0..<Int(count)].map { Int(scalarAtUTF16[Int($0)]) } : [scalars.count]
        if ends.last != scalars.count { ends.append(scalars.count) }

        var result: [Sentence] = []
        var start = 0
        for end in ends where end > start {
            appendPieces(of: scalars, start..<end, to: &result)
            start = end
        }
        return result
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

    private func appendPieces(of scalars: [Unicode.Scalar], _ range: Range<Int>, to result: inout [Sentence]) {
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
            // Through UTF-8 bytes: building a String scalar by scalar costs ~10× more on long texts.
            var bytes: [UInt8] = []
            bytes.reserveCapacity(pieceEnd - lo)
            for scalar in scalars[lo..<pieceEnd] { UTF8.encode(scalar) { bytes.append($0) } }
            let text = String(decoding: bytes, as: UTF8.self)
            if TextCleaner.isReadable(text) {
                result.append(Sentence(range: lo..<pieceEnd, text: text))
            }
            lo = end
            while lo < hi && scalars[lo].properties.isWhitespace { lo += 1 }
        }
    }
}
