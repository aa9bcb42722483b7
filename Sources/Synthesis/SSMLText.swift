/// The text content of SSML markup as Lector builds it, and where each markup scalar falls in that content.
///
/// eSpeak NG reports a word of an SSML document (`espeakEVENT_WORD`, speak_lib.h) by its position in the
/// markup, tags and entities included; Lector reports words by their position in the text people see, the
/// document's text content. This maps one onto the other. It expects well-formed markup whose only
/// references are the predefined entities (`&amp;` `&lt;` `&gt;` `&quot;` `&apos;`) and character references
/// (`&#65;`, `&#x41;`), as Lector writes it after checking a document; anything else is read literally.
public enum SSMLText {
    /// The content of `markup`: tags (`<…>`, with quoted attribute values) removed, references decoded,
    /// white space kept as it is. `offsets` has one entry per Unicode scalar of `markup`, plus one for its
    /// end: the offset in `text` (in scalars) of the content at that point; the scalars of a tag or of a
    /// reference all map to where the content goes on.
    public static func content(of markup: String) -> (text: String, offsets: [Int]) {
        let source = Array(markup.unicodeScalars)
        var text = String.UnicodeScalarView()
        var offsets: [Int] = []
        offsets.reserveCapacity(source.count + 1)
        var count = 0
        var i = 0
        while i < source.count {
            let c = source[i]
            if c == "<" {
                var quote: Unicode.Scalar?
                var j = i + 1
                while j < source.count {
                    let d = source[j]
                    if let q = quote { if d == q { quote = nil } } else if d == "\"" || d == "'" { quote = d } else if d == ">" { break }
                    j += 1
                }
                let end = min(j + 1, source.count)
                for _ in i..<end { offsets.append(count) }
                i = end
            } else if c == "&", let (decoded, length) = reference(source, at: i) {
                for _ in 0..<length { offsets.append(count) }
                text.append(decoded)
                count += 1
                i += length
            } else {
                offsets.append(count)
                text.append(c)
                count += 1
                i += 1
            }
        }
        offsets.append(count)
        return (String(text), offsets)
    }

    /// The scalar a reference at `source[i]` stands for, and the reference's length in scalars.
    private static func reference(_ source: [Unicode.Scalar], at i: Int) -> (Unicode.Scalar, Int)? {
        var j = i + 1
        var name = ""
        while j < source.count, j - i <= 12, source[j] != ";" {
            name.unicodeScalars.append(source[j])
            j += 1
        }
        guard j < source.count, source[j] == ";" else { return nil }
        let length = j - i + 1
        switch name {
        case "amp": return ("&", length)
        case "lt": return ("<", length)
        case "gt": return (">", length)
        case "quot": return ("\"", length)
        case "apos": return ("'", length)
        default:
            guard name.hasPrefix("#") else { return nil }
            let digits = name.dropFirst()
            let value = digits.hasPrefix("x") || digits.hasPrefix("X")
                ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits, radix: 10)
            guard let value, let scalar = Unicode.Scalar(value) else { return nil }
            return (scalar, length)
        }
    }
}
