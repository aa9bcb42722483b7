import CGio

/// Watches one file on the main loop (`g_file_monitor_file`, inotify underneath): `onChange` is called when the
/// file is created, written, replaced (written elsewhere and renamed over it, as `writeFileAtomically` does)
/// or deleted. The file need not exist yet; its folder should: GIO looks for a missing folder every 4 s.
/// Events are GIO's, rate-limited by GIO (`g_file_monitor_set_rate_limit`, 800 ms by default for in-place
/// writes; a rename is reported at once).
public final class FileMonitor {
    private let monitor: UnsafeMutablePointer<GFileMonitor>
    private let box: FileMonitorBox

    /// Watches the file at `path`; nil when GIO cannot (no inotify and no fallback).
    public init?(path: String, onChange: @escaping () -> Void) {
        let file = g_file_new_for_path(path)
        defer { g_object_unref(UnsafeMutableRawPointer(file)) }
        var error: UnsafeMutablePointer<GError>?
        guard let m = g_file_monitor_file(file, G_FILE_MONITOR_WATCH_MOVES, nil, &error) else {
            if let error { g_error_free(error) }
            return nil
        }
        monitor = m
        box = FileMonitorBox(onChange)
        // "changed": void (GFileMonitor*, GFile* file, GFile* other, GFileMonitorEvent, gpointer user_data)
        let callback: @convention(c) (gpointer?, gpointer?, gpointer?, UInt32, gpointer?) -> Void = { _, _, _, event, data in
            guard event != G_FILE_MONITOR_EVENT_ATTRIBUTE_CHANGED.rawValue,
                  event != G_FILE_MONITOR_EVENT_PRE_UNMOUNT.rawValue else { return }
            Unmanaged<FileMonitorBox>.fromOpaque(data!).takeUnretainedValue().body()
        }
        g_signal_connect_data(m, "changed", unsafeBitCast(callback, to: GCallback.self),
                              Unmanaged.passUnretained(box).toOpaque(), nil, GConnectFlags(0))
    }

    deinit {
        g_file_monitor_cancel(monitor)
        g_signal_handlers_disconnect_matched(monitor, G_SIGNAL_MATCH_DATA, 0, 0, nil, nil,
                                             Unmanaged.passUnretained(box).toOpaque())
        g_object_unref(monitor)
    }
}

private final class FileMonitorBox {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}
