import CGtk
import CLectorGtk

/// `GtkTextView` over its `GtkTextBuffer`, read-only, for long texts. Offsets are characters (Unicode scalar
/// values) from the start of the buffer, as GTK counts them (`gtk_text_buffer_get_iter_at_offset`).
public final class TextView: Widget {
    /// The buffer shown.
    public let buffer: TextBuffer

    /// A read-only view wrapping at word boundaries, with no visible cursor.
    public init() {
        let view = gtk_text_view_new()!
        buffer = TextBuffer(gtk_text_view_get_buffer(UnsafeMutableRawPointer(view).assumingMemoryBound(to: GtkTextView.self))!)
        super.init(view)
        gtk_text_view_set_editable(c(), 0)
        gtk_text_view_set_cursor_visible(c(), 0)
        gtk_text_view_set_wrap_mode(c(), GTK_WRAP_WORD_CHAR)
    }

    /// Pixels between the text and the view's edges: `vertical` at top and bottom, `horizontal` at the sides.
    public func setMargins(vertical: Int, horizontal: Int) {
        gtk_text_view_set_top_margin(c(), Int32(vertical))
        gtk_text_view_set_bottom_margin(c(), Int32(vertical))
        gtk_text_view_set_left_margin(c(), Int32(horizontal))
        gtk_text_view_set_right_margin(c(), Int32(horizontal))
    }

    /// Extra pixels between wrapped lines of a paragraph and below each paragraph (line spacing).
    public func setSpacing(insideWrap: Int, belowLines: Int) {
        gtk_text_view_set_pixels_inside_wrap(c(), Int32(insideWrap))
        gtk_text_view_set_pixels_below_lines(c(), Int32(belowLines))
    }

    /// The offset of the character at widget coordinates (`x`, `y`), nil outside the text.
    public func offset(atX x: Double, y: Double) -> Int? {
        var bx: Int32 = 0, by: Int32 = 0
        gtk_text_view_window_to_buffer_coords(c(), GTK_TEXT_WINDOW_WIDGET, Int32(x), Int32(y), &bx, &by)
        var iter = GtkTextIter()
        guard gtk_text_view_get_iter_at_location(c(), &iter, bx, by) != 0 else { return nil }
        return Int(gtk_text_iter_get_offset(&iter))
    }

    /// Scrolls so that the character at `offset` is on screen, a third down from the top when it must move.
    public func scroll(toOffset offset: Int) {
        let mark = buffer.mark(at: offset)
        gtk_text_view_scroll_to_mark(c(), mark, 0.05, 1, 0, 0.33)
    }

    /// Whether the character at `offset` lies inside the visible part of the view.
    public func isOnScreen(offset: Int) -> Bool {
        var visible = GdkRectangle(), location = GdkRectangle()
        gtk_text_view_get_visible_rect(c(), &visible)
        var iter = buffer.iter(at: offset)
        gtk_text_view_get_iter_location(c(), &iter, &location)
        return location.y >= visible.y && location.y + location.height <= visible.y + visible.height
    }
}

/// `GtkTextBuffer`: the text and its tags.
public final class TextBuffer: Object {
    private var scrollMark: OpaquePointer?

    init(_ buffer: UnsafeMutablePointer<GtkTextBuffer>) { super.init(buffer) }

    /// Characters in the buffer.
    public var count: Int { Int(gtk_text_buffer_get_char_count(c())) }

    /// Removes the whole text.
    public func clear() { gtk_text_buffer_set_text(c(), "", 0) }

    /// Appends `text` at the end.
    public func append(_ text: String) {
        var end = GtkTextIter()
        gtk_text_buffer_get_end_iter(c(), &end)
        var utf8 = text.utf8CString
        utf8.withUnsafeMutableBufferPointer { gtk_text_buffer_insert(c(), &end, $0.baseAddress, Int32($0.count - 1)) }
    }

    /// A new tag named `name`, styled through `TextTag`'s setters.
    public func makeTag(_ name: String) -> TextTag { TextTag(lector_gtk_create_tag(c(), name)) }

    /// Applies `tag` to the characters in `range` (clamped to the text).
    public func apply(_ tag: TextTag, to range: Range<Int>) {
        var (start, end) = iters(range)
        gtk_text_buffer_apply_tag(c(), tag.c(), &start, &end)
    }

    /// Removes `tag` from the characters in `range` (clamped to the text).
    public func remove(_ tag: TextTag, from range: Range<Int>) {
        var (start, end) = iters(range)
        gtk_text_buffer_remove_tag(c(), tag.c(), &start, &end)
    }

    /// Puts the (invisible) cursor at `offset`: the caret assistive technologies report (AT-SPI
    /// `Text.CaretOffset`), so that they can follow the word being read.
    public func placeCursor(at offset: Int) {
        var where_ = iter(at: offset)
        gtk_text_buffer_place_cursor(c(), &where_)
    }

    /// The characters in `range` (clamped to the text).
    public func text(in range: Range<Int>) -> String {
        var (start, end) = iters(range)
        guard let s = gtk_text_buffer_get_text(c(), &start, &end, 0) else { return "" }
        defer { g_free(s) }
        return String(cString: s)
    }

    func iter(at offset: Int) -> GtkTextIter {
        var iter = GtkTextIter()
        gtk_text_buffer_get_iter_at_offset(c(), &iter, Int32(clamping: offset))
        return iter
    }

    private func iters(_ range: Range<Int>) -> (GtkTextIter, GtkTextIter) {
        (iter(at: range.lowerBound), iter(at: range.upperBound))
    }

    /// The one mark used to scroll, moved to `offset`.
    func mark(at offset: Int) -> UnsafeMutablePointer<GtkTextMark> {
        var where_ = iter(at: offset)
        if let scrollMark {
            let mark = UnsafeMutablePointer<GtkTextMark>(scrollMark)
            gtk_text_buffer_move_mark(c(), mark, &where_)
            return mark
        }
        let mark = gtk_text_buffer_create_mark(c(), "lector-scroll", &where_, 1)!
        scrollMark = OpaquePointer(mark)
        return mark
    }
}

/// `GtkTextTag`: how a range of text looks. Only what GTK 4.8's accessibility can report is offered: a tag
/// with a text colour (`foreground-set`) makes any AT-SPI attribute query over it read the write-only
/// `foreground` property and crash the process (gtk/a11y/gtkatspitextbuffer.c), so there is no setter for it.
public final class TextTag: Object {
    /// The background colour (a CSS colour such as `#ffd54a`).
    public func setBackground(_ colour: String) { lector_gtk_set_string(raw, "background", colour) }
    /// A single underline, or none.
    public func setUnderlined(_ underlined: Bool) { lector_gtk_set_int(raw, "underline", underlined ? 1 : 0) } // PANGO_UNDERLINE_SINGLE
    /// The font weight (Pango's, 100-1000: 700 is bold).
    public func setWeight(_ weight: Int) { lector_gtk_set_int(raw, "weight", Int32(clamping: weight)) }
    /// The font size as a factor of the view's.
    public func setScale(_ scale: Double) { lector_gtk_set_double(raw, "scale", scale) }
}
