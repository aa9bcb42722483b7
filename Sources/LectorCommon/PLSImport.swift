import GLibKit
import SpeechCore

/// Entries of a W3C Pronunciation Lexicon Specification 1.0 document (https://www.w3.org/TR/pronunciation-lexicon/),
/// read with GLib's GMarkup (no DTD, no external entity: nothing is fetched).
///
/// Each `<lexeme>`'s `<grapheme>`s become entries: its first `<alias>` is the respelling (`say`), and its first
/// `<phoneme>` in eSpeak NG's alphabet (`alphabet="x-espeak"` or `"x-espeak-ng"` on the phoneme or the
/// lexicon) gives eSpeak NG phonemes. Phonemes in IPA or X-SAMPA are not converted: a lexeme with only those is
/// skipped and counted. The lexicon's `xml:lang` (or the lexeme's) becomes the entries' language.
public enum PLSImport {
    /// What an import found.
    public struct Result: Equatable, Sendable {
        /// The entries, in document order.
        public var entries: [LexiconEntry] = []
        /// Lexemes left out: no alias and no phonemes in an alphabet eSpeak NG reads.
        public var skipped = 0
    }

    /// The entries of the PLS document `text`.
    /// - Throws: `LexiconError`: not well-formed (with GLib's line and column), or no `<lexicon>` root.
    public static func entries(_ text: String) throws(LexiconError) -> Result {
        let events: [MarkupEvent]
        do { events = try Markup.events(text) } catch { throw LexiconError("not a PLS document: \(error)") }
        guard let root = events.first(where: { if case .start = $0.kind { true } else { false } }),
              case .start("lexicon", let attributes) = root.kind else {
            throw LexiconError("not a PLS document: its root element is not <lexicon>")
        }
        let language = value("xml:lang", attributes)
        let alphabet = value("alphabet", attributes) ?? "ipa"
        var result = Result()
        var lexeme: Lexeme?
        var field: String?
        for event in events {
            switch event.kind {
            case .start("lexeme", let a): lexeme = Lexeme(language: value("xml:lang", a) ?? language)
            case .start(let name, let a) where lexeme != nil && ["grapheme", "alias", "phoneme"].contains(name):
                field = name
                lexeme!.text = ""
                lexeme!.alphabet = value("alphabet", a) ?? alphabet
            case .text(let t) where field != nil: lexeme!.text += t
            case .end(let name) where name == field:
                lexeme!.finish(name)
                field = nil
            case .end("lexeme"):
                if let l = lexeme { l.entries.isEmpty ? (result.skipped += 1) : (result.entries += l.entries) }
                lexeme = nil
            default: break
            }
        }
        return result
    }

    static func value(_ name: String, _ attributes: [MarkupEvent.Attribute]) -> String? {
        attributes.first { $0.name == name }?.value
    }

    struct Lexeme {
        var language: String?
        var graphemes: [String] = []
        var alias: String?
        var phonemes: String?
        var text = ""
        var alphabet = "ipa"

        mutating func finish(_ name: String) {
            let t = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            guard !t.isEmpty else { return }
            switch name {
            case "grapheme": graphemes.append(t)
            case "alias": if alias == nil { alias = t }
            default:
                if phonemes == nil && ["x-espeak", "x-espeak-ng"].contains(alphabet.lowercased()) { phonemes = t }
            }
        }

        var entries: [LexiconEntry] {
            guard alias != nil || phonemes != nil else { return [] }
            return graphemes.map { LexiconEntry(match: $0, say: alias, phonemes: phonemes, language: language) }
        }
    }
}
