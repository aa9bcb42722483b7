@preconcurrency import Glibc
import GLibKit
import LectorCommon

/// The text of the primary selection (`--selection`) or the clipboard (`--clipboard`), read only when asked,
/// so that plain `lector read` loads and starts nothing more.
///
/// It runs Lector's own selection reader, `lector-selection` (found by `siblingExecutable`): an X11 client
/// through libxcb and a Wayland client of the wlr-data-control protocol, which tells a selection holding only
/// an image from an empty one and reads at most `Input.maximumBytes` (32 MiB), each step of the owner's answer
/// within 5 s. Only when it cannot reach the display by itself (exit status 3: a compositor without
/// data-control and no XWayland) are the clipboard tools tried: `wl-paste` (wl-clipboard) on Wayland,
/// `xclip` on X11, with the same limits.
enum Selection: String {
    case primary = "selection", clipboard = "clipboard"

    /// The most a selection may hold, like a file (32 MiB).
    static let maximumBytes = Input.maximumBytes
    /// How long a clipboard tool may take to hand the selection over, ms.
    static let timeoutMilliseconds: Int32 = 5000
    /// How long `lector-selection` may take in all, ms: it bounds each step of a transfer by 5 s and the
    /// whole transfer by 10 s itself (`SelectionLimits`); this is a backstop for a reader that hangs.
    static let readerTimeoutMilliseconds: Int32 = 15_000

    /// How the one-line messages name it.
    var spoken: String { self == .primary ? "the selection" : "the clipboard" }

    /// The selection's text, or the one line that says why there is none.
    func read() -> Result<String, SelectionError> {
        let wayland = environment("WAYLAND_DISPLAY").map { !$0.isEmpty } ?? false
        let x11 = environment("DISPLAY").map { !$0.isEmpty } ?? false
        guard wayland || x11 else {
            return .failure(SelectionError(message: "--\(rawValue) needs a desktop session: neither WAYLAND_DISPLAY nor DISPLAY is set"))
        }
        var nativeLine: String?
        if let reader = siblingExecutable("lector-selection") {
            let result = Self.run([reader, self == .primary ? "primary" : "clipboard"], limit: Self.maximumBytes + 1,
                                  timeoutMilliseconds: Self.readerTimeoutMilliseconds)
            if result.timedOut && result.output.count <= Self.maximumBytes {
                return .failure(SelectionError(message: "the program that owns \(spoken) did not hand it over within 15 s"))
            }
            if result.output.count > Self.maximumBytes { return checked(result) }
            switch result.status {
            case 0: return checked(result)
            case 3: nativeLine = result.error
            default: return .failure(SelectionError(message: result.error.isEmpty ? "cannot read \(spoken)" : result.error))
            }
        }
        return readWithTool(wayland: wayland, nativeLine: nativeLine)
    }

    /// The text a reader or tool printed, or the line for too much, too late or only white space.
    private func checked(_ result: (output: [UInt8], error: String, status: Int32, missing: Bool, timedOut: Bool)) -> Result<String, SelectionError> {
        if result.output.count > Self.maximumBytes {
            return .failure(SelectionError(message: "\(spoken) holds more than 32 MiB of text; Lector reads at most 32 MiB"))
        }
        if result.timedOut {
            return .failure(SelectionError(message: "the program that owns \(spoken) did not hand it over within 5 s"))
        }
        let text = String(decoding: result.output, as: UTF8.self) // invalid UTF-8 repaired; the daemon cleans the rest
        guard text.contains(where: { !$0.isWhitespace }) else { return .failure(SelectionError(message: "\(spoken) is empty")) }
        return .success(text)
    }

    /// The fallback: `wl-paste` or `xclip`. `nativeLine` is what `lector-selection` said when it could not
    /// reach the display, shown when the tool is not there either.
    private func readWithTool(wayland: Bool, nativeLine: String?) -> Result<String, SelectionError> {
        let list: [String], fetch: [String]
        if wayland {
            let primary = self == .primary ? ["--primary"] : []
            list = ["wl-paste"] + primary + ["--list-types"]
            fetch = ["wl-paste"] + primary + ["--no-newline", "--type", "text"]
        } else {
            let name = self == .primary ? "primary" : "clipboard"
            list = ["xclip", "-out", "-selection", name, "-target", "TARGETS"]
            fetch = ["xclip", "-out", "-selection", name, "-target", "UTF8_STRING"]
        }
        let tool = list[0]
        let what = spoken
        let types = Self.run(list, limit: 1 << 20)
        if types.missing {
            return .failure(SelectionError(message: nativeLine ?? "reading \(what) needs \(tool) (Debian package \(wayland ? "wl-clipboard" : "xclip"))"))
        }
        let offered = String(decoding: types.output, as: UTF8.self).split(whereSeparator: \.isNewline).map(String.init)
        if offered.isEmpty {
            if !types.error.isEmpty && !types.error.lowercased().contains("nothing") && !types.error.lowercased().contains("not available")
                && !types.error.lowercased().contains("no selection") {
                return .failure(SelectionError(message: nativeLine ?? "cannot read \(what): \(types.error)"))
            }
            return .failure(SelectionError(message: "\(what) is empty"))
        }
        let textual = offered.contains { $0.hasPrefix("text/") || ["UTF8_STRING", "STRING", "TEXT", "COMPOUND_TEXT"].contains($0) }
        guard textual else {
            let shown = offered.filter { $0.contains("/") }.prefix(3).joined(separator: ", ")
            return .failure(SelectionError(message: "\(what) holds no text (it holds \(shown.isEmpty ? "other data" : shown))"))
        }
        return checked(Self.run(fetch, limit: Self.maximumBytes + 1))
    }

    /// What a program printed (at most `limit` bytes: it is stopped after that), its first error line, its
    /// exit status, and whether it could not be started or ran out of time (`timeoutMilliseconds`, then stopped).
    static func run(_ argv: [String], limit: Int, timeoutMilliseconds: Int32 = Selection.timeoutMilliseconds)
        -> (output: [UInt8], error: String, status: Int32, missing: Bool, timedOut: Bool) {
        var out: [Int32] = [0, 0], err: [Int32] = [0, 0]
        guard pipe(&out) == 0, pipe(&err) == 0 else { return ([], "no pipe", -1, false, false) }
        for fd in out + err { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, out[1], 1)
        posix_spawn_file_actions_adddup2(&actions, err[1], 2)
        var cArgs = argv.map { strdup($0) } + [nil]
        defer { for p in cArgs { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, argv[0], &actions, nil, &cArgs, environ)
        close(out[1]); close(err[1])
        defer { close(out[0]); close(err[0]) }
        guard rc == 0 else { return ([], "", 127, true, false) }
        var output: [UInt8] = [], error: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        let deadline = MainContext.monotonicMicroseconds + Int64(timeoutMilliseconds) * 1000
        var open = [out[0], err[0]]
        var timedOut = false
        while !open.isEmpty && output.count <= limit {
            let left = (deadline - MainContext.monotonicMicroseconds) / 1000
            if left <= 0 { timedOut = true; break }
            var fds = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            if poll(&fds, nfds_t(fds.count), Int32(left)) < 0 { if errno == EINTR { continue } else { break } }
            for f in fds where f.revents != 0 {
                let n = Glibc.read(f.fd, &buffer, buffer.count)
                if n <= 0 { open.removeAll { $0 == f.fd }; continue }
                if f.fd == out[0] { output += buffer[0..<n] } else if error.count < 4096 { error += buffer[0..<n] }
            }
        }
        if !open.isEmpty { kill(pid, SIGTERM) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let firstError = String(decoding: error, as: UTF8.self).split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        let exitStatus = (status & 0x7f) == 0 ? (status >> 8) & 0xff : -1
        return (output, firstError, exitStatus, exitStatus == 127, timedOut)
    }
}

/// Why the selection or the clipboard could not be read: one line.
struct SelectionError: Error {
    var message: String
}

extension Client {
    /// The daemon's state ("reading", "paused", "stopped") when the text it holds is `text` (white space at
    /// the ends aside); nil when it holds another text or no daemon runs (nothing is started to ask).
    func sameTextState(_ text: String) -> String? {
        func get(_ name: String) -> Variant? {
            let reply = try? daemonCall(destination: Names.bus, path: Names.path, interface: "org.freedesktop.DBus.Properties",
                                             method: "Get", arguments: [.string(Names.interface), .string(name)], autoStart: false)
            return reply?.first?.unboxed
        }
        func trimmed(_ s: String) -> Substring {
            let start = s.firstIndex { !$0.isWhitespace } ?? s.endIndex
            let end = s.lastIndex { !$0.isWhitespace }.map { s.index(after: $0) } ?? start
            return s[start..<end]
        }
        guard let held = get(Lector1.Property.text.rawValue)?.string, trimmed(held) == trimmed(text) else { return nil }
        return get(Lector1.Property.state.rawValue)?.string
    }
}
