import CGtk
import CLectorGtk

/// A `GtkWidget`: the properties every control has.
public class Widget: Object {
    var widget: UnsafeMutablePointer<GtkWidget> { c() }

    /// The name screen readers read (ATK/AT-SPI accessible name, `GTK_ACCESSIBLE_PROPERTY_LABEL`).
    public var accessibleLabel: String = "" {
        didSet { lector_gtk_set_accessible_label(widget, accessibleLabel) }
    }

    /// A longer accessible description, read after the name.
    public func setAccessibleDescription(_ text: String) { lector_gtk_set_accessible_description(widget, text) }

    /// The tooltip shown on hover (also the accessible description GTK gives a control without one).
    public var tooltip: String = "" {
        didSet { gtk_widget_set_tooltip_text(widget, tooltip) }
    }

    /// Whether the widget reacts to input (greyed out when false).
    public var isSensitive: Bool {
        get { gtk_widget_get_sensitive(widget) != 0 }
        set { gtk_widget_set_sensitive(widget, newValue ? 1 : 0) }
    }

    /// Whether the widget is shown.
    public var isVisible: Bool {
        get { gtk_widget_get_visible(widget) != 0 }
        set { gtk_widget_set_visible(widget, newValue ? 1 : 0) }
    }

    /// Whether it takes the extra room of its parent, horizontally and vertically.
    public func expand(horizontally: Bool = false, vertically: Bool = false) {
        gtk_widget_set_hexpand(widget, horizontally ? 1 : 0)
        gtk_widget_set_vexpand(widget, vertically ? 1 : 0)
    }

    /// Margins in pixels on all four sides.
    public func setMargins(_ pixels: Int) {
        let p = Int32(pixels)
        gtk_widget_set_margin_top(widget, p)
        gtk_widget_set_margin_bottom(widget, p)
        gtk_widget_set_margin_start(widget, p)
        gtk_widget_set_margin_end(widget, p)
    }

    /// Alignment in its allocation: `.center`, `.end`, … (`GtkAlign`).
    public func align(horizontal: Align? = nil, vertical: Align? = nil) {
        if let horizontal { gtk_widget_set_halign(widget, horizontal.gtk) }
        if let vertical { gtk_widget_set_valign(widget, vertical.gtk) }
    }

    /// Adds a CSS class (`.suggested-action`, `.osd`, Lector's own classes).
    public func addCSSClass(_ name: String) { gtk_widget_add_css_class(widget, name) }
    /// Removes a CSS class.
    public func removeCSSClass(_ name: String) { gtk_widget_remove_css_class(widget, name) }

    /// Sets the widget's name (`#name` in CSS).
    public func setName(_ name: String) { gtk_widget_set_name(widget, name) }

    /// Gives it the keyboard focus.
    public func grabFocus() { _ = gtk_widget_grab_focus(widget) }

    /// Adds an event controller or gesture (owned by the widget from then on).
    public func add(_ controller: EventController) { gtk_widget_add_controller(widget, controller.c()) }

    /// Width and height in pixels the widget asks for at least (-1: natural).
    public func setSizeRequest(width: Int, height: Int) { gtk_widget_set_size_request(widget, Int32(width), Int32(height)) }
}

/// `GtkAlign`.
public enum Align {
    case fill, start, end, center
    var gtk: GtkAlign {
        switch self {
        case .fill: GTK_ALIGN_FILL
        case .start: GTK_ALIGN_START
        case .end: GTK_ALIGN_END
        case .center: GTK_ALIGN_CENTER
        }
    }
}

/// `GtkBox`: children in a row or a column.
public final class Box: Widget {
    /// A box laid out `vertical`ly or not, with `spacing` pixels between children.
    public init(vertical: Bool, spacing: Int = 0) {
        super.init(gtk_box_new(vertical ? GTK_ORIENTATION_VERTICAL : GTK_ORIENTATION_HORIZONTAL, Int32(spacing)))
    }
    /// Adds `child` at the end.
    public func append(_ child: Widget) { gtk_box_append(c(), child.widget) }
    /// Removes every child.
    public func removeAll() {
        while let child = gtk_widget_get_first_child(widget) { gtk_box_remove(c(), child) }
    }
}

/// `GtkLabel`.
public final class Label: Widget {
    /// A label showing `text`.
    public init(_ text: String = "") { super.init(gtk_label_new(text)) }
    /// The text shown.
    public var text: String {
        get { String(cString: gtk_label_get_text(c())) }
        set { gtk_label_set_text(c(), newValue) }
    }
    /// Lets a long text wrap onto more lines.
    public func setWrap(_ wrap: Bool) { gtk_label_set_wrap(c(), wrap ? 1 : 0) }
    /// Horizontal alignment of the text, 0 (start) to 1 (end).
    public func setXAlign(_ x: Double) { gtk_label_set_xalign(c(), Float(x)) }
    /// Makes it the accessible label of `widget` (the widget's name is then this text).
    public func labels(_ widget: Widget) { gtk_label_set_mnemonic_widget(c(), widget.widget) }
}

/// `GtkButton`, with an icon or a text.
public class Button: Widget {
    /// A button showing the icon `iconName` (a symbolic icon) with `label` as its accessible name and tooltip.
    public init(iconName: String, label: String) {
        super.init(gtk_button_new_from_icon_name(iconName))
        accessibleLabel = label
        tooltip = label
    }
    /// A button showing `text`.
    public init(text: String) { super.init(gtk_button_new_with_mnemonic(text)) }
    /// A button showing `title` as it is (an underscore is no mnemonic: titles from documents).
    public init(title: String) { super.init(gtk_button_new_with_label(title)) }
    init(raw: UnsafeMutablePointer<GtkWidget>) { super.init(raw) }
    /// Changes its icon.
    public func setIconName(_ name: String) { gtk_button_set_icon_name(c(), name) }
    /// Calls `body` when it is clicked (mouse, Enter, Space).
    public func onClicked(_ body: @escaping () -> Void) { on("clicked", body) }
}

/// `GtkToggleButton`.
public final class ToggleButton: Button {
    /// A toggle button with the icon `iconName` and `label` as its accessible name and tooltip.
    public override init(iconName: String, label: String) {
        super.init(raw: gtk_toggle_button_new())
        setIconName(iconName)
        accessibleLabel = label
        tooltip = label
    }
    /// Whether it is pressed in.
    public var isActive: Bool {
        get { gtk_toggle_button_get_active(c()) != 0 }
        set { gtk_toggle_button_set_active(c(), newValue ? 1 : 0) }
    }
    /// Calls `body` when it is toggled (by the person or by setting `isActive`).
    public func onToggled(_ body: @escaping () -> Void) { on("toggled", body) }
}

/// `GtkCheckButton`: a check box with a label.
public final class CheckButton: Widget {
    /// A check box labelled `label`.
    public init(label: String) { super.init(gtk_check_button_new_with_mnemonic(label)) }
    /// Whether it is checked.
    public var isActive: Bool {
        get { gtk_check_button_get_active(c()) != 0 }
        set { gtk_check_button_set_active(c(), newValue ? 1 : 0) }
    }
    /// Calls `body` when it is toggled.
    public func onToggled(_ body: @escaping () -> Void) { on("toggled", body) }
}

/// `GtkMenuButton` with a popover holding `content`.
public final class MenuButton: Widget {
    /// A button showing `iconName` that opens a popover with `content`; `label` is its accessible name.
    public init(iconName: String, label: String, content: Widget) {
        super.init(gtk_menu_button_new())
        gtk_menu_button_set_icon_name(c(), iconName)
        let popover = Object(gtk_popover_new()!)
        gtk_popover_set_child(popover.c(), content.widget)
        gtk_menu_button_set_popover(c(), popover.c())
        accessibleLabel = label
        tooltip = label
    }
    /// Closes its popover.
    public func popdown() { gtk_menu_button_popdown(c()) }
}
