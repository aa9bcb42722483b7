import LectorCommon

/// Starting Lector's daemon for the other clients: the Speech Dispatcher module, which waits for it, and the
/// reader window, which must not wait (it watches the bus name instead).
public enum DaemonLauncher {
    /// Makes sure a daemon owns `org.lector.Lector` on the session bus: by D-Bus activation when Lector is
    /// installed, else by starting `lector-daemon daemon` found next to the running executable. Blocks until
    /// the name appears, at most 10 s.
    /// - Returns: nil when a daemon runs, else the one-line reason it could not be started.
    public static func ensureRunning() -> String? {
        do { _ = try Client.connect(startingDaemon: true) } catch { return error.description }
        return nil
    }

    /// Where a daemon started this way logs.
    public static var logPath: String { Client.logPath() }

    /// Starts a detached `lector-daemon daemon` (`Client.spawnDaemon`) and returns at once.
    /// - Returns: nil, or one line saying why it could not be started.
    public static func spawn() -> String? {
        do { try Client.spawnDaemon() } catch { return error.description }
        return nil
    }
}
