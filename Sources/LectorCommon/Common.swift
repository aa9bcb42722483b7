@preconcurrency import Glibc
import GLibKit

/// Prints `lector: message` as one line on standard error (line breaks in `message` become spaces).
public func printError(_ message: String) {
    let line = "lector: " + message.split(whereSeparator: \.isNewline).joined(separator: " ") + "\n"
    fputs(line, stderr)
}

/// Where the daemon keeps the reading it was doing, so that a daemon started later goes on with it
/// (`$XDG_STATE_HOME/lector/`, XDG Base Directory Specification).
public enum SavedReading {
    /// The folder of the saved state: `$XDG_STATE_HOME/lector` (default `~/.local/state/lector`).
    public static var directory: String { UserDirs.state + "/lector" }
    /// The file describing the saved reading (`key value` lines, written and read by the daemon's `StateKeeper`).
    public static var readingPath: String { directory + "/reading" }
    /// Whether a saved reading exists (for `lector resume`, which starts a daemon only then).
    public static var exists: Bool { fileTest(readingPath, .isRegular) }
}

/// The commands `lector` hands to `lector-daemon`, the executable that links eSpeak NG, PulseAudio, ICU and
/// CLD2 (the `lector` command line links GLib only, so that it starts fast). `lector-daemon` runs the same
/// command line as `lector` with these implemented in-process.
public protocol LocalCommands {
    /// `lector daemon [OPTION…]`: `arguments` are argv from the command's name on ("lector daemon", options…).
    /// Returns the exit status.
    func daemon(_ arguments: [String]) -> Int32
    /// `lector worker`: the synthesis worker, speaking the worker protocol on standard input and output.
    func worker() -> Int32
    /// `lector voices [--lang TAG]`: `arguments` as for `daemon`. Returns the exit status.
    func voices(_ arguments: [String]) -> Int32
    /// `lector read --output FILE`: renders `text` read with `options` to an audio file as `render` says,
    /// without a daemon or a sound server. Returns the exit status (1 with one line on standard error on
    /// failure, 2 for a usage error, 130 when interrupted).
    func render(_ text: String, options: SpeakOptions, render: RenderOptions) -> Int32
    /// `lector read --output FILE --file PATH` (or a regular file on standard input): renders the open `file`,
    /// a document (EPUB, PDF, HTML, …) read with its title, authors and chapters, or else its text, as
    /// `render(_:options:render:)` does. Returns the exit status as that does.
    func render(file: Input.OpenFile, options: SpeakOptions, render: RenderOptions) -> Int32
}

/// How `lector read --output` writes its file (see `docs/ARCHITECTURE.md`, offline rendering).
public struct RenderOptions: Sendable {
    /// The file to write; its extension names the format unless `format` does.
    public var path: String
    /// `--format`: wav, flac, ogg, opus or mp3; nil: from the extension.
    public var format: String?
    /// `--bitrate`: kbit/s for lossy formats; nil: the format's default for speech.
    public var bitrate: Int?
    /// `--jobs`: synthesis workers; nil: one per core.
    public var jobs: Int?
    /// `--quiet`: no progress bar.
    public var quiet = false
    /// `--force`: replace an existing file.
    public var force = false
    /// `--split chapters`: one file per chapter and an .m3u playlist.
    public var splitChapters = false

    /// Options writing `path` with every default.
    public init(path: String) { self.path = path }
}

/// How the daemon's sleep timer is shown, by `lector status` and in the MPRIS metadata (`lector:sleepTimer`).
public enum SleepTimerText {
    /// Describes the D-Bus form of the timer (see `dbusValue`): "off", "at the end of this paragraph", or
    /// "until 23:40:05" (local time) for a deadline in µs since the Unix epoch.
    public static func describe(mode: String, wallClock: Int64) -> String {
        switch mode {
        case "paragraph": return "at the end of this paragraph"
        case "time":
            var seconds = time_t(wallClock / 1_000_000)
            var parts = tm()
            localtime_r(&seconds, &parts)
            func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
            return "until \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
        default: return "off"
        }
    }
}
