import SpeechCore
import XMLKit

/// HTML and XHTML: the article (`main`, else `article`, else an element with `role="main"`, else the body),
/// without scripts, styles, navigation (`HTMLNavigation`: landmarks, generated manuals' Prev/Up/Next bars,
/// breadcrumbs, skip links, cookie banners), asides, forms and the page's header and footer; headings become
/// chapters; title, authors and language from `<title>`, `<meta name="author">` and `lang`.
enum HTMLImporter {
    /// Elements never read, wherever they are (HTML Living Standard element names).
    static let skipped: Set<String> = [
        "head", "script", "style", "noscript", "template", "nav", "aside", "form", "button", "select", "textarea",
        "input", "iframe", "object", "embed", "svg", "math", "canvas", "audio", "video", "map", "dialog", "menu",
    ]
    /// Block elements: a paragraph break before and after.
    static let blocks: Set<String> = [
        "p", "div", "section", "article", "main", "blockquote", "pre", "figure", "figcaption", "dl", "dt", "dd",
        "address", "hr", "ul", "ol", "table", "thead", "tbody", "tfoot", "caption", "details", "summary", "body",
        "html", "center", "fieldset", "legend", "hgroup",
    ]

    /// The text and structure of the HTML document in `bytes`. Bytes without a declared encoding are taken as
    /// UTF-8 when they are valid UTF-8 (libxml2 would take ISO-8859-1).
    static func read(_ bytes: [UInt8]) throws(ImportError) -> ImportedDocument {
        let parsed: MarkupElement?
        do { parsed = try MarkupParser.html(bytes, encoding: declaresEncoding(bytes) ? nil : "UTF-8") } catch {
            throw .malformed("cannot read the HTML whole: \(error)")
        }
        guard let root = parsed else { throw .nothingToRead("the HTML holds no text") }
        var structure = metadata(root)
        let article = article(of: root)
        var walker = DocumentWalker(role: role(in: article))
        // The root's `lang` is the document's language (`structure.language`), not a mark: see `inheritedLanguage`.
        walker.language = { $0 === root ? nil : DocumentWalker.markupLanguage($0) }
        walker.languages.enter(inheritedLanguage(of: article, in: root), at: 0)
        walker.walk(article)
        structure.chapters = walker.builder.chapters
        structure.languages = walker.languageSpans
        return ImportedDocument(text: walker.builder.text, structure: structure)
    }

    /// Title, authors and language from the head of `root` and its `lang` attribute.
    static func metadata(_ root: MarkupElement) -> TextStructure {
        var structure = TextStructure()
        let head = root.first("head")
        structure.title = head?.first("title").map { collapse($0.textContent) }.flatMap { $0.isEmpty ? nil : $0 }
        for meta in head?.all("meta") ?? [] {
            let name = meta.attributes["name"]?.lowercased()
            if name == "author" || name == "dc.creator", let content = meta.attributes["content"], !collapse(content).isEmpty {
                structure.authors.append(collapse(content))
            }
        }
        let lang = root.attributes["lang"] ?? root.attributes["xml:lang"]
        structure.language = lang.flatMap { $0.isEmpty ? nil : $0 }
        return structure
    }

    /// The element holding the article: the first `main`, else the first `article`, else the first element
    /// with `role="main"`, else the densest block (`densest`), else `body`, else the root.
    static func article(of root: MarkupElement) -> MarkupElement {
        if let marked = root.first("main") ?? root.first("article") ?? first(in: root, where: { $0.attributes["role"] == "main" }) {
            return marked
        }
        let body = root.first("body") ?? root
        return densest(in: body) ?? body
    }

    /// The text-density choice for a page that marks no article: the block (`div`, `section`, `td`) whose
    /// own paragraphs (`p` children) hold the most text, when that is at least half of all the text in the
    /// page's paragraphs; nil otherwise (the whole body is read).
    static func densest(in body: MarkupElement) -> MarkupElement? {
        var best: (MarkupElement, Int)?
        var total = 0
        var stack = [body]
        while let e = stack.popLast() {
            var own = 0
            for child in e.elements {
                if child.name == "p" {
                    own += child.textContent.count
                } else if !skipped.contains(child.name) {
                    stack.append(child)
                }
            }
            total += own
            if ["div", "section", "td"].contains(e.name), own > (best?.1 ?? 0) { best = (e, own) }
        }
        guard let (element, own) = best, own * 2 >= total, total > 0 else { return nil }
        return element
    }

    /// The language marked where `target` (a descendant of `root`) begins, from its ancestors' `lang`/`xml:lang`
    /// below the root (the nearest one that declares one; its own not counted): nil when none declares one, ""
    /// when the nearest says it is unknown. The root's own `lang` is the document's language, which is only a
    /// default where detection is unsure: templates often declare one whatever the page is written in.
    static func inheritedLanguage(of target: MarkupElement, in root: MarkupElement) -> String? {
        if target === root { return nil }
        var stack: [(MarkupElement, String?)] = root.elements.reversed().map { ($0, nil) }
        while let (e, inherited) = stack.popLast() {
            if e === target { return inherited }
            let own = DocumentWalker.markupLanguage(e) ?? inherited
            stack.append(contentsOf: e.elements.reversed().map { ($0, own) })
        }
        return nil
    }

    static func first(in root: MarkupElement, where test: (MarkupElement) -> Bool) -> MarkupElement? {
        var stack = [root]
        while let e = stack.popLast() {
            if test(e) { return e }
            stack.append(contentsOf: e.elements.reversed())
        }
        return nil
    }

    /// The role of each element of an (X)HTML document whose article is `article`.
    static func role(in article: MarkupElement) -> (MarkupElement) -> Role {
        { element in
            let name = element.name.lowercased()
            if skipped.contains(name) || isNoteMarker(element) || element.attributes["hidden"] != nil
                || element.attributes["aria-hidden"] == "true" { return .skip }
            if (name == "header" || name == "footer") && element !== article { return .skip }
            if element !== article, HTMLNavigation.isNavigation(element) { return .skip }
            if name.count == 2, name.first == "h", let level = Int(String(name.last!)), (1...6).contains(level) {
                return .heading(level)
            }
            switch name {
            case "li", "tr", "dt": return .item
            case "td", "th": return .cell
            case "br": return .lineBreak
            case "img", "area":
                let alt = collapse(element.attributes["alt"] ?? "")
                return alt.isEmpty ? .skip : .image(alt)
            default: return blocks.contains(name) ? .block : .inline
            }
        }
    }

    /// Whether `element` is a footnote marker or a note's way back, which are not read in the middle of a
    /// sentence: DPUB-ARIA roles `doc-noteref`/`doc-backlink`, EPUB `epub:type="noteref"`, pandoc's and
    /// cmark-gfm's classes and attributes (`data-footnote-ref`, `data-footnote-backref`), and a `sup` that holds
    /// only a link within the page.
    static func isNoteMarker(_ element: MarkupElement) -> Bool {
        let a = element.attributes
        if let role = a["role"], role == "doc-noteref" || role == "doc-backlink" { return true }
        if let type = a["epub:type"] ?? a["type"], type.split(separator: " ").contains(where: { $0 == "noteref" }) { return true }
        if a["data-footnote-ref"] != nil || a["data-footnote-backref"] != nil { return true }
        if let cls = a["class"], cls.split(separator: " ").contains(where: { $0 == "footnote-ref" || $0 == "footnote-back" || $0 == "footnote-backref" }) {
            return true
        }
        if element.name == "sup", element.children.count == 1, case .element(let link) = element.children[0],
           link.name == "a", link.attributes["href"]?.hasPrefix("#") == true { return true }
        return false
    }

    /// Whether the first KiB of `bytes` declares an encoding (`charset=` in a meta element, or an XML declaration
    /// with `encoding=`), or `bytes` are not valid UTF-8.
    static func declaresEncoding(_ bytes: [UInt8]) -> Bool {
        let head = String(decoding: bytes.prefix(1024), as: UTF8.self).lowercased()
        if head.contains("charset=") || head.contains("encoding=") { return true }
        return String(validating: bytes, as: UTF8.self) == nil
    }

    static func collapse(_ s: String) -> String {
        s.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }
}

/// Why a document gives nothing to read: one line each, sent back to the client as it is.
enum ImportError: Error, CustomStringConvertible {
    /// The document is not of its format or is broken (the parser's or libarchive's message).
    case malformed(String)
    /// It is DRM-protected (an EPUB with encrypted content documents).
    case protected(String)
    /// It has no text layer or no text at all.
    case nothingToRead(String)
    /// It needs a password (an encrypted PDF).
    case needsPassword(String)

    var description: String {
        switch self {
        case .malformed(let s), .protected(let s), .nothingToRead(let s), .needsPassword(let s): s
        }
    }
}
