import CGio
import CLectorShims

/// Logging through `g_log` in the log domain "Lector" (GLib Reference Manual, "Message Logging").
///
/// GLib's default handler writes to stderr, or to the systemd journal when stderr is connected to it.
/// `debug` and `info` lines are shown only when `G_MESSAGES_DEBUG` names "Lector" (or is "all").
/// None of these abort the process (unless the user asks for that with `G_DEBUG=fatal-warnings` or
/// `G_DEBUG=fatal-criticals`).
public enum Log {
    /// The GLib log domain of every line Lector logs.
    public static let domain = "Lector"

    /// `G_LOG_LEVEL_DEBUG`: detail for developers.
    public static func debug(_ message: String) { write(G_LOG_LEVEL_DEBUG, message) }
    /// `G_LOG_LEVEL_INFO`: informational.
    public static func info(_ message: String) { write(G_LOG_LEVEL_INFO, message) }
    /// `G_LOG_LEVEL_MESSAGE`: normal but significant.
    public static func message(_ message: String) { write(G_LOG_LEVEL_MESSAGE, message) }
    /// `G_LOG_LEVEL_WARNING`: something went wrong and was handled.
    public static func warning(_ message: String) { write(G_LOG_LEVEL_WARNING, message) }
    /// `G_LOG_LEVEL_CRITICAL`: a serious problem; the process goes on (unlike `g_error`).
    public static func critical(_ message: String) { write(G_LOG_LEVEL_CRITICAL, message) }

    private static func write(_ level: GLogLevelFlags, _ message: String) {
        lector_log(domain, level, message)
    }
}
