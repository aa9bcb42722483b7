/// The document formats Lector reads, besides plain text and SSML: each is an importer into a text and its
/// `TextStructure`, run in the document worker.
public enum DocumentFormat: String, CaseIterable, Sendable {
    /// Plain text, read as it is.
    case text
    /// HTML or XHTML (a saved web page).
    case html
    /// CommonMark Markdown.
    case markdown
    /// EPUB 2 or 3 (a zip of XHTML with an OPF package document).
    case epub
    /// OpenDocument text (.odt, a zip of XML).
    case odt
    /// Office Open XML word processing (.docx, a zip of XML).
    case docx
    /// PDF.
    case pdf

    /// The content types of the format (shared MIME-info database names), the first the canonical one; the
    /// desktop entry's `MimeType` and MPRIS `SupportedMimeTypes` list them.
    public var contentTypes: [String] {
        switch self {
        case .text: ["text/plain"]
        case .html: ["text/html", "application/xhtml+xml"]
        case .markdown: ["text/markdown", "text/x-markdown"]
        case .epub: ["application/epub+zip"]
        case .odt: ["application/vnd.oasis.opendocument.text"]
        case .docx: ["application/vnd.openxmlformats-officedocument.wordprocessingml.document"]
        case .pdf: ["application/pdf"]
        }
    }

    /// The format of content type `type`, nil for none Lector imports ("application/zip" is not one: the
    /// worker looks inside a zip, see `zipped`).
    public init?(contentType type: String) {
        guard let format = Self.allCases.first(where: { $0.contentTypes.contains(type) }) else { return nil }
        self = format
    }

    /// A format read from a zip container whose content type is not known: told apart by the worker.
    public static let zipped = "application/zip"

    /// Every content type of every format, in `allCases` order.
    public static var allContentTypes: [String] { allCases.flatMap(\.contentTypes) }
}

/// What an importer makes of a document: the text to read and its structure (chapters as scalar offsets
/// into `text`).
public struct ImportedDocument: Equatable, Sendable {
    /// The text, clean (`TextCleaner.clean` leaves it as it is): paragraphs separated by a blank line.
    public var text: String
    /// Title, authors, language and chapters.
    public var structure: TextStructure

    /// A document of `text` and `structure`.
    public init(text: String, structure: TextStructure) {
        self.text = text
        self.structure = structure
    }

    /// The document as the worker sends it on its standard output: header lines (`title`, `author`,
    /// `language`, `chapter LEVEL START`, each a tab-separated line; values on one line), then `text` and the
    /// text's UTF-8 length, then the text itself.
    public var encoded: [UInt8] { encodedHead + Array(text.utf8) }

    /// `encoded` without the text: the header lines, which the text follows (the worker writes the two
    /// separately, so that a long text is not copied once more).
    public var encodedHead: [UInt8] {
        let line = Self.oneLine
        var head = "lector-document 1\n"
        if let title = structure.title { head += "title\t\(line(title))\n" }
        for author in structure.authors { head += "author\t\(line(author))\n" }
        if let language = structure.language { head += "language\t\(line(language))\n" }
        for c in structure.chapters { head += "chapter\t\(c.level)\t\(c.start)\t\(line(c.title))\n" }
        for span in structure.languages { head += Self.spanLine(span) }
        head += "text\t\(text.utf8.count)\n"
        return Array(head.utf8)
    }

    /// The start of a long document's text, sent by the worker before the whole: `lector-start`, the text's
    /// UTF-8 length, how many span lines follow and the title (tab-separated, one line), then the start's
    /// language spans as `encodedHead` writes them (`span START END TAG`), then the text. The whole text begins
    /// with it.
    public static func encodedStart(_ start: DocumentStart) -> [UInt8] {
        var head = "lector-start\t\(start.text.utf8.count)\t\(start.languages.count)\t\(oneLine(start.title ?? ""))\n"
        for span in start.languages { head += spanLine(span) }
        return Array(head.utf8) + Array(start.text.utf8)
    }

    /// The start record at the beginning of `bytes` (see `encodedStart`) and how many bytes it took; nil when
    /// `bytes` do not begin with a whole one.
    public static func decodeStart(_ bytes: [UInt8]) -> (start: DocumentStart, used: Int)? {
        let prefix = Array("lector-start\t".utf8)
        guard bytes.starts(with: prefix), var end = bytes.firstIndex(of: 10) else { return nil }
        let fields = String(decoding: bytes[prefix.count..<end], as: UTF8.self).split(separator: "\t", maxSplits: 2,
                                                                                       omittingEmptySubsequences: false)
        guard fields.count == 3, let count = Int(fields[0]), let spanCount = Int(fields[1]), count >= 0, spanCount >= 0
        else { return nil }
        var languages: [LanguageSpan] = []
        for _ in 0..<spanCount {
            guard let next = bytes[(end + 1)...].firstIndex(of: 10) else { return nil }
            let line = String(decoding: bytes[(end + 1)..<next], as: UTF8.self)
            guard let span = parseSpan(line.split(separator: "\t", maxSplits: 3, omittingEmptySubsequences: false).map(String.init),
                                       after: languages.last) else { return nil }
            languages.append(span)
            end = next
        }
        guard bytes.count - (end + 1) >= count else { return nil }
        let text = String(decoding: bytes[(end + 1)..<(end + 1 + count)], as: UTF8.self)
        return (DocumentStart(text: text, title: fields[2].isEmpty ? nil : String(fields[2]), languages: languages), end + 1 + count)
    }

    /// `value` on one line: line feeds, carriage returns and tabs made spaces.
    static func oneLine(_ value: String) -> String {
        String(value.map { $0 == "\n" || $0 == "\t" || $0 == "\r" ? " " : $0 })
    }

    /// `span START END TAG`: a language span (`TextStructure.languages`), offsets in scalars.
    static func spanLine(_ span: LanguageSpan) -> String {
        "span\t\(span.range.lowerBound)\t\(span.range.upperBound)\t\(oneLine(span.language))\n"
    }

    /// The span a `span` line's fields hold, if it is one that may follow `previous` (sorted, not overlapping,
    /// never empty, as the worker makes them; anything else is not its output).
    static func parseSpan(_ fields: [String], after previous: LanguageSpan?) -> LanguageSpan? {
        guard fields.count == 4, fields[0] == "span", let start = Int(fields[1]), let end = Int(fields[2]),
              start >= 0, start < end, start >= previous?.range.upperBound ?? 0 else { return nil }
        return LanguageSpan(range: start..<end, language: fields[3])
    }

    /// Reads what `encoded` wrote; nil for anything else (a worker that died half way, or garbage).
    public init?(encoded bytes: [UInt8]) {
        var structure = TextStructure()
        var index = 0
        var first = true
        while index < bytes.count {
            guard let end = bytes[index...].firstIndex(of: 10) else { return nil }
            let line = String(decoding: bytes[index..<end], as: UTF8.self)
            index = end + 1
            if first {
                guard line == "lector-document 1" else { return nil }
                first = false
                continue
            }
            let fields = line.split(separator: "\t", maxSplits: 3, omittingEmptySubsequences: false).map(String.init)
            switch (fields.first, fields.count) {
            case ("title", 2): structure.title = fields[1]
            case ("author", 2): structure.authors.append(fields[1])
            case ("language", 2): structure.language = fields[1]
            case ("chapter", 4):
                guard let level = Int(fields[1]), let start = Int(fields[2]) else { return nil }
                structure.chapters.append(Chapter(title: fields[3], start: start, level: level))
            case ("span", 4):
                guard let span = Self.parseSpan(fields, after: structure.languages.last) else { return nil }
                structure.languages.append(span)
            case ("text", 2):
                guard let count = Int(fields[1]), count == bytes.count - index else { return nil }
                self.init(text: String(decoding: bytes[index...], as: UTF8.self), structure: structure)
                return
            default: return nil
            }
        }
        return nil
    }
}

/// The start of a long document, sent by the worker before the whole (`ImportedDocument.encodedStart`): the
/// whole text begins with `text`.
public struct DocumentStart: Equatable, Sendable {
    /// The text of the first pages or content documents.
    public var text: String
    /// The document's title, if it has one.
    public var title: String?
    /// The language marks within `text` (as `TextStructure.languages`, elements still open ending with `text`).
    public var languages: [LanguageSpan]

    /// A start of `text`, with its `title` and `languages`.
    public init(text: String, title: String?, languages: [LanguageSpan] = []) {
        self.text = text
        self.title = title
        self.languages = languages
    }
}

/// What the daemon and the document worker (`lector-document`) agree on besides `ImportedDocument`'s encoding.
public enum DocumentWorkerWire {
    /// The environment variable that carries an encrypted PDF's password to the worker (never its arguments).
    public static let passwordVariable = "LECTOR_DOCUMENT_PASSWORD"
    /// What starts the one line on standard output that says why a document cannot be read.
    public static let failurePrefix = "lector-error "

    /// The argument that starts a worker waiting for its document (`lector-document --wait`): its standard
    /// input is a Unix socket on which one `handoff` message arrives, with the document's open file.
    public static let waitArgument = "--wait"
    /// The longest `handoff` message (a format name and a password of up to 4 KiB).
    public static let maximumHandoffBytes = 4_160

    /// The message that hands a waiting worker its document (the open file travels with it, `SCM_RIGHTS`):
    /// the format (a `DocumentFormat` raw value or "zip"), then, when there is a password, a newline and the
    /// password (which may hold any bytes, newlines included). Nil when it would exceed `maximumHandoffBytes`.
    public static func handoff(format: String, password: String?) -> [UInt8]? {
        let bytes = Array(format.utf8) + (password.map { [10] + Array($0.utf8) } ?? [])
        guard !format.isEmpty, !format.utf8.contains(10), bytes.count <= maximumHandoffBytes else { return nil }
        return bytes
    }

    /// The format and password a `handoff` message holds; nil for a message that is not one (empty).
    public static func parseHandoff(_ bytes: [UInt8]) -> (format: String, password: String?)? {
        guard let newline = bytes.firstIndex(of: 10) else {
            return bytes.isEmpty ? nil : (String(decoding: bytes, as: UTF8.self), nil)
        }
        guard newline > 0 else { return nil }
        return (String(decoding: bytes[..<newline], as: UTF8.self), String(decoding: bytes[(newline + 1)...], as: UTF8.self))
    }
}
