import CGtk
import CLectorGtk

/// A GObject held by pointer, and the signal connections made on it. The one place where GtkKit turns its
/// untyped pointer into the pointer type each GTK function takes (GObject casts are C macros).
///
/// Widgets belong to their parent once added (GTK's floating references); a wrapper does not own one, so it
/// stays valid as long as the widget is in a window that is alive.
public class Object {
    let raw: UnsafeMutableRawPointer

    init(_ raw: UnsafeMutableRawPointer) {
        self.raw = raw
    }

    init(_ typed: UnsafeMutablePointer<some Any>) {
        raw = UnsafeMutableRawPointer(typed)
    }

    init(_ opaque: OpaquePointer) {
        raw = UnsafeMutableRawPointer(opaque)
    }

    /// The object as the pointer type a GTK function takes (for a type GTK declares in full).
    func c<T>() -> UnsafeMutablePointer<T> { raw.assumingMemoryBound(to: T.self) }
    /// The object as an opaque pointer (for the final types GTK declares without their fields).
    func c() -> OpaquePointer { OpaquePointer(raw) }

    /// Sets a string property (`g_object_set`), e.g. a label's "label".
    public func set(_ property: String, _ value: String) { lector_gtk_set_string(raw, property, value) }
    /// Sets an integer (or enum) property.
    public func set(_ property: String, _ value: Int) { lector_gtk_set_int(raw, property, Int32(clamping: value)) }
    /// Sets a floating-point property.
    public func set(_ property: String, _ value: Double) { lector_gtk_set_double(raw, property, value) }
    /// Sets a boolean property.
    public func set(_ property: String, _ value: Bool) { lector_gtk_set_bool(raw, property, value ? 1 : 0) }

    // MARK: signals

    /// Calls `body` on signal `name` of shape `void (instance, user_data)` (e.g. "clicked", "activate") or of
    /// shape `void (instance, GParamSpec*, user_data)` ("notify::PROPERTY").
    @discardableResult
    public func on(_ name: String, _ body: @escaping () -> Void) -> UInt {
        let callback: @convention(c) (gpointer?, gpointer?, gpointer?) -> Void = { _, _, data in
            Unmanaged<CallbackBox<() -> Void>>.fromOpaque(data!).takeUnretainedValue().value()
        }
        // A handler of shape (instance, data) gets its data in the second argument: keep two trampolines.
        let twoArguments: @convention(c) (gpointer?, gpointer?) -> Void = { _, data in
            Unmanaged<CallbackBox<() -> Void>>.fromOpaque(data!).takeUnretainedValue().value()
        }
        let gcallback = name.hasPrefix("notify::")
            ? unsafeBitCast(callback, to: GCallback.self) : unsafeBitCast(twoArguments, to: GCallback.self)
        return connect(name, gcallback, CallbackBox(body))
    }

    /// Calls `body` on a signal of shape `gboolean (instance, user_data)` (e.g. "close-request"); its result
    /// is the signal's (true: handled, stop other handlers).
    @discardableResult
    public func onBool(_ name: String, _ body: @escaping () -> Bool) -> UInt {
        let callback: @convention(c) (gpointer?, gpointer?) -> gboolean = { _, data in
            Unmanaged<CallbackBox<() -> Bool>>.fromOpaque(data!).takeUnretainedValue().value() ? 1 : 0
        }
        return connect(name, unsafeBitCast(callback, to: GCallback.self), CallbackBox(body))
    }

    /// Connects a C trampoline whose user data is `box` (retained until the handler is disconnected).
    func connect(_ name: String, _ callback: GCallback, _ box: AnyObject) -> UInt {
        UInt(g_signal_connect_data(raw, name, callback, Unmanaged.passRetained(box).toOpaque(),
                                   { data, _ in Unmanaged<AnyObject>.fromOpaque(data!).release() },
                                   GConnectFlags(0)))
    }
}

/// A value carried through a C `user_data` pointer.
final class CallbackBox<T> {
    let value: T
    init(_ value: T) { self.value = value }
}
