import CGio

/// A main loop on a `GMainContext` of its own, for a thread other than the one running the default main loop
/// (GLib Reference Manual, "The Main Event Loop": thread-default contexts). While `run` runs, the context is
/// the calling thread's default, so what `setUp` starts there (a `DBusConnection.register`ed object, an
/// `ownName`, a `call` with a reply closure) is served on that thread and on no other.
///
/// `quit()` may be called from any thread (GLib's context and loop functions are thread-safe), hence
/// `@unchecked Sendable`. `MainContext`'s timers and watches still go to the default context.
public final class ThreadMainLoop: @unchecked Sendable {
    private let context: OpaquePointer
    private let loop: OpaquePointer

    /// Creates the context and its loop; nothing runs yet.
    public init() {
        context = g_main_context_new()
        loop = g_main_loop_new(context, 0)
    }

    deinit {
        g_main_loop_unref(loop)
        g_main_context_unref(context)
    }

    /// Makes the context the calling thread's default (`g_main_context_push_thread_default`), calls `setUp`,
    /// and when it returns true runs the loop until `quit()`; then pops the context. Returns when the loop
    /// has stopped, or at once when `setUp` returns false.
    public func run(_ setUp: () -> Bool) {
        g_main_context_push_thread_default(context)
        defer { g_main_context_pop_thread_default(context) }
        guard setUp() else { return }
        g_main_loop_run(loop)
    }

    /// Stops the loop from any thread: an idle source on the context quits it once it runs, so that a
    /// `quit()` that comes before the loop starts is not lost.
    public func quit() {
        let source = g_idle_source_new()
        g_source_set_callback(source, { loop in
            g_main_loop_quit(OpaquePointer(loop))
            return 0
        }, UnsafeMutableRawPointer(g_main_loop_ref(loop)), { g_main_loop_unref(OpaquePointer($0)) })
        g_source_attach(source, context)
        g_source_unref(source)
    }
}
