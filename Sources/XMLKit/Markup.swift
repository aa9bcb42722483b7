@preconcurrency import Glibc
import CXML2

/// One element of a parsed HTML or XML document, copied out of libxml2's tree into Swift values.
///
/// Element and attribute names are the local names as written (HTML names are lower case, as libxml2's HTML
/// parser gives them); a namespaced attribute is also stored under `prefix:name` (`epub:type`).
public final class MarkupElement {
    /// The element's local name, e.g. "p", "h1", "dc:title" → "title".
    public let name: String
    /// Its namespace prefix as written ("dc" for `dc:title`), nil without one.
    public let prefix: String?
    /// Its attributes by local name (and by `prefix:name` for namespaced ones); values decoded.
    public let attributes: [String: String]
    /// Its children in document order: elements and text.
    public internal(set) var children: [MarkupNode] = []

    init(name: String, prefix: String?, attributes: [String: String]) {
        self.name = name
        self.prefix = prefix
        self.attributes = attributes
    }

    /// The child elements, in order.
    public var elements: [MarkupElement] {
        children.compactMap { if case .element(let e) = $0 { e } else { nil } }
    }

    /// The first element named `name` in this element's subtree (itself included), depth first.
    public func first(_ name: String) -> MarkupElement? {
        var stack = [self]
        while let e = stack.popLast() {
            if e.name == name { return e }
            stack.append(contentsOf: e.elements.reversed())
        }
        return nil
    }

    /// Every element named `name` in this element's subtree (itself included), in document order.
    public func all(_ name: String) -> [MarkupElement] {
        var found: [MarkupElement] = []
        var stack = [self]
        while let e = stack.popLast() {
            if e.name == name { found.append(e) }
            stack.append(contentsOf: e.elements.reversed())
        }
        return found
    }

    /// The text of the subtree, concatenated in document order (no separators added).
    public var textContent: String {
        var text = ""
        var stack: [MarkupNode] = [.element(self)]
        while let node = stack.popLast() {
            switch node {
            case .text(let t): text += t
            case .element(let e): stack.append(contentsOf: e.children.reversed())
            }
        }
        return text
    }
}

/// A child of a `MarkupElement`.
public enum MarkupNode {
    /// An element.
    case element(MarkupElement)
    /// Text (character data and CDATA sections, references decoded; entity references are never expanded).
    case text(String)
}

/// Why a document could not be parsed.
public struct MarkupError: Error, CustomStringConvertible, Sendable {
    /// One line.
    public let description: String
    /// Whether libxml2 gave up before the end of the bytes (see `MarkupParser`), rather than finding them
    /// malformed.
    public var stoppedEarly = false
}

/// HTML and XML parsing with libxml2 (libxml2 API: HTMLparser, parser), safe for untrusted input: no network
/// access, no DTD loaded, entities never substituted (a reference stays a reference and is dropped), and
/// nesting deeper than `maximumDepth` flattened to its text.
///
/// libxml2 stops at nesting depth 256 unless given `XML_PARSE_HUGE`, and keeps what it parsed until then: the
/// nested text and everything after it would be lost without a word. So HTML is parsed with `XML_PARSE_HUGE`
/// (its parser expands no declared entities), and XML too unless it declares entities (`<!ENTITY`), whose
/// amplification checks that option relaxes (a "billion laughs" in an attribute then costs seconds and
/// hundreds of MB). What libxml2 cannot parse whole (nesting past 256 levels in XML that declares entities,
/// memory exhausted) is refused with one line (`MarkupError`), never read cut short.
public enum MarkupParser {
    /// Elements deeper than this keep their text but lose their structure (their subtree becomes one text
    /// node), so that no walk over the tree goes deeper.
    public static let maximumDepth = 200

    /// Parses HTML from `bytes` (`htmlReadMemory` with RECOVER, NONET, NOERROR, NOWARNING): libxml2 repairs
    /// what it can, so any bytes give a tree. `encoding` (e.g. "UTF-8") overrides the document's declaration;
    /// nil lets libxml2 decide from `<meta charset>` (ISO-8859-1 when none).
    /// - Returns: the root element (`html`), or nil when the bytes hold no element at all.
    /// - Throws: `MarkupError` when libxml2 stopped before the end (out of memory).
    public static func html(_ bytes: [UInt8], encoding: String? = nil) throws(MarkupError) -> MarkupElement? {
        let options = Int32(HTML_PARSE_RECOVER.rawValue | HTML_PARSE_NONET.rawValue | HTML_PARSE_NOERROR.rawValue
                            | HTML_PARSE_NOWARNING.rawValue | HTML_PARSE_COMPACT.rawValue) | Int32(XML_PARSE_HUGE.rawValue)
        xmlResetLastError()
        let doc = bytes.withUnsafeBufferPointer { buffer in
            buffer.baseAddress.map { base in
                base.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                    htmlReadMemory($0, Int32(clamping: buffer.count), "document.html", encoding, options)
                }
            } ?? nil
        }
        guard let doc else { return nil }
        defer { xmlFreeDoc(doc) }
        if let stopped = stoppedEarly() { throw stopped }
        return xmlDocGetRootElement(doc).map(copyTree)
    }

    /// Parses well-formed XML from `bytes` (`xmlReadMemory` with NONET; no NOENT, no DTDLOAD, no DTDATTR, so no
    /// entity is substituted and nothing outside the bytes is read). With `recover`, libxml2 repairs errors
    /// (XHTML content documents with undeclared entities); without it, an error is thrown.
    /// - Throws: `MarkupError` with libxml2's message and line for malformed XML (without `recover`), for
    ///   bytes that hold no element, or when libxml2 stopped before the end (see `MarkupParser`).
    public static func xml(_ bytes: [UInt8], recover: Bool = false) throws(MarkupError) -> MarkupElement {
        var options = XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue
            | XML_PARSE_NOCDATA.rawValue | XML_PARSE_COMPACT.rawValue
        if recover { options |= XML_PARSE_RECOVER.rawValue }
        if !declaresEntities(bytes) { options |= XML_PARSE_HUGE.rawValue }
        xmlResetLastError()
        let doc = bytes.withUnsafeBufferPointer { buffer in
            buffer.baseAddress.map { base in
                base.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                    xmlReadMemory($0, Int32(clamping: buffer.count), "document.xml", nil, Int32(options))
                }
            } ?? nil
        }
        guard let doc else { throw stoppedEarly() ?? MarkupError(description: lastError() ?? "not XML") }
        defer { xmlFreeDoc(doc) }
        if let stopped = stoppedEarly() { throw stopped }
        guard let root = xmlDocGetRootElement(doc) else { throw MarkupError(description: "no root element") }
        return copyTree(root)
    }

    /// Whether `bytes` hold an entity declaration (`<!ENTITY`, XML 1.0 section 4.2), which only a DTD can.
    static func declaresEntities(_ bytes: [UInt8]) -> Bool {
        let marker = Array("<!ENTITY".utf8)
        guard bytes.count >= marker.count else { return false }
        var i = 0
        while let found = bytes[i...].firstIndex(of: marker[0]) {
            if found + marker.count > bytes.count { return false }
            if bytes[found..<(found + marker.count)].elementsEqual(marker) { return true }
            i = found + 1
        }
        return false
    }

    /// The one line for a parse libxml2 gave up before the end of the bytes (it keeps what it had parsed):
    /// memory exhausted, or nesting past its limit of 256 levels; nil when it went through.
    private static func stoppedEarly() -> MarkupError? {
        guard let error = xmlGetLastError() else { return nil }
        if error.pointee.code == Int32(XML_ERR_NO_MEMORY.rawValue) {
            return MarkupError(description: "the document is too large to parse in the memory a document may use", stoppedEarly: true)
        }
        if let message = error.pointee.message, String(cString: message).hasPrefix("Excessive depth") {
            return MarkupError(description: "the document nests elements more than 256 deep and declares entities", stoppedEarly: true)
        }
        return nil
    }

    private static func lastError() -> String? {
        guard let error = xmlGetLastError(), let message = error.pointee.message else { return nil }
        let text = String(cString: message).split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        return "line \(error.pointee.line): \(text)"
    }

    /// Copies libxml2's subtree at `root` into `MarkupElement`s without recursion (an explicit stack).
    private static func copyTree(_ root: xmlNodePtr) -> MarkupElement {
        let top = element(root)
        var stack: [(xmlNodePtr, MarkupElement, Int)] = [(root, top, 1)]
        while let (node, copy, depth) = stack.popLast() {
            var child = node.pointee.children
            while let c = child {
                switch c.pointee.type {
                case XML_ELEMENT_NODE:
                    if depth >= maximumDepth {
                        if let content = xmlNodeGetContent(c) {
                            copy.children.append(.text(String(cString: content)))
                            free(content)
                        }
                    } else {
                        let e = element(c)
                        copy.children.append(.element(e))
                        stack.append((c, e, depth + 1))
                    }
                case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
                    if let content = c.pointee.content { copy.children.append(.text(String(cString: content))) }
                default:
                    break  // comments, processing instructions, entity references (never expanded)
                }
                child = c.pointee.next
            }
        }
        return top
    }

    private static func element(_ node: xmlNodePtr) -> MarkupElement {
        var attributes: [String: String] = [:]
        var attribute = node.pointee.properties
        while let a = attribute {
            let name = String(cString: a.pointee.name)
            var value = ""
            if let v = xmlNodeListGetString(node.pointee.doc, a.pointee.children, 1) {
                value = String(cString: v)
                free(v)
            }
            attributes[name] = value
            if let ns = a.pointee.ns, let prefix = ns.pointee.prefix {
                attributes[String(cString: prefix) + ":" + name] = value
            }
            attribute = a.pointee.next
        }
        let prefix = node.pointee.ns.flatMap { $0.pointee.prefix }.map { String(cString: $0) }
        return MarkupElement(name: String(cString: node.pointee.name), prefix: prefix, attributes: attributes)
    }
}
