@preconcurrency import Glibc
import GLibKit
import LectorCommon

/// `lector-daemon`, the executable that runs the daemon, the synthesis worker, `voices` and `read --output`
/// (it links eSpeak NG, PulseAudio, ICU and CLD2; `lector` links GLib only, so that every command starts fast).
/// It is looked for next to `lector` (the build folder, or both installed in one folder), then in
/// `../libexec/lector/` from `lector`'s folder (where `meson install` puts it: PREFIX/libexec/lector).
enum DaemonExecutable {
    /// The paths tried, in order, for the executable `name` (`lector-daemon`, `lector-window`).
    static func candidates(_ name: String = "lector-daemon") -> [String] {
        siblingExecutableCandidates(name)
    }

    /// The paths tried for `lector-daemon`.
    static var candidates: [String] { candidates() }

    /// The first candidate for `name` that is an executable file; nil when there is none.
    static func path(_ name: String) -> String? {
        siblingExecutable(name)
    }

    /// The path of `lector-daemon`; nil when it is not found.
    static var path: String? { path("lector-daemon") }

    /// Replaces this process by the executable `name` with the same arguments (`execv(3)`): same PID, same
    /// standard input and output. Returns only on failure: exit status 1, with one line on standard error.
    static func become(_ arguments: [String], executable name: String = "lector-daemon") -> Int32 {
        guard let path = path(name) else {
            printError("cannot find \(name) (looked for \(candidates(name).joined(separator: " and ")))")
            return 1
        }
        fflush(stdout)
        var cArgs = ([path] + arguments.dropFirst()).map { strdup($0) } + [nil]
        defer { for p in cArgs { free(p) } }
        execv(path, &cArgs)
        printError("cannot run \(path): \(String(cString: strerror(errno)))")
        return 1
    }
}
