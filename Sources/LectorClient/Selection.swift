@preconcurrency import Glibc
import GLibKit
import LectorCommon

/// The text of the primary selection (`--selection`) or the clipboard (`--clipboard`), read only when asked,
/// so that plain `lector read` loads and starts nothing more.
///
/// It asks the display's clipboard tools: on Wayland (`WAYLAND_DISPLAY`) `wl-paste` (wl-clipboard), which
/// uses the compositor's data-control protocol (wlroots, KWin) where it is offered; on X11 (`DISPLAY`)
/// `xclip`. First the offered types (a clipboard holding only an image is told apart from an empty one),
/// then the text, with a limit of `Input.maximumBytes` (32 MiB) and of 5 s.
enum Selection: String {
    case primary = "selection", clipboard = "clipboard"

    /// The most a selection may hold, like a file (32 MiB).
    static let maximumBytes = Input.maximumBytes
    /// How long the selection's owner may take to answer, ms.
    static let timeoutMilliseconds: Int32 = 5000

    /// The selection's text, or the one line that says why there is none.
    func read() -> Result<String, SelectionError> {
        let wayland = environment("WAYLAND_DISPLAY").map { !$0.isEmpty } ?? false
        let x11 = environment("DISPLAY").map { !$0.isEmpty } ?? false
        guard wayland || x11 else {
            return .failure(SelectionError(message: "--\(rawValue) needs a desktop session: neither WAYLAND_DISPLAY nor DISPLAY is set"))
        }
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
        let what = self == .primary ? "the selection" : "the clipboard"
        let types = Self.run(list, limit: 1 << 20)
        if types.missing {
            return .failure(SelectionError(message: "reading \(what) needs \(tool) (Debian package \(wayland ? "wl-clipboard" : "xclip"))"))
        }
        let offered = String(decoding: types.output, as: UTF8.self).split(whereSeparator: \.isNewline).map(String.init)
        if offered.isEmpty {
            if !types.error.isEmpty && !types.error.lowercased().contains("nothing") && !types.error.lowercased().contains("not available")
                && !types.error.lowercased().contains("no selection") {
                return .failure(SelectionError(message: "cannot read \(what): \(types.error) (a compositor without the data-control protocol lets only the focused window read it)"))
            }
            return .failure(SelectionError(message: "\(what) is empty"))
        }
        let textual = offered.contains { $0.hasPrefix("text/") || ["UTF8_STRING", "STRING", "TEXT", "COMPOUND_TEXT"].contains($0) }
        guard textual else {
            let shown = offered.filter { $0.contains("/") }.prefix(3).joined(separator: ", ")
            return .failure(SelectionError(message: "\(what) holds no text (it holds \(shown.isEmpty ? "other data" : shown))"))
        }
        let result = Self.run(fetch, limit: Self.maximumBytes + 1)
        if result.output.count > Self.maximumBytes {
            return .failure(SelectionError(message: "\(what) holds more than 32 MiB of text; Lector reads at most 32 MiB"))
        }
        if result.timedOut {
            return .failure(SelectionError(message: "the program that owns \(what) did not hand it over within 5 s"))
        }
        let text = String(decoding: result.output, as: UTF8.self) // invalid UTF-8 repaired; the daemon cleans the rest
        guard text.contains(where: { !$0.isWhitespace }) else { return .failure(SelectionError(message: "\(what) is empty")) }
        return .success(text)
    }

    /// What a tool printed (at most `limit` bytes: it is stopped after that), its first error line, and
    /// whether it could not be started or ran out of time.
    static func run(_ argv: [String], limit: Int) -> (output: [UInt8], error: String, missing: Bool, timedOut: Bool) {
        var out: [Int32] = [0, 0], err: [Int32] = [0, 0]
        guard pipe(&out) == 0, pipe(&err) == 0 else { return ([], "no pipe", false, false) }
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
        guard rc == 0 else { return ([], "", true, false) }
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
        return (output, firstError, (status >> 8) & 0xff == 127, timedOut)
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
            let reply = try? connection.call(destination: Names.bus, path: Names.path, interface: "org.freedesktop.DBus.Properties",
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
