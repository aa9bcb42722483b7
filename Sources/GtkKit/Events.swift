import CGtk
import CLectorGtk

/// A `GtkEventController` (key presses, clicks, scrolling, drops), added to a widget with `Widget.add`.
public class EventController: Object {}

/// Keys the window handles itself (`GDK_KEY_*` values).
public enum Key {
    public static let space = UInt32(GDK_KEY_space)
    public static let left = UInt32(GDK_KEY_Left)
    public static let right = UInt32(GDK_KEY_Right)
    public static let up = UInt32(GDK_KEY_Up)
    public static let down = UInt32(GDK_KEY_Down)
    public static let o = UInt32(GDK_KEY_o)
    public static let v = UInt32(GDK_KEY_v)
}

/// Modifier keys held with a key press.
public struct KeyModifiers: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let control = KeyModifiers(rawValue: GDK_CONTROL_MASK.rawValue)
    public static let shift = KeyModifiers(rawValue: GDK_SHIFT_MASK.rawValue)
    public static let alt = KeyModifiers(rawValue: GDK_ALT_MASK.rawValue)
}

/// Keys pressed on a widget (`GtkEventControllerKey`), in the capture phase: before the focus widget sees them.
public final class KeyController: EventController {
    /// A key controller; `body` gets the key value (`Key`, `GDK_KEY_*`) and the modifiers held, and returns
    /// true when it handled the key.
    public init(_ body: @escaping (_ key: UInt32, _ modifiers: KeyModifiers) -> Bool) {
        super.init(gtk_event_controller_key_new())
        gtk_event_controller_set_propagation_phase(c(), GTK_PHASE_CAPTURE)
        let callback: @convention(c) (gpointer?, guint, guint, GdkModifierType, gpointer?) -> gboolean = { _, key, _, state, data in
            let held = KeyModifiers(rawValue: state.rawValue).intersection([.control, .shift, .alt])
            let body = Unmanaged<CallbackBox<(UInt32, KeyModifiers) -> Bool>>.fromOpaque(data!).takeUnretainedValue().value
            return body(key, held) ? 1 : 0
        }
        _ = connect("key-pressed", unsafeBitCast(callback, to: GCallback.self), CallbackBox(body))
    }
}

/// A click with the primary button (`GtkGestureClick`); `body` gets the widget coordinates of the release.
public final class ClickGesture: EventController {
    /// A click gesture calling `body` with (x, y) in pixels when a single click is released.
    public init(_ body: @escaping (_ x: Double, _ y: Double) -> Void) {
        super.init(gtk_gesture_click_new())
        let callback: @convention(c) (gpointer?, gint, gdouble, gdouble, gpointer?) -> Void = { _, presses, x, y, data in
            guard presses == 1 else { return }
            Unmanaged<CallbackBox<(Double, Double) -> Void>>.fromOpaque(data!).takeUnretainedValue().value(x, y)
        }
        _ = connect("released", unsafeBitCast(callback, to: GCallback.self), CallbackBox(body))
    }
}

/// Scrolling by wheel or touchpad (`GtkEventControllerScroll`), seen before the scrolled window moves.
public final class ScrollController: EventController {
    /// Calls `body` on every scroll step (the view still scrolls).
    public init(_ body: @escaping () -> Void) {
        super.init(gtk_event_controller_scroll_new(GTK_EVENT_CONTROLLER_SCROLL_BOTH_AXES))
        gtk_event_controller_set_propagation_phase(c(), GTK_PHASE_CAPTURE)
        let callback: @convention(c) (gpointer?, gdouble, gdouble, gpointer?) -> gboolean = { _, _, _, data in
            Unmanaged<CallbackBox<() -> Void>>.fromOpaque(data!).takeUnretainedValue().value()
            return 0
        }
        _ = connect("scroll", unsafeBitCast(callback, to: GCallback.self), CallbackBox(body))
    }
}

/// What was dropped on a window.
public enum Dropped {
    /// Local files, by path.
    case files([String])
    /// Text.
    case text(String)
}

/// Files or text dropped on a widget (`GtkDropTarget` for `GdkFileList` and strings).
public final class DropTarget: EventController {
    /// Calls `body` with what was dropped; returns whether it was taken.
    public init(_ body: @escaping (Dropped) -> Bool) {
        super.init(gtk_drop_target_new(0, GDK_ACTION_COPY))
        var types = [lector_gtk_file_list_type(), lector_gtk_string_type()]
        gtk_drop_target_set_gtypes(c(), &types, gsize(types.count))
        let callback: @convention(c) (gpointer?, UnsafePointer<GValue>?, gdouble, gdouble, gpointer?) -> gboolean = { _, value, _, _, data in
            let body = Unmanaged<CallbackBox<(Dropped) -> Bool>>.fromOpaque(data!).takeUnretainedValue().value
            if let paths = lector_gtk_file_list_paths(value) {
                defer { g_free(paths) }
                return body(.files(String(cString: paths).split(separator: "\n").map(String.init))) ? 1 : 0
            }
            if let text = lector_gtk_value_string(value) { return body(.text(String(cString: text))) ? 1 : 0 }
            return 0
        }
        _ = connect("drop", unsafeBitCast(callback, to: GCallback.self), CallbackBox(body))
    }
}

/// The file chooser (`GtkFileChooserNative`: the desktop's file chooser portal where there is one).
public enum FileChooser {
    /// Asks for one file to open over `parent`; `body` gets its path, or nil when cancelled.
    public static func open(title: String, parent: Window, _ body: @escaping (String?) -> Void) {
        let native = gtk_file_chooser_native_new(title, parent.c(), GTK_FILE_CHOOSER_ACTION_OPEN, "_Open", "_Cancel")!
        let object = Object(native)
        let callback: @convention(c) (gpointer?, gint, gpointer?) -> Void = { dialog, response, data in
            let body = Unmanaged<CallbackBox<(String?) -> Void>>.fromOpaque(data!).takeUnretainedValue().value
            var path: String?
            if response == GTK_RESPONSE_ACCEPT.rawValue, let file = gtk_file_chooser_get_file(OpaquePointer(dialog)) {
                if let p = g_file_get_path(file) { path = String(cString: p); g_free(p) }
                g_object_unref(UnsafeMutableRawPointer(file))
            }
            body(path)
            g_object_unref(dialog) // the reference from gtk_file_chooser_native_new
        }
        _ = object.connect("response", unsafeBitCast(callback, to: GCallback.self), CallbackBox(body))
        gtk_native_dialog_show(UnsafeMutableRawPointer(native).assumingMemoryBound(to: GtkNativeDialog.self))
    }
}

/// The clipboard of the default display.
public enum Clipboard {
    /// Reads the clipboard's text; `body` gets it, or nil when it holds no text.
    public static func readText(_ body: @escaping (String?) -> Void) {
        guard let display = gdk_display_get_default() else { return body(nil) }
        let clipboard = gdk_display_get_clipboard(display)
        let box = Unmanaged.passRetained(CallbackBox(body)).toOpaque()
        gdk_clipboard_read_text_async(clipboard, nil, { source, result, data in
            let body = Unmanaged<CallbackBox<(String?) -> Void>>.fromOpaque(data!).takeRetainedValue().value
            let text = gdk_clipboard_read_text_finish(OpaquePointer(source), result, nil)
            defer { g_free(text) }
            body(text.map { String(cString: $0) })
        }, box)
    }
}
