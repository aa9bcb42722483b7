import CGtk
import CLectorGtk

/// `AdwApplication`: one instance per session under its id (GApplication uniqueness on the session bus: a
/// second launch activates the first and exits), the style manager, the main loop.
public final class Application: Object {
    /// An application with the D-Bus name and object path derived from `id` (e.g. `org.lector.Lector.Window`
    /// at `/org/lector/Lector/Window`, which exports `org.freedesktop.Application`).
    public init(id: String) {
        super.init(adw_application_new(id, G_APPLICATION_HANDLES_OPEN))
    }

    /// Calls `body` with the local paths of the files (or `file://` URIs) given on the command line, of
    /// this launch or of a second one (then instead of `onActivate`).
    public func onOpen(_ body: @escaping ([String]) -> Void) {
        let callback: @convention(c) (gpointer?, UnsafeMutablePointer<OpaquePointer?>?, gint, UnsafePointer<CChar>?, gpointer?) -> Void = {
            _, files, count, _, data in
            var paths: [String] = []
            for i in 0..<Int(count) {
                guard let file = files?[i], let path = g_file_get_path(file) else { continue }
                paths.append(String(cString: path))
                g_free(path)
            }
            Unmanaged<CallbackBox<([String]) -> Void>>.fromOpaque(data!).takeUnretainedValue().value(paths)
        }
        _ = connect("open", unsafeBitCast(callback, to: GCallback.self), CallbackBox(body))
    }

    /// Calls `body` when the application is activated: at the first launch, by a second launch, and by
    /// `org.freedesktop.Application.Activate` over D-Bus.
    public func onActivate(_ body: @escaping () -> Void) { on("activate", body) }

    /// Calls `body` once, when the application has registered and before the first activation.
    public func onStartup(_ body: @escaping () -> Void) { on("startup", body) }

    /// Runs the main loop until the last window closes; returns the exit status (`g_application_run`).
    public func run(_ arguments: [String]) -> Int32 {
        var cArgs = arguments.map { strdup($0) } + [nil]
        defer { for p in cArgs { free(p) } }
        return g_application_run(c(), Int32(arguments.count), &cArgs)
    }

    /// Sets keyboard accelerators (e.g. `["<Control>o"]`) of the action `name` ("app.open", "win.paste").
    public func setAccelerators(_ accelerators: [String], forAction name: String) {
        var cStrings = accelerators.map { strdup($0) } + [nil]
        defer { for p in cStrings { free(p) } }
        cStrings.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: buffer.count) {
                gtk_application_set_accels_for_action(c(), name, $0)
            }
        }
    }

    /// Adds an action `app.NAME` that calls `body` (for accelerators and the desktop entry's actions).
    public func addAction(_ name: String, _ body: @escaping () -> Void) {
        let action = g_simple_action_new(name, nil)!
        let callback: @convention(c) (gpointer?, gpointer?, gpointer?) -> Void = { _, _, data in
            Unmanaged<CallbackBox<() -> Void>>.fromOpaque(data!).takeUnretainedValue().value()
        }
        _ = Object(action).connect("activate", unsafeBitCast(callback, to: GCallback.self), CallbackBox(body))
        g_action_map_add_action(OpaquePointer(raw), action)
        g_object_unref(UnsafeMutableRawPointer(action))
    }
}

/// The desktop's light/dark and high-contrast preferences (`AdwStyleManager`, which follows the
/// settings portal or GNOME's settings).
public enum StyleManager {
    private static var manager: OpaquePointer { adw_style_manager_get_default()! }
    /// Whether the dark style is in use.
    public static var isDark: Bool { adw_style_manager_get_dark(manager) != 0 }
    /// Whether the desktop asks for high contrast.
    public static var isHighContrast: Bool { adw_style_manager_get_high_contrast(manager) != 0 }
    /// Forces light (`false`), dark (`true`) or follows the desktop (`nil`).
    public static func setDark(_ dark: Bool?) {
        adw_style_manager_set_color_scheme(manager, dark == nil ? ADW_COLOR_SCHEME_DEFAULT
                                           : dark! ? ADW_COLOR_SCHEME_FORCE_DARK : ADW_COLOR_SCHEME_FORCE_LIGHT)
    }
    /// Calls `body` when the style in use changes (dark or high contrast).
    public static func onChange(_ body: @escaping () -> Void) {
        let object = Object(UnsafeMutableRawPointer(manager))
        object.on("notify::dark", body)
        object.on("notify::high-contrast", body)
    }
}

/// CSS for the whole application (`GtkCssProvider` at application priority); a new call replaces the last.
public func setApplicationCSS(_ css: String) { lector_gtk_set_css(css) }

/// `AdwApplicationWindow`.
public final class Window: Widget {
    /// A window of `application` with `title`, `width`×`height` pixels at first.
    public init(application: Application, title: String, width: Int, height: Int) {
        super.init(adw_application_window_new(application.c()))
        gtk_window_set_title(c(), title)
        gtk_window_set_default_size(c(), Int32(width), Int32(height))
    }
    /// The whole content (a libadwaita window has no separate title bar: put a `HeaderBar` in it).
    public func setContent(_ content: Widget) { adw_application_window_set_content(c(), content.widget) }
    /// Shows the window and raises it above the others.
    public func present() { gtk_window_present(c()) }
    /// Changes the title.
    public func setTitle(_ title: String) { gtk_window_set_title(c(), title) }
    /// Whether the focus widget uses Space and the arrows itself (a field, a slider, a list).
    public var focusTakesKeys: Bool { lector_gtk_focus_takes_keys(c()) != 0 }
}
