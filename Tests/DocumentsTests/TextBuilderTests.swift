@testable import Documents
import Testing

@Suite struct TextBuilderTests {
    @Test func separatorsAreExactlyWhiteSpaceAndControlCharacters() {
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let expected = scalar.properties.isWhitespace || value < 0x20 || (0x7F...0x9F).contains(value)
            if TextBuilder.separates(scalar) != expected {
                Issue.record("U+\(String(value, radix: 16)): separates is \(!expected)")
                return
            }
        }
    }

    @Test func runsOfSpaceBecomeOneAndSoftHyphensJoinTheWord() {
        var builder = TextBuilder()
        builder.append("  The\u{00A0}\u{2003}light\u{00AD}house\tkeeper\u{0085}")
        builder.append("climbed\u{3000}\u{00AD}")
        builder.append("éà 東京\u{00AD}")
        #expect(builder.text == "The lighthouse keeper climbed éà 東京")
        #expect(builder.scalars == builder.text.unicodeScalars.count)
    }
}
