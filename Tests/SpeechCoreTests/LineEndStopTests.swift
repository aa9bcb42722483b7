import SpeechCore
import Testing

/// `Sentence.heard`: a sentence that ends a line without final punctuation (a heading, a list item, a
/// table row) is read as a sentence ending there, its text unchanged.
@Suite struct LineEndStopTests {
    /// The sentences of `text` at the ranges given (scalar offsets), as slices of it.
    static func spoken(_ text: String, _ ranges: [Range<Int>]) -> [String] {
        let scalars = text.unicodeScalars
        return ranges.map { r in
            let from = scalars.index(scalars.startIndex, offsetBy: r.lowerBound), to = scalars.index(from, offsetBy: r.count)
            return Sentence(range: r, text: Substring(text[from..<to])).heard
        }
    }

    @Test func aLineEndingWithoutPunctuationGetsAFullStopWhenSpoken() {
        let text = "Preamble\n\nThe licence is free.\nTerms and conditions; or \nFile, Lines, Words\nDone"
        #expect(Self.spoken(text, [0..<8, 10..<30, 31..<55, 57..<75, 76..<80])
                == ["Preamble.", "The licence is free.", "Terms and conditions; or.", "File, Lines, Words.", "Done."])
    }

    @Test func punctuationAlreadyThereAndPiecesInsideALineAreLeftAlone() {
        let text = "He said \"Go.\"\nWhy?\nContents:\nA piece cut inside a long sentence goes on"
        #expect(Self.spoken(text, [0..<13, 14..<18, 19..<28, 29..<49])
                == ["He said \"Go.\"", "Why?", "Contents:", "A piece cut inside a"])
        #expect(Sentence(range: 0..<5, text: "Hello").heard == "Hello.")
    }
}
