import ArchiveKit
import SpeechCore
import XMLKit

/// EPUB 2 and 3 (EPUB 3.3, "Open Container Format" and "Package document"): the spine's content documents in
/// order, chapters from the navigation document (EPUB 3 `nav epub:type="toc"`) or the NCX (EPUB 2), else
/// from headings; title, authors and language from the package metadata. DRM-protected books are refused.
enum EPUBImporter {
    /// The text and structure of the EPUB in `bytes`.
    /// `onStart` gets the text of the first content documents once they hold `DocumentWorker.startScalars`,
    /// when more follow, with the title and the language marks in that text.
    static func read(_ bytes: [UInt8], onStart: ((DocumentStart) -> Void)? = nil) throws(ImportError) -> ImportedDocument {
        let entries = try ZipEntries.read(bytes)
        try refuseDRM(entries)
        guard let container = try entries.contents("META-INF/container.xml"),
              let opfPath = (try? MarkupParser.xml(container))?.first("rootfile")?.attributes["full-path"],
              let opfBytes = try entries.contents(opfPath) else {
            throw .malformed("not an EPUB: no META-INF/container.xml naming a package document")
        }
        let package: MarkupElement
        do { package = try MarkupParser.xml(opfBytes) } catch { throw .malformed("the EPUB's package document is malformed: \(error)") }
        let base = directory(of: opfPath)
        var manifest: [String: (href: String, type: String, properties: String)] = [:]
        for item in package.all("item") {
            guard let id = item.attributes["id"], let href = item.attributes["href"] else { continue }
            manifest[id] = (resolve(href, against: base), item.attributes["media-type"] ?? "", item.attributes["properties"] ?? "")
        }
        // A content document's header and footer are the chapter's own, not a web page's.
        let html = HTMLImporter.role(in: package)
        var walker = DocumentWalker { e in e.name == "header" || e.name == "footer" ? .block : html(e) }
        var starts: [String: Int] = [:]
        var onStart = onStart
        let title = metadata(package).title
        for itemref in package.all("itemref") {
            if let send = onStart, walker.builder.scalars >= DocumentWorker.startScalars {
                send(DocumentStart(text: walker.builder.text, title: title, languages: walker.languageSpans))
                onStart = nil
            }
            guard let idref = itemref.attributes["idref"], let item = manifest[idref], starts[item.href] == nil,
                  let content = try entries.contents(item.href),
                  let document = try contentDocument(content, path: item.href) else { continue }
            starts[item.href] = walker.builder.nextStart
            walker.idPrefix = item.href + "#"
            walker.builder.breakParagraph()
            // As in HTML, the root's `xml:lang` is not a mark (pandoc writes the book's language on every one),
            // and the book's `dc:language` is only the default where detection is unsure.
            let body = document.first("body") ?? document
            walker.language = { $0 === document ? nil : DocumentWalker.markupLanguage($0) }
            walker.languages.enter(HTMLImporter.inheritedLanguage(of: body, in: document), at: walker.builder.scalars)
            walker.walk(body)
            walker.languages.leave(at: walker.builder.scalars)
            walker.builder.breakParagraph()
        }
        guard !walker.builder.text.isEmpty else { throw .nothingToRead("the EPUB holds no text") }
        var structure = metadata(package)
        let navigation = tableOfContents(manifest: Array(manifest.values), spineToc: package.first("spine")?.attributes["toc"]
            .flatMap { manifest[$0]?.href }, entries: entries)
        let located = navigation.compactMap { entry -> Chapter? in
            let (path, fragment) = split(entry.href)
            let start = fragment.flatMap { walker.ids[path + "#" + $0] } ?? starts[path]
            return start.map { Chapter(title: entry.title, start: $0, level: entry.level) }
        }
        if !located.isEmpty { walker.builder.setChapters(located) }
        structure.chapters = walker.builder.chapters
        structure.languages = walker.languageSpans
        return ImportedDocument(text: walker.builder.text, structure: structure)
    }

    /// The content document in `bytes` parsed (errors repaired), nil when it holds no XML at all (it is
    /// skipped); one that libxml2 could not parse whole is refused, so that no chapter is read cut short.
    static func contentDocument(_ bytes: [UInt8], path: String) throws(ImportError) -> MarkupElement? {
        do { return try MarkupParser.xml(bytes, recover: true) } catch {
            guard error.stoppedEarly else { return nil }
            throw .malformed("cannot read \(path) of the EPUB whole: \(error)")
        }
    }

    /// Refuses a book whose content is encrypted (META-INF/encryption.xml naming any resource with another
    /// algorithm than font obfuscation, IDPF's or Adobe's), or that carries rights (META-INF/rights.xml).
    static func refuseDRM(_ entries: ZipEntries) throws(ImportError) {
        let refusal = ImportError.protected("this EPUB is DRM-protected: Lector cannot read it")
        if entries.names.contains("META-INF/rights.xml") { throw refusal }
        guard let bytes = try entries.contents("META-INF/encryption.xml") else { return }
        guard let encryption = try? MarkupParser.xml(bytes) else { throw refusal }
        let fontObfuscation: Set<String> = ["http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"]
        for method in encryption.all("EncryptionMethod") where !fontObfuscation.contains(method.attributes["Algorithm"] ?? "") {
            throw refusal
        }
    }

    /// Title, authors (`dc:creator`, in order) and language from the package's metadata.
    static func metadata(_ package: MarkupElement) -> TextStructure {
        package.first("metadata").map { DublinCore.structure(of: $0) } ?? TextStructure()
    }

    /// One entry of a table of contents: its title, target (a path in the zip, with a fragment) and depth.
    struct NavigationEntry {
        var title: String
        var href: String
        var level: Int
    }

    /// The book's table of contents: the EPUB 3 navigation document's `toc` nav, else the NCX.
    static func tableOfContents(manifest: [(href: String, type: String, properties: String)], spineToc: String?,
                                entries: ZipEntries) -> [NavigationEntry] {
        if let nav = manifest.first(where: { $0.properties.split(separator: " ").contains("nav") }),
           let bytes = try? entries.contents(nav.href), let doc = try? MarkupParser.xml(bytes, recover: true) {
            let navs = doc.all("nav")
            let toc = navs.first { ($0.attributes["epub:type"] ?? $0.attributes["type"] ?? "").contains("toc") } ?? navs.first
            if let list = toc?.first("ol") {
                var found: [NavigationEntry] = []
                collect(list, level: 1, base: directory(of: nav.href), into: &found)
                if !found.isEmpty { return found }
            }
        }
        let ncxPath = spineToc ?? manifest.first { $0.type == "application/x-dtbncx+xml" }?.href
        guard let ncxPath, let bytes = try? entries.contents(ncxPath), let ncx = try? MarkupParser.xml(bytes, recover: true),
              let map = ncx.first("navMap") else { return [] }
        var found: [NavigationEntry] = []
        var stack = map.elements.filter { $0.name == "navPoint" }.reversed().map { ($0, 1) }
        while let (point, level) = stack.popLast() {
            if let label = point.first("navLabel").map({ HTMLImporter.collapse($0.textContent) }),
               let src = point.elements.first(where: { $0.name == "content" })?.attributes["src"] {
                found.append(NavigationEntry(title: label, href: resolve(src, against: directory(of: ncxPath)), level: level))
            }
            stack.append(contentsOf: point.elements.filter { $0.name == "navPoint" }.reversed().map { ($0, level + 1) })
        }
        return found
    }

    /// The links of an EPUB 3 navigation list, depth first.
    private static func collect(_ list: MarkupElement, level: Int, base: String, into found: inout [NavigationEntry]) {
        guard level <= 16 else { return }
        for item in list.elements where item.name == "li" {
            if let link = item.elements.first(where: { $0.name == "a" }), let href = link.attributes["href"] {
                found.append(NavigationEntry(title: HTMLImporter.collapse(link.textContent), href: resolve(href, against: base), level: level))
            }
            if let sub = item.elements.first(where: { $0.name == "ol" }) { collect(sub, level: level + 1, base: base, into: &found) }
        }
    }

    /// The folder part of a path in the zip ("OEBPS/" for "OEBPS/content.opf").
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return String(path[...slash])
    }

    /// `href` (percent-encoded, relative, maybe with "..") as a path in the zip, its fragment kept.
    static func resolve(_ href: String, against base: String) -> String {
        let (path, fragment) = split(href)
        var parts: [Substring] = []
        for part in (base + percentDecoded(path)).split(separator: "/", omittingEmptySubsequences: true) {
            if part == ".." { _ = parts.popLast() } else if part != "." { parts.append(part) }
        }
        return parts.joined(separator: "/") + (fragment.map { "#" + $0 } ?? "")
    }

    static func split(_ href: String) -> (String, String?) {
        guard let hash = href.firstIndex(of: "#") else { return (href, nil) }
        return (String(href[..<hash]), String(href[href.index(after: hash)...]))
    }

    static func percentDecoded(_ s: String) -> String {
        guard s.contains("%") else { return s }
        var bytes: [UInt8] = []
        var it = Array(s.utf8)[...]
        while let b = it.popFirst() {
            if b == UInt8(ascii: "%"), it.count >= 2, let v = UInt8(String(decoding: it.prefix(2), as: UTF8.self), radix: 16) {
                bytes.append(v)
                it = it.dropFirst(2)
            } else {
                bytes.append(b)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// The entries of a zip container that importers read (XML and XHTML; images, fonts and media are listed
/// but never decompressed). An entry is decompressed when it is first asked for (`ZipReader`), so that a
/// book's first chapters are read before the rest is decompressed.
final class ZipEntries {
    /// All entries' names.
    let names: [String]
    private let reader: ZipReader
    private var read: [String: [UInt8]] = [:]

    static let readExtensions: Set<String> = ["xml", "opf", "ncx", "xhtml", "html", "htm", "xht", "rels"]

    /// Whether entry `name` is one importers read (its extension is one of `readExtensions`): those are kept
    /// when passed on the way to another (`ZipReader`), so a book zipped in any order is read in one pass.
    static func isRead(_ name: String) -> Bool {
        readExtensions.contains(name.split(separator: ".").last.map { $0.lowercased() } ?? "")
    }

    private init(_ reader: ZipReader) {
        self.reader = reader
        names = reader.names
    }

    /// Lists the entries of the zip in `bytes`. - Throws: `.malformed` for what is not a zip, or broken.
    static func read(_ bytes: [UInt8]) throws(ImportError) -> ZipEntries {
        do { return ZipEntries(try ZipReader(bytes, keeping: isRead)) } catch { throw .malformed(error.description) }
    }

    /// The contents of entry `name` when it is one importers read (`readExtensions`), nil when there is none.
    /// - Throws: `.malformed` when it is encrypted, broken or passes a limit of `ZipArchive.Limits`.
    func contents(_ name: String) throws(ImportError) -> [UInt8]? {
        if let bytes = read[name] { return bytes }
        guard Self.isRead(name) else { return nil }
        let bytes: [UInt8]?
        do { bytes = try reader.contents(of: name) } catch { throw .malformed(error.description) }
        read[name] = bytes
        return bytes
    }
}
