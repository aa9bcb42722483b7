@preconcurrency import Glibc
import GLibKit
import LectorCommon

/// `lector-daemon`, the executable that runs the daemon, the synthesis worker, `voices` and `read --output`
/// (it links eSpeak NG, PulseAudio, ICU and CLD2; `lector` links GLib only, so that every command starts fast).
/// It is looked for next to `lector` (the build folder, or both installed in one folder), then in
/// `../libexec/` from `lector`'s folder (where `meson install` puts it: PREFIX/libexec).
enum DaemonExecutable {
    /// The paths tried, in order.
    static var candidates: [String] {
        let exe = executablePath()
        let dir = exe.lastIndex(of: "/").map { String(exe[..<$0]) } ?? "."
        return [dir + "/lector-daemon", dir + "/../libexec/lector-daemon"]
    }

    /// The first candidate that is an executable file; nil when there is none.
    static var path: String? {
        candidates.first { access($0, X_OK) == 0 && fileTest($0, .isRegular) }
    }

    /// Replaces this process by `lector-daemon` with the same arguments (`execv(3)`): same PID, same standard
    /// input and output. Returns only on failure: exit status 1, with one line on standard error.
    static func become(_ arguments: [String]) -> Int32 {
        guard let path else {
            printError("cannot find lector-daemon (looked for \(candidates.joined(separator: " and ")))")
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
