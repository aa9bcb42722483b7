@preconcurrency import Glibc
import GLibKit
import LectorCommon

/// Brings up the reader window for MPRIS `Raise`: the window is a GApplication that owns
/// `org.lector.Lector.Window` and exports `org.freedesktop.Application` at `/org/lector/Lector/Window`
/// (Desktop Entry Specification, "D-Bus Activation"). `Activate` shows a running window; an installed Lector
/// has a D-Bus service file that starts one; otherwise `lector-window` is started here, detached.
/// Nothing waits: the call is asynchronous and the spawn returns at once. At most one window is started per
/// `spawnInterval`, however often Raise is called (a window takes a moment to own its name).
final class WindowRaiser {
    /// The least time between two starts of `lector-window`, µs (2 s).
    static let spawnInterval: Int64 = 2_000_000
    /// When a window was last started (monotonic µs).
    private var lastSpawn: Int64?

    /// The window's bus name (its GApplication id).
    static let busName = "org.lector.Lector.Window"
    /// Its GApplication object.
    static let path = "/org/lector/Lector/Window"

    /// `lector-window` next to this executable (the build folder, or both in PREFIX/libexec/lector); nil when
    /// Lector was built without the window.
    static var executable: String? { siblingExecutable("lector-window") }

    /// Whether there is a window to raise (MPRIS `CanRaise`).
    static var isAvailable: Bool { executable != nil }

    /// Shows the window on `connection`'s bus: Activate (which D-Bus activation may start), else a new
    /// `lector-window` process. A failure is one log line.
    func raise(on connection: DBusConnection) {
        connection.call(destination: Self.busName, path: Self.path, interface: "org.freedesktop.Application", method: "Activate",
                        arguments: [.dictionary(valueType: "v", [:])], timeoutMilliseconds: 10_000) { [weak self] result in
            guard let self, case .failure(let error) = result else { return }
            guard error.name == "org.freedesktop.DBus.Error.ServiceUnknown" || error.name.hasPrefix("org.freedesktop.DBus.Error.Spawn") else {
                return Log.warning("cannot raise the window: \(error.message)")
            }
            let now = MainContext.monotonicMicroseconds
            if let last = lastSpawn, now - last < Self.spawnInterval { return }
            lastSpawn = now
            if let problem = Self.spawn() { Log.warning("cannot start the window: \(problem)") }
        }
    }

    /// glibc's POSIX_SPAWN_SETSID (spawn.h, behind _GNU_SOURCE).
    private static let posixSpawnSetsid: Int16 = 0x80

    /// Starts `lector-window` in a session of its own, its output to /dev/null; nil, or why it could not.
    private static func spawn() -> String? {
        guard let path = executable else { return "lector-window was not found" }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd: Int32 in 0...2 { posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, posixSpawnSetsid)
        var cArgs = [strdup(path), nil]
        defer { for p in cArgs { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, &attributes, &cArgs, environ)
        return rc == 0 ? nil : String(cString: strerror(rc))
    }
}
