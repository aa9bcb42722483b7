import CGio

/// Where a markup document is wrong, and why: one line for people.
///
/// `line` and `column` are 1-based; the column counts characters (Unicode scalars), as GLib's
/// `g_markup_parse_context_get_position` reports them.
public struct MarkupError: Error, Equatable, Sendable, CustomStringConvertible {
    /// 1-based line of the problem.
    public var line: Int
    /// 1-based column of the problem, in characters.
    public var column: Int
    /// What is wrong, without the position (GLib's message, or the caller's).
    public var message: String

    /// Makes an error at `line`, `column` (both 1-based).
    public init(line: Int, column: Int, message: String) {
        self.line = line
        self.column = column
        self.message = message
    }

    /// `line L, column C: message`.
    public var description: String { "line \(line), column \(column): \(message)" }
}

/// One thing the markup parser met, in document order, with where it starts.
public struct MarkupEvent: Equatable, Sendable {
    /// What the parser met.
    public enum Kind: Equatable, Sendable {
        /// A start tag (also for an empty element `<x/>`, which is followed by its `end`), with its attributes
        /// in document order, values with entities and character references decoded.
        case start(name: String, attributes: [Attribute])
        /// An end tag.
        case end(name: String)
        /// Character data, entities and character references decoded (CDATA sections included).
        case text(String)
        /// What GMarkup passes through unparsed: comments, processing instructions (the `<?xml?>` prolog
        /// too), DOCTYPE declarations, verbatim (e.g. `<!DOCTYPE speak>`).
        case passthrough(String)
    }

    /// One attribute of a start tag.
    public struct Attribute: Equatable, Sendable {
        /// The attribute's name as written, e.g. `"xml:lang"`.
        public var name: String
        /// The decoded value.
        public var value: String
        /// Makes an attribute.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// What it is.
    public var kind: Kind
    /// 1-based line where the parser reported it (for a start tag: the end of the tag; GLib's position).
    public var line: Int
    /// 1-based column, in characters.
    public var column: Int
}

/// A well-formedness check and event reader over GLib's `GMarkup` parser (GLib Reference Manual, "Simple XML
/// Subset Parser"): a subset of XML with no DTD processing and no external entities, so nothing is ever
/// fetched and only the five predefined entities and character references are decoded (any other entity is
/// an error).
public enum Markup {
    /// Parses `text` and returns its events in order.
    /// - Throws: `MarkupError` with the line and column GLib reports for the first problem: unclosed or
    ///   mismatched elements, an unknown entity, a bad character, an empty document, text after the end, ….
    public static func events(_ text: String) throws(MarkupError) -> [MarkupEvent] {
        let collector = Collector()
        var parser = GMarkupParser()
        parser.start_element = { context, name, names, values, userData, _ in
            guard let context, let name, let userData else { return }
            let c = Unmanaged<Collector>.fromOpaque(userData).takeUnretainedValue()
            var attributes: [MarkupEvent.Attribute] = []
            var i = 0
            while let names, let n = names[i] {
                let v = values?[i].map { String(cString: $0) } ?? ""
                attributes.append(.init(name: String(cString: n), value: v))
                i += 1
            }
            c.add(.start(name: String(cString: name), attributes: attributes), context)
        }
        parser.end_element = { context, name, userData, _ in
            guard let context, let name, let userData else { return }
            Unmanaged<Collector>.fromOpaque(userData).takeUnretainedValue().add(.end(name: String(cString: name)), context)
        }
        parser.text = { context, text, length, userData, _ in
            guard let context, let text, let userData else { return }
            let c = Unmanaged<Collector>.fromOpaque(userData).takeUnretainedValue()
            c.add(.text(Collector.string(text, Int(length))), context)
        }
        parser.passthrough = { context, text, length, userData, _ in
            guard let context, let text, let userData else { return }
            let c = Unmanaged<Collector>.fromOpaque(userData).takeUnretainedValue()
            c.add(.passthrough(Collector.string(text, Int(length))), context)
        }
        let userData = Unmanaged.passUnretained(collector).toOpaque()
        return try withExtendedLifetime(collector) { () throws(MarkupError) -> [MarkupEvent] in
            let context = g_markup_parse_context_new(&parser, GMarkupParseFlags(0), userData, nil)!
            defer { g_markup_parse_context_free(context) }
            var error: UnsafeMutablePointer<GError>?
            let bytes = Array(text.utf8)
            var ok = bytes.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) {
                    g_markup_parse_context_parse(context, $0.baseAddress, $0.count, &error)
                }
            } != 0
            if ok { ok = g_markup_parse_context_end_parse(context, &error) != 0 }
            if !ok {
                var line: Int32 = 0, column: Int32 = 0
                g_markup_parse_context_get_position(context, &line, &column)
                let message = error.map { GLibError(consuming: $0).message } ?? "malformed markup"
                throw MarkupError(line: Int(max(line, 1)), column: Int(max(column, 1)), message: Self.stripPosition(message))
            }
            return collector.events
        }
    }

    /// Nil when `text` is well-formed (for GMarkup), else the first problem with its line and column.
    public static func check(_ text: String) -> MarkupError? {
        do { _ = try events(text); return nil } catch { return error }
    }

    /// GMarkup's messages start with "Error on line L char C: "; the position is reported apart.
    static func stripPosition(_ message: String) -> String {
        guard message.hasPrefix("Error on line "), let colon = message.firstIndex(of: ":") else { return message }
        return String(message[message.index(after: colon)...].drop { $0 == " " })
    }

    /// Escapes `&`, `<`, `>`, `"` and `'` for use in markup text or attribute values
    /// (`g_markup_escape_text`).
    public static func escape(_ text: String) -> String {
        guard let escaped = g_markup_escape_text(text, -1) else { return "" }
        defer { g_free(escaped) }
        return String(cString: escaped)
    }
}

/// Gathers the parser's callbacks; lives only during one `Markup.events` call.
private final class Collector {
    var events: [MarkupEvent] = []

    func add(_ kind: MarkupEvent.Kind, _ context: OpaquePointer) {
        var line: Int32 = 0, column: Int32 = 0
        g_markup_parse_context_get_position(context, &line, &column)
        events.append(MarkupEvent(kind: kind, line: Int(line), column: Int(column)))
    }

    static func string(_ text: UnsafePointer<CChar>, _ length: Int) -> String {
        text.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }
}
