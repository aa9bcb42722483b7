import LectorCommon

/// Starting Lector's daemon for other clients (the Speech Dispatcher module), as the command line does.
public enum DaemonLauncher {
    /// Makes sure a daemon owns `org.lector.Lector` on the session bus: by D-Bus activation when Lector is
    /// installed, else by starting `lector-daemon daemon` found next to the running executable. Blocks until
    /// the name appears, at most 10 s.
    /// - Returns: nil when a daemon runs, else the one-line reason it could not be started.
    public static func ensureRunning() -> String? {
        do { _ = try Client.connect(startingDaemon: true) } catch { return error.description }
        return nil
    }
}
