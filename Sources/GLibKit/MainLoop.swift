@preconcurrency import Glibc
import CGio
import SystemKit

/// A `GMainLoop` on the default `GMainContext` (GLib Reference Manual, "The Main Event Loop").
public final class MainLoop {
    private let loop: OpaquePointer

    /// Creates a loop on the default main context; it is not running yet.
    public init() {
        loop = g_main_loop_new(nil, 0)
    }

    deinit {
        g_main_loop_unref(loop)
    }

    /// Runs the loop until `quit()` is called (`g_main_loop_run`).
    public func run() {
        g_main_loop_run(loop)
    }

    /// Makes `run()` return once the current dispatch finishes (`g_main_loop_quit`).
    public func quit() {
        g_main_loop_quit(loop)
    }
}

/// An attached `GSource` of the default main context.
///
/// Dropping a `Source` does not stop it: the main context keeps it until its callback asks to stop or
/// `cancel()` is called.
public final class Source {
    private let source: UnsafeMutablePointer<GSource>?

    /// Holds a reference to the source with ID `id` of the default context (0: no source).
    init(id: UInt32) {
        if id != 0, let found = g_main_context_find_source_by_id(nil, id) {
            source = g_source_ref(found)
        } else {
            source = nil
        }
    }

    deinit {
        if let source { g_source_unref(source) }
    }

    /// Removes the source from the main context (`g_source_destroy`); its callback will not run again and
    /// its closure is released. Safe to call twice, and after the source ended by itself.
    public func cancel() {
        if let source, g_source_is_destroyed(source) == 0 {
            g_source_destroy(source)
        }
    }

    /// Whether the source is still attached (neither cancelled nor ended by its callback).
    public var isActive: Bool {
        guard let source else { return false }
        return g_source_is_destroyed(source) == 0
    }
}

/// Conditions reported by a file-descriptor watch (`GIOCondition`).
public struct FDCondition: OptionSet, Sendable {
    /// The raw condition bits, one per case below.
    public let rawValue: UInt32
    /// Makes a condition set from raw bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// `G_IO_IN`: data can be read without blocking.
    public static let readable = FDCondition(rawValue: 1 << 0)
    /// `G_IO_HUP`: the other end hung up (for a pipe: all writers closed). Pending data may remain.
    public static let hangup = FDCondition(rawValue: 1 << 1)
    /// `G_IO_ERR` or `G_IO_NVAL`: an error condition, or the descriptor is not open.
    public static let error = FDCondition(rawValue: 1 << 2)
    /// `G_IO_OUT`: data can be written without blocking.
    public static let writable = FDCondition(rawValue: 1 << 3)

    init(_ condition: GIOCondition) {
        var set: FDCondition = []
        if condition.rawValue & G_IO_IN.rawValue != 0 { set.insert(.readable) }
        if condition.rawValue & G_IO_HUP.rawValue != 0 { set.insert(.hangup) }
        if condition.rawValue & (G_IO_ERR.rawValue | G_IO_NVAL.rawValue) != 0 { set.insert(.error) }
        if condition.rawValue & G_IO_OUT.rawValue != 0 { set.insert(.writable) }
        self = set
    }
}

/// The callback of one source, kept alive by GLib until the source's destroy notify releases it.
private final class SourceCallback<Body> {
    let body: Body
    init(_ body: Body) { self.body = body }

    /// A retained pointer for `user_data`; `release` is the matching `GDestroyNotify`.
    static func retained(_ body: Body) -> UnsafeMutableRawPointer {
        Unmanaged.passRetained(SourceCallback(body)).toOpaque()
    }
    static func from(_ pointer: UnsafeMutableRawPointer?) -> Body {
        Unmanaged<SourceCallback>.fromOpaque(pointer!).takeUnretainedValue().body
    }
}

private typealias RepeatBody = () -> Bool
private typealias OnceBody = () -> Void
private typealias WatchBody = (FDCondition) -> Bool

private let releaseRepeat: GDestroyNotify = { pointer in
    Unmanaged<SourceCallback<RepeatBody>>.fromOpaque(pointer!).release()
}
private let releaseOnce: GDestroyNotify = { pointer in
    Unmanaged<SourceCallback<OnceBody>>.fromOpaque(pointer!).release()
}
private let releaseWatch: GDestroyNotify = { pointer in
    Unmanaged<SourceCallback<WatchBody>>.fromOpaque(pointer!).release()
}
private let dispatchRepeat: GSourceFunc = { pointer in
    SourceCallback<RepeatBody>.from(pointer)() ? 1 : 0
}
private let dispatchOnce: GSourceFunc = { pointer in
    SourceCallback<OnceBody>.from(pointer)()
    return 0
}

/// Timers, idle callbacks, fd watches and signal handlers on the default `GMainContext`; every callback
/// runs on the thread that runs the main loop (GLib Reference Manual, "The Main Event Loop").
public enum MainContext {
    /// `G_PRIORITY_DEFAULT`.
    private static let priorityDefault: Int32 = 0
    /// `G_PRIORITY_DEFAULT_IDLE`.
    private static let priorityDefaultIdle: Int32 = 200

    /// Calls `body` every `milliseconds` ms while it returns true (`g_timeout_add_full`, default priority).
    /// The first call comes `milliseconds` ms from now.
    @discardableResult
    public static func timeout(milliseconds: UInt32, _ body: @escaping () -> Bool) -> Source {
        Source(id: g_timeout_add_full(priorityDefault, milliseconds, dispatchRepeat,
                                      SourceCallback<RepeatBody>.retained(body), releaseRepeat))
    }

    /// Calls `body` once when the loop has nothing of higher priority to do (`g_idle_add_full`,
    /// `G_PRIORITY_DEFAULT_IDLE`).
    @discardableResult
    public static func idle(_ body: @escaping () -> Void) -> Source {
        Source(id: g_idle_add_full(priorityDefaultIdle, dispatchOnce,
                                   SourceCallback<OnceBody>.retained(body), releaseOnce))
    }

    /// Calls `body` whenever `fd` is readable, hung up or in error (`g_unix_fd_add_full` with
    /// `G_IO_IN | G_IO_HUP | G_IO_ERR`) until `body` returns false. The descriptor's blocking mode is left
    /// as it is, and it is not closed when the watch ends.
    @discardableResult
    public static func watch(fd: FileDescriptor, _ body: @escaping (_ condition: FDCondition) -> Bool) -> Source {
        let condition = GIOCondition(G_IO_IN.rawValue | G_IO_HUP.rawValue | G_IO_ERR.rawValue)
        let dispatch: GUnixFDSourceFunc = { _, condition, pointer in
            SourceCallback<WatchBody>.from(pointer)(FDCondition(condition)) ? 1 : 0
        }
        return Source(id: g_unix_fd_add_full(priorityDefault, fd.rawValue, condition, dispatch,
                                             SourceCallback<WatchBody>.retained(body), releaseWatch))
    }

    /// Calls `body` whenever `fd` can be written without blocking, or is in error or hung up
    /// (`g_unix_fd_add_full` with `G_IO_OUT | G_IO_HUP | G_IO_ERR`) until `body` returns false. For writing to
    /// a pipe in non-blocking mode a little at a time; the descriptor is not closed when the watch ends.
    @discardableResult
    public static func watchWritable(fd: FileDescriptor, _ body: @escaping (_ condition: FDCondition) -> Bool) -> Source {
        let condition = GIOCondition(G_IO_OUT.rawValue | G_IO_HUP.rawValue | G_IO_ERR.rawValue)
        let dispatch: GUnixFDSourceFunc = { _, condition, pointer in
            SourceCallback<WatchBody>.from(pointer)(FDCondition(condition)) ? 1 : 0
        }
        return Source(id: g_unix_fd_add_full(priorityDefault, fd.rawValue, condition, dispatch,
                                             SourceCallback<WatchBody>.retained(body), releaseWatch))
    }

    /// Calls `body` on the main loop each time the process receives `signum` until `body` returns false
    /// (`g_unix_signal_add_full`). GLib allows SIGHUP, SIGINT, SIGTERM, SIGUSR1, SIGUSR2 and SIGWINCH; for
    /// any other signal a warning is logged and the returned source is inactive.
    @discardableResult
    public static func unixSignal(_ signum: Int32, _ body: @escaping () -> Bool) -> Source {
        guard [SIGHUP, SIGINT, SIGTERM, SIGUSR1, SIGUSR2, SIGWINCH].contains(signum) else {
            Log.warning("GLib cannot watch signal \(signum)")
            return Source(id: 0)
        }
        return Source(id: g_unix_signal_add_full(priorityDefault, signum, dispatchRepeat,
                                                 SourceCallback<RepeatBody>.retained(body), releaseRepeat))
    }

    /// Runs one iteration of the default main context (`g_main_context_iteration`): dispatches what is
    /// ready, or with `mayBlock` waits for something to become ready first. Returns whether anything was
    /// dispatched.
    @discardableResult
    public static func iterate(mayBlock: Bool) -> Bool {
        g_main_context_iteration(nil, mayBlock ? 1 : 0) != 0
    }

    /// The monotonic clock in µs (`g_get_monotonic_time`), for measuring intervals.
    public static var monotonicMicroseconds: Int64 {
        Int64(g_get_monotonic_time())
    }
}
