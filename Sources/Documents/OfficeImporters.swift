import SpeechCore
import XMLKit

/// OpenDocument text (OASIS OpenDocument 1.3, part 3): `content.xml`'s body, headings (`text:h` with their
/// outline level) as chapters, notes left out; title, authors and language from `meta.xml`.
enum ODTImporter {
    /// The text and structure of the ODT in `entries`.
    static func read(_ entries: ZipEntries) throws(ImportError) -> ImportedDocument {
        guard let bytes = try entries.contents("content.xml") else { throw .malformed("not an OpenDocument text: no content.xml") }
        let content: MarkupElement
        do { content = try MarkupParser.xml(bytes) } catch { throw .malformed("the document's content.xml is malformed: \(error)") }
        let walker = walk(content)
        var structure = TextStructure()
        if let metaBytes = try? entries.contents("meta.xml"), let meta = try? MarkupParser.xml(metaBytes) {
            // The document's first author (meta:initial-creator), then its last editor (dc:creator), once each.
            structure = DublinCore.structure(of: meta, creators: ["initial-creator", "creator"])
        }
        if structure.language == nil, let bytes = try? entries.contents("styles.xml"), let styles = try? MarkupParser.xml(bytes) {
            structure.language = defaultLanguage(styles)
        }
        structure.chapters = walker.builder.chapters
        structure.languages = walker.languageSpans
        return ImportedDocument(text: walker.builder.text, structure: structure)
    }

    /// `content.xml`'s text walked, each paragraph and span in the language of its automatic style.
    static func walk(_ content: MarkupElement) -> DocumentWalker {
        var walker = DocumentWalker(role: role)
        let styles = automaticStyleLanguages(content)
        walker.language = { e in e.attributes["style-name"].flatMap { styles[$0] } }
        walker.walk(content.first("text") ?? content)
        return walker
    }

    /// The languages the automatic styles of `content` set (`style:text-properties` `fo:language` and
    /// `fo:country`), by style name: the direct formatting of a paragraph or span, the author's own marks.
    /// Common styles are left out: a template's "Standard" names a language whatever the text is in.
    static func automaticStyleLanguages(_ content: MarkupElement) -> [String: String] {
        var found: [String: String] = [:]
        for style in content.first("automatic-styles")?.elements ?? [] where style.name == "style" {
            guard let name = style.attributes["name"], let properties = style.first("text-properties"),
                  let tag = tag(properties) else { continue }
            found[name] = tag
        }
        return found
    }

    /// The document's default language: the paragraph family's default style in `styles.xml`.
    static func defaultLanguage(_ styles: MarkupElement) -> String? {
        styles.all("default-style").first { $0.attributes["family"] == "paragraph" }?.first("text-properties").flatMap(tag)
    }

    /// The BCP 47 tag of `fo:language` and `fo:country` (XSL 1.1) in `properties`: nil when it sets no
    /// language, "" for none (`zxx`, `none`: no linguistic content, left to detection).
    static func tag(_ properties: MarkupElement) -> String? {
        guard let language = properties.attributes["fo:language"] ?? properties.attributes["language"] else { return nil }
        if language == "zxx" || language == "none" { return "" }
        guard let country = properties.attributes["fo:country"] ?? properties.attributes["country"], country != "none",
              !country.isEmpty else { return language }
        return language + "-" + country
    }

    /// The role of each element of `office:text` (local names).
    static func role(_ e: MarkupElement) -> Role {
        switch e.name {
        case "h": .heading(Int(e.attributes["outline-level"] ?? "") ?? 1)
        case "p", "list", "table", "section", "text": .block
        case "list-item", "table-row": .item
        case "table-cell": .cell
        case "line-break": .lineBreak
        case "s", "tab": .space
        case "note", "sequence-decls", "tracked-changes", "forms", "table-columns", "table-column", "annotation",
             "bookmark-ref", "note-citation": .skip
        case "frame":
            HTMLImporter.collapse(e.first("desc")?.textContent ?? e.first("title")?.textContent ?? "").isEmpty
                ? .skip : .image(HTMLImporter.collapse(e.first("desc")?.textContent ?? e.first("title")?.textContent ?? ""))
        default: .inline
        }
    }
}

/// Word processing documents (ECMA-376, "WordprocessingML"): `word/document.xml`'s paragraphs, those styled
/// `Title` or `Heading N` (or with an outline level) as headings, footnote and endnote references left out;
/// title and authors from `docProps/core.xml`.
enum DOCXImporter {
    /// The text and structure of the DOCX in `entries`.
    static func read(_ entries: ZipEntries) throws(ImportError) -> ImportedDocument {
        guard let bytes = try entries.contents("word/document.xml") else { throw .malformed("not a Word document: no word/document.xml") }
        let document: MarkupElement
        do { document = try MarkupParser.xml(bytes) } catch { throw .malformed("the document's word/document.xml is malformed: \(error)") }
        let walker = walk(document)
        var structure = TextStructure()
        if let coreBytes = try? entries.contents("docProps/core.xml"), let core = try? MarkupParser.xml(coreBytes) {
            structure = DublinCore.structure(of: core)
        }
        if structure.language == nil, let bytes = try? entries.contents("word/styles.xml"), let styles = try? MarkupParser.xml(bytes) {
            structure.language = defaultLanguage(styles)
        }
        structure.chapters = walker.builder.chapters
        structure.languages = walker.languageSpans
        return ImportedDocument(text: walker.builder.text, structure: structure)
    }

    /// `word/document.xml`'s body walked, each run and paragraph in the language its properties set.
    static func walk(_ document: MarkupElement) -> DocumentWalker {
        var walker = DocumentWalker(role: role)
        walker.language = language
        walker.walk(document.first("body") ?? document)
        return walker
    }

    /// The document's default language: the document defaults' run properties in `word/styles.xml`
    /// (`w:docDefaults/w:rPrDefault/w:rPr/w:lang`).
    static func defaultLanguage(_ styles: MarkupElement) -> String? {
        styles.first("docDefaults")?.first("rPrDefault")?.first("lang")?.attributes["val"]
    }

    /// The language a run (`w:r`) or paragraph (`w:p`) sets in its own properties (`w:rPr/w:lang w:val`;
    /// a paragraph's in `w:pPr/w:rPr`); nil for any other element or none set.
    static func language(_ e: MarkupElement) -> String? {
        let properties: MarkupElement?
        switch e.name {
        case "r": properties = e.elements.first { $0.name == "rPr" }
        case "p": properties = e.elements.first { $0.name == "pPr" }?.elements.first { $0.name == "rPr" }
        default: return nil
        }
        return properties?.elements.first { $0.name == "lang" }?.attributes["val"]
    }

    /// The role of each WordprocessingML element (local names).
    static func role(_ e: MarkupElement) -> Role {
        switch e.name {
        case "p": headingLevel(e).map { .heading($0) } ?? .block
        case "tbl": .block
        case "tr": .item
        case "tc": .cell
        case "br", "cr": .lineBreak
        case "tab": .space
        case "pPr", "rPr", "tblPr", "tblGrid", "trPr", "tcPr", "sectPr", "instrText", "delText", "footnoteReference",
             "endnoteReference", "commentReference", "fldChar", "proofErr", "bookmarkStart", "bookmarkEnd": .skip
        case "drawing", "pict":
            (e.first("docPr")?.attributes["descr"]).map(HTMLImporter.collapse).flatMap { $0.isEmpty ? nil : Role.image($0) } ?? .skip
        default: .inline
        }
    }

    /// The heading level of paragraph `p`: its outline level (0-based) plus one, or the N of a `HeadingN`
    /// style, 1 for the `Title` style; nil for a body paragraph.
    static func headingLevel(_ p: MarkupElement) -> Int? {
        guard let properties = p.elements.first(where: { $0.name == "pPr" }) else { return nil }
        if let level = properties.elements.first(where: { $0.name == "outlineLvl" })?.attributes["val"].flatMap({ Int($0) }), level < 9 {
            return level + 1
        }
        guard let style = properties.elements.first(where: { $0.name == "pStyle" })?.attributes["val"] else { return nil }
        if style == "Title" { return 1 }
        let lower = style.lowercased()
        guard lower.hasPrefix("heading"), let n = Int(lower.dropFirst("heading".count)), (1...9).contains(n) else { return nil }
        return n
    }
}

/// The Dublin Core elements that EPUB's package metadata, ODT's `meta.xml` and DOCX's `docProps/core.xml` share
/// (local names: `title`, `creator`, `language`; ISO 15836).
enum DublinCore {
    /// Title (the first non-empty `title`), authors (the elements named by `creators`, in document order per
    /// name, each author once) and language (the first non-empty `language`) found under `metadata`, with
    /// white space collapsed.
    static func structure(of metadata: MarkupElement, creators: [String] = ["creator"]) -> TextStructure {
        let text = { (e: MarkupElement) in HTMLImporter.collapse(e.textContent) }
        var structure = TextStructure()
        structure.title = metadata.all("title").map(text).first { !$0.isEmpty }
        for author in creators.flatMap({ metadata.all($0) }).map(text) where !author.isEmpty && !structure.authors.contains(author) {
            structure.authors.append(author)
        }
        structure.language = metadata.all("language").map(text).first { !$0.isEmpty }
        return structure
    }
}
