import SpeechCore
import XMLKit

/// What an element of a document is to a listener; each markup vocabulary (HTML, OpenDocument, WordprocessingML)
/// maps its elements to these.
enum Role: Equatable {
    /// Not read, nor anything in it (scripts, navigation, footnote markers).
    case skip
    /// Read as part of the surrounding text.
    case inline
    /// A paragraph or other block: a blank line before and after.
    case block
    /// A heading of this level (1 the highest): its own sentence, a chapter, a blank line after.
    case heading(Int)
    /// A list item or a table row: its own line, so its own sentence.
    case item
    /// A table cell: separated from the previous cell of its row by a comma; the paragraphs and headings in
    /// it are read as parts of its row's sentence.
    case cell
    /// A line break.
    case lineBreak
    /// A space (a tab, a space element).
    case space
    /// An image or drawing described by this text (`alt`): read as a sentence of its own.
    case image(String)
}

/// Turns a parsed document into text with `TextBuilder`, element by element as `role` says, recording where
/// each element with an `id` starts (for navigation targets), each heading as a chapter, and the language each
/// element declares (`language`) as language spans.
struct DocumentWalker {
    var builder = TextBuilder()
    /// The language spans of the text so far (`languageSpans` resolves them).
    var languages = LanguageSpanBuilder()
    /// The language an element declares: nil when it declares none, "" when it says the language is unknown.
    /// By default (X)HTML's `xml:lang`, else `lang` (HTML Living Standard, "The lang and xml:lang attributes").
    var language: (MarkupElement) -> String? = DocumentWalker.markupLanguage
    /// Scalar offsets of the elements with an `id`, by `prefix + id` (`prefix` set by the caller).
    var ids: [String: Int] = [:]
    /// What `ids` keys start with (an EPUB content document's path and "#").
    var idPrefix = ""
    /// Whether headings become chapters.
    var headingsAreChapters = true
    let role: (MarkupElement) -> Role
    /// Whether the cell being walked is not the first of its row.
    private var cellsInRow = 0
    /// How many table cells enclose the element being walked: blocks and headings inside one are inline, so
    /// that a row is one sentence (a word processor puts every cell's text in a paragraph of its own).
    private var cellDepth = 0

    init(role: @escaping (MarkupElement) -> Role) {
        self.role = role
    }

    /// `xml:lang`, else `lang`, of an (X)HTML element (an XML parser gives `xml:lang` under both names).
    static func markupLanguage(_ element: MarkupElement) -> String? {
        element.attributes["xml:lang"] ?? element.attributes["lang"]
    }

    /// The language spans of the text built, every element closed (see `TextStructure.languages`).
    var languageSpans: [LanguageSpan] {
        LanguageSpan.absorbingPunctuation(languages.spans(upTo: builder.scalars), in: builder.text)
    }

    /// Walks `element` and its subtree (depth bounded by `MarkupParser.maximumDepth`), in the language it
    /// declares.
    mutating func walk(_ element: MarkupElement) {
        let r = role(element)
        if r == .skip { return }
        languages.enter(language(element), at: builder.scalars)
        defer { languages.leave(at: builder.scalars) }
        if let id = element.attributes["id"] ?? element.attributes["xml:id"], !id.isEmpty, ids[idPrefix + id] == nil {
            ids[idPrefix + id] = builder.nextStart
        }
        switch r {
        case .skip: return
        case .inline: walkChildren(element)
        case .block where cellDepth > 0, .heading where cellDepth > 0:
            builder.append(" ")
            walkChildren(element)
            builder.append(" ")
        case .block:
            builder.breakParagraph()
            walkChildren(element)
            builder.breakParagraph()
        case .heading(let level):
            builder.breakParagraph()
            let start = builder.nextStart, mark = builder.mark
            walkChildren(element)
            if headingsAreChapters { builder.addChapter(builder.text(from: mark), start: start, level: level) }
            builder.breakParagraph()
        case .item:
            builder.breakLine()
            let outer = cellsInRow, outerDepth = cellDepth
            cellsInRow = 0
            cellDepth = 0
            walkChildren(element)
            cellsInRow = outer
            cellDepth = outerDepth
            builder.breakLine()
        case .cell:
            if cellsInRow > 0 { builder.attach(",") }
            cellsInRow += 1
            cellDepth += 1
            builder.append(" ")
            walkChildren(element)
            builder.append(" ")
            cellDepth -= 1
        case .lineBreak: builder.breakLine()
        case .space: builder.append(" ")
        case .image(let description):
            builder.breakLine()
            builder.append(description)
            builder.breakLine()
        }
    }

    private mutating func walkChildren(_ element: MarkupElement) {
        for child in element.children {
            switch child {
            case .text(let t): builder.append(t)
            case .element(let e): walk(e)
            }
        }
    }
}
