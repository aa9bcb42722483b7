import GLibKit
import SpeechCore
import Synthesis

/// An SSML document (W3C Speech Synthesis Markup Language 1.1), checked and cut into units of synthesis.
///
/// The document is parsed with GLib's GMarkup (no DTD, no external entities: nothing is fetched), then
/// rebuilt from the parse, so that eSpeak NG sees only what Lector wrote:
/// - a DOCTYPE (and with it any entity declaration) is refused with its line and column;
/// - comments and processing instructions are dropped;
/// - `<audio>` elements are replaced by their fallback content (their `<desc>` is dropped): eSpeak NG would
///   otherwise load the local file they name; `<lexicon>`, `<meta>` and `<metadata>` are dropped, and so is
///   `xml:base`, so no external reference reaches the engine;
/// - text and attribute values, once their character references are decoded, get the cleaning of plain text
///   (`TextCleaner.clean`: control characters read as spaces, terminal escapes dropped): a reference such as
///   `&#1;` would otherwise reach eSpeak NG as the introducer of one of its embedded commands (U+0001
///   followed by e.g. `20A`, which sets the amplitude to 20 of 100) and change the engine's settings for
///   every later request;
/// - text and attribute values are escaped again.
///
/// Units: each top-level `<p>`, `<s>`, `<paragraph>` or `<sentence>` of `<speak>` is one unit, and each run of
/// other top-level content (text, `<prosody>`, `<voice>`, `<break>`, …) between them is one unit. A unit
/// with no text (a lone `<break>`) joins the end of the previous unit (the first unit when none). Each unit is sent to
/// eSpeak NG as a document of its own, wrapped in the root's `<speak …>` start tag, and is one sentence for
/// Lector (position, Next/Previous, the Sentence event); see docs/ARCHITECTURE.md.
struct SSMLDocument {
    /// One unit of synthesis: its text content (trimmed), the SSML document that speaks it, and its
    /// `<mark/>`s with their offsets in `text`.
    struct Unit: Equatable {
        var text: String
        var markup: String
        var marks: [IndexMark] = []
    }

    /// The units, in order; never empty.
    var units: [Unit]
    /// The root's `xml:lang`, if any (a BCP 47 tag).
    var language: String?

    /// Elements dropped with their content.
    fileprivate static let dropped: Set<String> = ["desc", "lexicon", "meta", "metadata"]
    /// Elements dropped, their content kept.
    fileprivate static let unwrapped: Set<String> = ["audio"]
    /// Top-level elements that are a unit of their own.
    fileprivate static let blocks: Set<String> = ["p", "s", "paragraph", "sentence"]

    /// Parses and rebuilds `source`.
    /// - Throws: `MarkupError` (line and column) for a malformed document, a DOCTYPE, a root other than
    ///   `<speak>`, or a document with no text to read.
    static func parse(_ source: String) throws(MarkupError) -> SSMLDocument {
        var builder = UnitBuilder()
        for event in try events(source) { try builder.add(event) }
        builder.finish()
        let built = joined(builder.units, rootTag: builder.rootTag)
        guard !built.isEmpty else {
            throw MarkupError(line: 1, column: 1, message: "the document has no text to read")
        }
        return SSMLDocument(units: built, language: builder.language)
    }

    /// GMarkup's events for `source`, a DOCTYPE refused before parsing, so that it (not an entity it
    /// declares) is what the error names.
    private static func events(_ source: String) throws(MarkupError) -> [MarkupEvent] {
        if let at = Self.position(of: "<!DOCTYPE", in: source) {
            throw MarkupError(line: at.line, column: at.column, message: "DOCTYPE and entity declarations are not allowed in SSML")
        }
        do { return try Markup.events(source) } catch {
            // GMarkup's own words for text before the root ("… an element (e.g. <book>)") are about any XML.
            guard error.message.hasPrefix("Document must begin with an element") else { throw error }
            throw MarkupError(line: error.line, column: error.column,
                              message: "an SSML document starts with <speak> (after an optional XML prolog)")
        }
    }

    /// Cuts the parse into units of tokens, rebuilding the markup Lector keeps.
    private struct UnitBuilder {
        var rootTag = ""
        var language: String?
        var units: [[Token]] = []
        private var current: [Token] = []
        private var depth = 0
        private var dropDepth = 0 // > 0 while inside a dropped element
        private var rootSeen = false
        private var inBlock = false

        mutating func add(_ event: MarkupEvent) throws(MarkupError) {
            switch event.kind {
            case .passthrough(let text):
                let head = text.prefix(9).uppercased()
                if head.hasPrefix("<!DOCTYPE") || head.hasPrefix("<!ENTITY") {
                    throw MarkupError(line: event.line, column: event.column,
                                      message: "DOCTYPE and entity declarations are not allowed in SSML")
                }
            case .start(let name, let attributes):
                if depth == 0 { return try root(name, attributes, at: event) }
                depth += 1
                if dropDepth > 0 || SSMLDocument.dropped.contains(name) { dropDepth += 1; return }
                if SSMLDocument.unwrapped.contains(name) { return }
                if name == "mark" {
                    current.append(.mark(TextCleaner.clean(attributes.first { $0.name == "name" }?.value ?? "")))
                    return
                }
                if depth == 2 && SSMLDocument.blocks.contains(name) {
                    if !current.isEmpty { units.append(current) }
                    current = []
                    inBlock = true
                }
                current.append(.tag(SSMLDocument.startTag(name, attributes)))
            case .end(let name):
                depth -= 1
                if depth == 0 { return }
                if dropDepth > 0 { dropDepth -= 1; return }
                if SSMLDocument.unwrapped.contains(name) || name == "mark" { return }
                current.append(.tag("</\(name)>"))
                if depth == 1 && inBlock {
                    units.append(current)
                    current = []
                    inBlock = false
                }
            case .text(let text):
                guard depth > 0, dropDepth == 0 else { return }
                current.append(.text(TextCleaner.clean(text)))
            }
        }

        private mutating func root(_ name: String, _ attributes: [MarkupEvent.Attribute], at event: MarkupEvent) throws(MarkupError) {
            guard !rootSeen else {
                throw MarkupError(line: event.line, column: event.column, message: "a second root element <\(name)>")
            }
            guard name == "speak" else {
                throw MarkupError(line: event.line, column: event.column, message: "the root element is <\(name)>, not <speak>")
            }
            rootSeen = true
            language = attributes.first { $0.name == "xml:lang" }?.value
            rootTag = SSMLDocument.startTag(name, attributes)
            depth = 1
        }

        mutating func finish() {
            if !current.isEmpty { units.append(current) }
            current = []
        }
    }

    /// The units with text, each wrapped in `rootTag`. A unit with no text (a lone <break>) joins the previous
    /// unit, at its end: eSpeak NG 1.51 ignores a break at the start of a document, while one at the end
    /// replaces the sentence's closing pause. Before the first text it joins the first unit. Each unit's inner
    /// markup is built once and appended to in place, so that a long run of empty units costs as much as their
    /// own markup (not a rebuild of the unit they join for each of them).
    /// The marks of a unit with no text go with it: at the end of the previous unit, or at the start of the first.
    private static func joined(_ units: [[Token]], rootTag: String) -> [Unit] {
        var texts: [String] = []
        var inners: [String] = []
        var marks: [[IndexMark]] = []
        var carried = ""
        var carriedMarks: [IndexMark] = []
        for tokens in units {
            let (text, inner, unitMarks) = Self.content(tokens)
            if text.isEmpty {
                if inners.isEmpty {
                    carried += inner
                    carriedMarks += unitMarks
                } else {
                    inners[inners.count - 1] += inner
                    let end = texts[texts.count - 1].unicodeScalars.count
                    marks[marks.count - 1] += unitMarks.map { IndexMark(name: $0.name, offset: end) }
                }
                continue
            }
            texts.append(text)
            inners.append(carried + inner)
            marks.append(carriedMarks + unitMarks)
            carried = ""
            carriedMarks = []
        }
        return texts.indices.map { Unit(text: texts[$0], markup: rootTag + inners[$0] + "</speak>", marks: marks[$0]) }
    }

    /// The utterance text (the units' texts, one per line), its sentences, one per unit, and its marks (offsets
    /// in that text).
    var sentences: (text: String, sentences: [Sentence], marks: [IndexMark]) {
        var text = ""
        var offset = 0
        var sentences: [Sentence] = []
        var marks: [IndexMark] = []
        for (i, unit) in units.enumerated() {
            if i > 0 { text += "\n"; offset += 1 }
            let count = unit.text.unicodeScalars.count
            sentences.append(Sentence(range: offset..<offset + count, text: unit.text, markup: unit.markup))
            marks += unit.marks.map { IndexMark(name: $0.name, offset: offset + $0.offset) }
            text += unit.text
            offset += count
        }
        return (text, sentences, marks)
    }

    /// The 1-based line and column (in characters) of the first `needle` in `text`, ignoring ASCII case.
    private static func position(of needle: String, in text: String) -> (line: Int, column: Int)? {
        let pattern = Array(needle.uppercased().unicodeScalars)
        let scalars = Array(text.unicodeScalars)
        guard scalars.count >= pattern.count else { return nil }
        var line = 1, column = 1
        for i in 0...(scalars.count - pattern.count) {
            var match = true
            for k in 0..<pattern.count where scalars[i + k].properties.uppercaseMapping != String(pattern[k]) {
                match = false
                break
            }
            if match { return (line, column) }
            if scalars[i] == "\n" { line += 1; column = 1 } else { column += 1 }
        }
        return nil
    }

    // MARK: building units

    fileprivate enum Token { case tag(String), text(String), mark(String) }

    fileprivate static func startTag(_ name: String, _ attributes: [MarkupEvent.Attribute]) -> String {
        var tag = "<" + name
        for a in attributes where a.name != "xml:base" {
            tag += " " + a.name + "=\"" + Markup.escape(TextCleaner.clean(a.value)) + "\""
        }
        return tag + ">"
    }

    /// The text and inner markup (without the root's tags) of the unit made of `tokens`: its text is trimmed
    /// of white space at both ends by trimming the first and last text tokens, so that the markup's content
    /// is exactly the unit's text. A mark is kept in the markup (eSpeak NG ignores it) and placed in the text.
    /// Linear in the tokens' length.
    private static func content(_ tokens: [Token]) -> (text: String, inner: String, marks: [IndexMark]) {
        var tokens = tokens
        if let first = tokens.firstIndex(where: { if case .text(let t) = $0 { return !t.allSatisfy(\.isWhitespace) } else { return false } }) {
            for i in 0..<first { if case .text = tokens[i] { tokens[i] = .text("") } }
            if case .text(let t) = tokens[first] { tokens[first] = .text(String(t.drop(while: \.isWhitespace))) }
            let last = tokens.lastIndex(where: { if case .text(let t) = $0 { return !t.allSatisfy(\.isWhitespace) } else { return false } })!
            for i in (last + 1)..<tokens.count { if case .text = tokens[i] { tokens[i] = .text("") } }
            if case .text(let t) = tokens[last] {
                var s = Substring(t)
                while let c = s.last, c.isWhitespace { s = s.dropLast() }
                tokens[last] = .text(String(s))
            }
        } else {
            tokens = tokens.filter { if case .text = $0 { return false } else { return true } }
        }
        var inner = ""
        var markPlaces: [(name: String, scalar: Int)] = []
        var scalars = 0 // of `inner` so far: counting it again at each mark would be quadratic
        for token in tokens {
            let piece: String
            switch token {
            case .tag(let t): piece = t
            case .text(let t): piece = Markup.escape(t)
            case .mark(let name):
                markPlaces.append((name, scalars))
                piece = "<mark name=\"" + Markup.escape(name) + "\"/>"
            }
            inner += piece
            scalars += piece.unicodeScalars.count
        }
        // The root's tags have no content: the inner markup's content is the unit's.
        let content = SSMLText.content(of: inner)
        return (content.text, inner, markPlaces.map { IndexMark(name: $0.name, offset: content.offsets[$0.scalar]) })
    }
}
