import Foundation

extension PrivateSession {
    /// Starts an empty private system bus in the session's folder (`system_bus`), for desktop services that need
    /// one (GNOME Shell, gsd-media-keys). Its policy allows everything, receiving included: without
    /// `<allow receive_sender="*"/>` gsd-media-keys hangs waiting for replies it is never let to see.
    /// - Returns: the bus process (ended with the session) and its address for `DBUS_SYSTEM_BUS_ADDRESS`.
    /// - Throws: when the configuration cannot be written or dbus-daemon cannot be started.
    func startSystemBus() throws -> (process: BackgroundProcess, address: String) {
        let socket = directory.appendingPathComponent("system_bus").path
        let config = directory.appendingPathComponent("system-bus.conf")
        try """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig><type>system</type><listen>unix:path=\(socket)</listen>
            <policy context="default"><allow user="*"/><allow own="*"/><allow send_destination="*"/><allow receive_sender="*"/></policy></busconfig>
            """.write(to: config, atomically: true, encoding: .utf8)
        let process = try spawn("dbus-daemon", ["--config-file=\(config.path)", "--nofork", "--nopidfile"], tag: "system-bus")
        return (process, "unix:path=\(socket)")
    }
}
