import CPoppler

/// Why a PDF cannot be opened; `description` is one line.
public enum PDFError: Error, CustomStringConvertible, Sendable {
    /// It is encrypted and no password, or a wrong one, was given.
    case encrypted
    /// It is not a PDF, or too damaged to open (poppler's message).
    case damaged(String)

    /// The message, one line.
    public var description: String {
        switch self {
        case .encrypted: "the PDF is encrypted: give its password (lector read --password)"
        case .damaged(let why): "not a readable PDF: \(why)"
        }
    }
}

/// One entry of a PDF's outline (its bookmarks): a title, the 0-based page it leads to, its depth (1 the top).
public struct PDFOutlineEntry: Sendable {
    /// The title as shown in a viewer's sidebar.
    public var title: String
    /// The page it leads to, 0-based.
    public var page: Int
    /// 1 for a top-level entry, 2 for one below it, ….
    public var level: Int
}

/// A PDF opened with poppler-glib (Poppler GLib API reference: PopplerDocument, PopplerPage), for its text.
public final class PDFDocument {
    private let document: OpaquePointer

    /// Opens the PDF in `bytes` (copied), with `password` for an encrypted one.
    ///
    /// Read through a `GMemoryInputStream` (`poppler_document_new_from_stream`): poppler 22.12's
    /// `poppler_document_new_from_bytes` and `_from_data` crash (SIGSEGV in `PDFDoc::PDFDoc`) when an encrypted
    /// PDF is given a wrong password; the stream reader fails cleanly, and is as fast.
    /// - Throws: `PDFError.encrypted` without the right password, `.damaged` for anything poppler cannot open.
    public init(bytes: [UInt8], password: String?) throws(PDFError) {
        let data = bytes.withUnsafeBytes { g_bytes_new($0.baseAddress, gsize($0.count)) }
        let stream = g_memory_input_stream_new_from_bytes(data)
        g_bytes_unref(data)
        defer { g_object_unref(stream) }
        var error: UnsafeMutablePointer<GError>?
        guard let opened = poppler_document_new_from_stream(stream, goffset(bytes.count), password, nil, &error) else {
            let encrypted = error.map { $0.pointee.domain == poppler_error_quark() && $0.pointee.code == Int32(POPPLER_ERROR_ENCRYPTED.rawValue) } ?? false
            let message = error.map { String(cString: $0.pointee.message) } ?? "unknown error"
            g_clear_error(&error)
            throw encrypted ? .encrypted : .damaged(message)
        }
        document = opened
    }

    deinit { g_object_unref(UnsafeMutableRawPointer(document)) }

    /// How many pages it has.
    public var pageCount: Int { Int(poppler_document_get_n_pages(document)) }

    /// Its Info dictionary's Title, nil when empty.
    public var title: String? { Self.take(poppler_document_get_title(document)) }
    /// Its Info dictionary's Author, nil when empty.
    public var author: String? { Self.take(poppler_document_get_author(document)) }

    /// The text of page `index` (0-based) in poppler's reading order (columns one after the other), lines
    /// separated by line feeds (`poppler_page_get_text`).
    public func text(ofPage index: Int) -> String {
        guard let page = poppler_document_get_page(document, Int32(index)) else { return "" }
        defer { g_object_unref(UnsafeMutableRawPointer(page)) }
        return Self.take(poppler_page_get_text(page)) ?? ""
    }

    /// The lines of page `index` (0-based) in poppler's reading order, each with where it sits on the page
    /// (`poppler_page_get_text_layout`: one rectangle per character of `poppler_page_get_text`, in points from
    /// the page's top left). Glyphs set apart on a line without a space between them (a section number and its
    /// title, "1" "Introduction") get one. Empty when the page has no text.
    public func lines(ofPage index: Int) -> [PDFTextLine] {
        guard let page = poppler_document_get_page(document, Int32(index)) else { return [] }
        defer { g_object_unref(UnsafeMutableRawPointer(page)) }
        guard let text = Self.take(poppler_page_get_text(page)) else { return [] }
        var rectangles: UnsafeMutablePointer<PopplerRectangle>?
        var count: guint = 0
        let laidOut = poppler_page_get_text_layout(page, &rectangles, &count) != 0
        defer { g_free(rectangles) }
        let boxes = laidOut && rectangles != nil
            ? UnsafeBufferPointer(start: rectangles, count: Int(count)).map { Box(left: $0.x1, top: $0.y1, right: $0.x2, bottom: $0.y2) } : []
        return PDFLineBuilder.lines(text: text, boxes: boxes)
    }

    /// The outline, depth first (at most `maximumEntries` entries and 16 levels).
    public func outline(maximumEntries: Int = 10_000) -> [PDFOutlineEntry] {
        var entries: [PDFOutlineEntry] = []
        guard let root = poppler_index_iter_new(document) else { return [] }
        var stack: [(OpaquePointer, Int)] = [(root, 1)]
        while let (iter, level) = stack.popLast() {
            repeat {
                guard entries.count < maximumEntries else { break }
                if let action = poppler_index_iter_get_action(iter) {
                    if action.pointee.type == POPPLER_ACTION_GOTO_DEST, let title = action.pointee.goto_dest.title,
                       let page = page(of: action.pointee.goto_dest.dest) {
                        entries.append(PDFOutlineEntry(title: String(cString: title), page: page, level: level))
                    }
                    poppler_action_free(action)
                }
                if level < 16, let child = poppler_index_iter_get_child(iter) {
                    // Children come after their parent: finish this level later.
                    if poppler_index_iter_next(iter) != 0 { stack.append((iter, level)) } else { poppler_index_iter_free(iter) }
                    stack.append((child, level + 1))
                    break
                }
                if poppler_index_iter_next(iter) == 0 { poppler_index_iter_free(iter); break }
            } while true
        }
        return entries
    }

    private func page(of dest: UnsafeMutablePointer<PopplerDest>?) -> Int? {
        guard let dest else { return nil }
        if dest.pointee.type == POPPLER_DEST_NAMED, let name = dest.pointee.named_dest {
            guard let found = poppler_document_find_dest(document, name) else { return nil }
            defer { poppler_dest_free(found) }
            return found.pointee.page_num > 0 ? Int(found.pointee.page_num) - 1 : nil
        }
        return dest.pointee.page_num > 0 ? Int(dest.pointee.page_num) - 1 : nil
    }

    private static func take(_ s: UnsafeMutablePointer<gchar>?) -> String? {
        guard let s else { return nil }
        defer { g_free(s) }
        let text = String(cString: s)
        return text.isEmpty ? nil : text
    }
}
