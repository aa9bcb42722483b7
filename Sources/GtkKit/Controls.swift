import CGtk
import CLectorGtk

/// `GtkScale`: a horizontal slider (the seek bar).
public final class Scale: Widget {
    /// A slider from `lower` to `upper` moving by `step`.
    public init(lower: Double, upper: Double, step: Double) {
        super.init(gtk_scale_new_with_range(GTK_ORIENTATION_HORIZONTAL, lower, upper, step))
        gtk_scale_set_draw_value(c(), 0)
    }
    /// The value shown.
    public var value: Double {
        get { gtk_range_get_value(c()) }
        set { gtk_range_set_value(c(), newValue) }
    }
    /// Changes the range.
    public func setRange(_ lower: Double, _ upper: Double) { gtk_range_set_range(c(), lower, max(upper, lower + 1)) }
    /// Adds a mark (a chapter) at `value`.
    public func addMark(at value: Double) { gtk_scale_add_mark(c(), value, GTK_POS_BOTTOM, nil) }
    /// Removes every mark.
    public func clearMarks() { gtk_scale_clear_marks(c()) }
    /// Calls `body` with the value the person moved the slider to (keyboard, mouse): not on `value` set by
    /// the program.
    public func onMoved(_ body: @escaping (Double) -> Void) {
        let callback: @convention(c) (gpointer?, GtkScrollType, gdouble, gpointer?) -> gboolean = { _, _, value, data in
            Unmanaged<CallbackBox<(Double) -> Void>>.fromOpaque(data!).takeUnretainedValue().value(value)
            return 0
        }
        _ = connect("change-value", unsafeBitCast(callback, to: GCallback.self), CallbackBox(body))
    }
}

/// `GtkSpinButton`: a number with − and + buttons.
public final class SpinButton: Widget {
    /// A spin button from `lower` to `upper` by `step`, showing `digits` decimals.
    public init(lower: Double, upper: Double, step: Double, digits: Int = 0) {
        super.init(gtk_spin_button_new_with_range(lower, upper, step))
        gtk_spin_button_set_digits(c(), UInt32(digits))
    }
    /// The value shown.
    public var value: Double {
        get { gtk_spin_button_get_value(c()) }
        set { gtk_spin_button_set_value(c(), newValue) }
    }
    /// Calls `body` when the value changes (by the person or the program).
    public func onChanged(_ body: @escaping () -> Void) { on("value-changed", body) }
}

/// `GtkDropDown` over a list of strings.
public final class DropDown: Widget {
    /// A drop-down list offering `items`.
    public init(_ items: [String]) {
        super.init(gtk_drop_down_new(nil, nil))
        setItems(items)
    }
    /// Replaces the items offered.
    public func setItems(_ items: [String]) {
        var cStrings = items.map { strdup($0) } + [nil]
        defer { for p in cStrings { free(p) } }
        let model = cStrings.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: buffer.count) {
                gtk_string_list_new($0)
            }
        }
        gtk_drop_down_set_model(c(), model)
        g_object_unref(UnsafeMutableRawPointer(model))
    }
    /// The index of the item chosen, nil when none.
    public var selected: Int? {
        get {
            let i = gtk_drop_down_get_selected(c())
            return i == UInt32(GTK_INVALID_LIST_POSITION) ? nil : Int(i)
        }
        set { gtk_drop_down_set_selected(c(), newValue.map { UInt32($0) } ?? UInt32(GTK_INVALID_LIST_POSITION)) }
    }
    /// Calls `body` when the item chosen changes.
    public func onSelected(_ body: @escaping () -> Void) { on("notify::selected", body) }
}

/// `GtkRevealer`: shows or hides its child with a slide.
public final class Revealer: Widget {
    /// A revealer around `child`, hidden at first.
    public init(_ child: Widget) {
        super.init(gtk_revealer_new())
        gtk_revealer_set_child(c(), child.widget)
    }
    /// Whether the child is shown.
    public var isRevealed: Bool {
        get { gtk_revealer_get_reveal_child(c()) != 0 }
        set { gtk_revealer_set_reveal_child(c(), newValue ? 1 : 0) }
    }
}

/// `GtkOverlay`: a main child with widgets floating over it.
public final class Overlay: Widget {
    /// An overlay whose main child is `child`.
    public init(_ child: Widget) {
        super.init(gtk_overlay_new())
        gtk_overlay_set_child(c(), child.widget)
    }
    /// Floats `widget` over the main child (place it with `align`).
    public func addOverlay(_ widget: Widget) { gtk_overlay_add_overlay(c(), widget.widget) }
}

/// `AdwHeaderBar`: the title bar with controls at its start and end.
public final class HeaderBar: Widget {
    /// An empty header bar.
    public init() { super.init(adw_header_bar_new()) }
    /// Adds `widget` at the start (left in left-to-right languages).
    public func packStart(_ widget: Widget) { adw_header_bar_pack_start(c(), widget.widget) }
    /// Adds `widget` at the end.
    public func packEnd(_ widget: Widget) { adw_header_bar_pack_end(c(), widget.widget) }
    /// Shows `widget` in the middle instead of the window title.
    public func setTitleWidget(_ widget: Widget) { adw_header_bar_set_title_widget(c(), widget.widget) }
}

/// `GtkScrolledWindow` around a scrollable child.
public final class ScrolledWindow: Widget {
    /// A scrolled window around `child`, scrolling vertically only.
    public init(_ child: Widget) {
        super.init(gtk_scrolled_window_new())
        gtk_scrolled_window_set_policy(c(), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC)
        gtk_scrolled_window_set_child(c(), child.widget)
    }
    /// Calls `body` when the person drags the scroll bar or scrolls by keyboard (the vertical adjustment's
    /// value changes); see `ScrollController` for the wheel.
    public func onScrolled(_ body: @escaping () -> Void) {
        Object(gtk_scrolled_window_get_vadjustment(c())).on("value-changed", body)
    }
}

/// `AdwClampScrollable`: keeps a scrollable child (the text) at most `maximumWidth` pixels wide, centred.
public final class ClampScrollable: Widget {
    /// A clamp around `child`.
    public init(_ child: Widget, maximumWidth: Int) {
        super.init(adw_clamp_scrollable_new())
        adw_clamp_scrollable_set_child(c(), child.widget)
        setMaximumWidth(maximumWidth)
    }
    /// The widest the child may be, in pixels.
    public func setMaximumWidth(_ pixels: Int) {
        adw_clamp_scrollable_set_maximum_size(c(), Int32(pixels))
        adw_clamp_scrollable_set_tightening_threshold(c(), Int32(pixels * 3 / 4))
    }
}
