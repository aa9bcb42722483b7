import CYAML

/// The YAML front matter of a Markdown file, as pandoc, Jekyll, Hugo and static site generators read it: a
/// block at the very start between a line `---` and a line `---` (or `...`), holding a YAML mapping. It is
/// metadata, never read aloud: its `title`, `author` (or `authors`) and `lang` (or `language`) become the
/// document's. Parsed with libyaml (yaml_parser_load, YAML 1.1), so quoting, flow and block lists are YAML's.
public struct FrontMatter: Equatable, Sendable {
    /// `title`: a string, nil when absent or not a string.
    public var title: String?
    /// `author` or `authors`: a string, a list of strings, or a list of mappings with a `name` (pandoc's
    /// form), in order; empty when absent.
    public var authors: [String] = []
    /// `lang` or `language` (a BCP 47 tag, as pandoc's `lang`), nil when absent.
    public var language: String?

    /// Metadata with nothing known.
    public init(title: String? = nil, authors: [String] = [], language: String? = nil) {
        self.title = title
        self.authors = authors
        self.language = language
    }

    /// The front matter at the start of `markdown` and the body after it. Without a block that libyaml
    /// parses as a mapping, the metadata is empty and the body all of `markdown` (a `---` line followed by
    /// text and another `---` is then CommonMark's: a thematic break, a heading).
    public static func split(_ markdown: String) -> (FrontMatter, Substring) {
        let whole = Substring(markdown)
        var rest = whole
        if rest.unicodeScalars.first == "\u{FEFF}" { rest = rest.dropFirst() }
        guard let opening = line(at: rest.startIndex, in: rest), opening.text.trimmingTrailingSpaces == "---" else {
            return (FrontMatter(), whole)
        }
        var at = opening.next
        while let current = line(at: at, in: rest) {
            let trimmed = current.text.trimmingTrailingSpaces
            if trimmed == "---" || trimmed == "..." {
                guard let metadata = parse(rest[opening.next..<at]) else { return (FrontMatter(), whole) }
                return (metadata, rest[current.next...])
            }
            at = current.next
        }
        return (FrontMatter(), whole)
    }

    /// The line starting at `index` of `text` (without its line feed) and where the next one starts; nil at
    /// the end of `text`.
    private static func line(at index: Substring.Index, in text: Substring) -> (text: Substring, next: Substring.Index)? {
        guard index < text.endIndex else { return nil }
        guard let feed = text[index...].firstIndex(of: "\n") else { return (text[index...], text.endIndex) }
        return (text[index..<feed], text.index(after: feed))
    }

    /// The fields of the YAML in `yaml` when it is a mapping; nil when libyaml cannot parse it or it is not one.
    static func parse(_ yaml: Substring) -> FrontMatter? {
        var source = String(yaml)
        return source.withUTF8 { bytes -> FrontMatter? in
            var parser = yaml_parser_t()
            guard yaml_parser_initialize(&parser) != 0 else { return nil }
            defer { yaml_parser_delete(&parser) }
            if let base = bytes.baseAddress { yaml_parser_set_input_string(&parser, base, bytes.count) }
            var document = yaml_document_t()
            guard yaml_parser_load(&parser, &document) != 0 else { return nil }
            defer { yaml_document_delete(&document) }
            return YAMLTree(document: &document).frontMatter()
        }
    }
}

/// A loaded libyaml document, read for the front matter's fields (only the root mapping and one level below
/// it are looked at, so aliases cannot make the walk grow).
private struct YAMLTree {
    let document: UnsafeMutablePointer<yaml_document_t>

    init(document: UnsafeMutablePointer<yaml_document_t>) { self.document = document }

    func frontMatter() -> FrontMatter? {
        guard let root = yaml_document_get_root_node(document), root.pointee.type == YAML_MAPPING_NODE else { return nil }
        var found = FrontMatter()
        let pairs = root.pointee.data.mapping.pairs
        var pair = pairs.start
        while let p = pair, p < pairs.top {
            guard let key = scalar(p.pointee.key)?.lowercased() else { pair = p + 1; continue }
            let value = p.pointee.value
            switch key {
            case "title": found.title = found.title ?? scalar(value).flatMap(Self.oneLine)
            case "author", "authors": if found.authors.isEmpty { found.authors = names(value) }
            case "lang", "language": found.language = found.language ?? scalar(value).flatMap(Self.oneLine)
            default: break
            }
            pair = p + 1
        }
        return found
    }

    /// The names a value gives: a string, or a list of strings or of mappings with a `name`.
    private func names(_ index: Int32) -> [String] {
        if let one = scalar(index).flatMap(Self.oneLine) { return [one] }
        guard let node = yaml_document_get_node(document, index), node.pointee.type == YAML_SEQUENCE_NODE else { return [] }
        var names: [String] = []
        let items = node.pointee.data.sequence.items
        var item = items.start
        while let i = item, i < items.top {
            if let name = scalar(i.pointee) ?? field("name", of: i.pointee), let line = Self.oneLine(name) { names.append(line) }
            item = i + 1
        }
        return names
    }

    /// The string value of key `name` in the mapping at `index`.
    private func field(_ name: String, of index: Int32) -> String? {
        guard let node = yaml_document_get_node(document, index), node.pointee.type == YAML_MAPPING_NODE else { return nil }
        let pairs = node.pointee.data.mapping.pairs
        var pair = pairs.start
        while let p = pair, p < pairs.top {
            if scalar(p.pointee.key)?.lowercased() == name { return scalar(p.pointee.value) }
            pair = p + 1
        }
        return nil
    }

    /// The text of the scalar node at `index`; nil for another kind of node.
    private func scalar(_ index: Int32) -> String? {
        guard let node = yaml_document_get_node(document, index), node.pointee.type == YAML_SCALAR_NODE,
              let value = node.pointee.data.scalar.value else { return nil }
        return String(decoding: UnsafeBufferPointer(start: value, count: node.pointee.data.scalar.length), as: UTF8.self)
    }

    /// `value` on one line, white space collapsed; nil when nothing is left.
    static func oneLine(_ value: String) -> String? {
        let line = value.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
        return line.isEmpty ? nil : line
    }
}

extension Substring {
    /// Without the spaces and tabs (and a carriage return) at its end.
    var trimmingTrailingSpaces: Substring {
        var s = self
        while let last = s.last, last == " " || last == "\t" || last == "\r" { s = s.dropLast() }
        return s
    }
}
