import GLibKit
import LectorCommon
import SpeechCore
import Synthesis

/// The user's settings: `$XDG_CONFIG_HOME/lector/config` (`~/.config/lector/config` by default), a key file
/// read with GLib's GKeyFile:
///
/// ```
/// [speech]
/// language=de
/// rate=190
/// pitch=40
/// volume=0.8
///
/// [voices]
/// en=English (America)
/// pt-BR=roa/pt-BR
/// ```
///
/// `language`: the BCP 47 tag used when a text names none and detection is unsure (else the locale's, else
/// en); `rate`: words per minute, 80-450 (default 175); `pitch`: 0-99 (default 50); `volume`: the stream
/// volume, 0.0-1.0 (default 1.0). `[voices]`: BCP 47 tag = voice name or identifier (`lector voices`): an
/// eSpeak NG voice, or a Piper voice (`piper:en_US-joe-medium`), which then reads that language. `[ducking]`:
/// `mode` = `lower` (the default), `pause-others` or `off`, and `level`, how many dB other streams are lowered
/// (default 15). `[daemon]`: `idle-exit`, the minutes stopped after which the daemon exits with its state saved
/// (default 10; 0 never), and `portal-shortcut` (`true`/`false`, default false): bind "Read selection" through
/// the XDG GlobalShortcuts portal (`PortalShortcut`); the daemon then never exits when idle, since the portal
/// forgets the shortcut when the daemon goes. `[reading]`: what is read of web addresses, e-mail addresses,
/// citation markers, long numbers and hashes, runs of symbols and emoji (`ReadingSettings`: `links` = `host`,
/// `full` or `skip`; `emails`, `citations`, `numbers`, `symbols` = `read` or `skip`; `emoji` = `once`, `all` or
/// `skip`). Comments are whole lines starting with `#` (GKeyFile keeps anything after
/// `=` as the value).
///
/// The file is read without blocking (a FIFO is refused, not waited on), and only when it is a regular file of
/// at most `StateFiles.maximumConfigurationBytes`; a symbolic link to one is followed (dotfile managers install
/// the configuration as a link). Anything else is one line, and the defaults apply.
///
/// A missing file means the defaults. Every bad value (and unknown group or key) is reported as one line with
/// the file, the line and the key, and ignored; the rest of the file still applies.
struct Configuration: Equatable {
    /// `[speech] language`: the default language, as written (a tag some voice speaks).
    var language: String?
    /// `[voices]`: the voice identifier (``Voice/identifier``) per language, keyed by the tag lowercased
    /// with `_` read as `-` (`en-us`).
    var voices: [String: String] = [:]
    /// `[speech] rate`, words per minute.
    var rate: Int?
    /// `[speech] pitch`, 0...99.
    var pitch: Int?
    /// `[speech] volume`, linear 0...1.
    var volume: Double?
    /// `[ducking] mode` and `level`: what happens to other audio while reading.
    var ducking: DuckingMode?
    /// `[daemon] idle-exit`, in seconds (the file says minutes); nil: the default.
    var idleExitSeconds: Double?
    /// `[daemon] portal-shortcut`: whether the daemon binds "Read selection" through the GlobalShortcuts portal.
    var portalShortcut = false
    /// `[reading]`: what is read of web addresses, symbols, emoji, … (the defaults for what the file leaves out).
    var reading = ReadingSettings()

    /// `$XDG_CONFIG_HOME/lector/config`.
    static var defaultPath: String { UserDirs.config + "/lector/config" }

    /// The voice configured for `tag` or for a less specific form of it (`en-US` → `en-US`, `en`), if any.
    func voice(for tag: String) -> String? {
        var parts = tag.lowercased().split(whereSeparator: { $0 == "-" || $0 == "_" })
        while !parts.isEmpty {
            if let v = voices[parts.joined(separator: "-")] { return v }
            parts.removeLast()
        }
        return nil
    }

    /// Reads the file at `path`: the settings, and one line per problem (`PATH:LINE: [group] key: …`).
    /// A missing file gives the defaults and no problem; an unreadable or malformed one, the defaults and one problem.
    /// `matcher` is evaluated only if the file names a language or a voice.
    static func load(path: String, matcher: @autoclosure () -> LanguageMatcher) -> (Configuration, problems: [String]) {
        let file: KeyFile
        do { file = try KeyFile(path: path, maximumBytes: StateFiles.maximumConfigurationBytes, followLinks: true) } catch {
            if error.isFileNotFound { return (Configuration(), []) }
            let message = error.message.hasPrefix(path + ":") ? error.message : "\(path): \(error.message)"
            return (Configuration(), ["\(message); using the defaults"])
        }
        return parse(file, path: path, matcher: matcher())
    }

    /// The settings in `file` (read from `path`, which the problems name).
    static func parse(_ file: KeyFile, path: String, matcher: @autoclosure () -> LanguageMatcher) -> (Configuration, problems: [String]) {
        var config = Configuration()
        var problems: [String] = []
        func report(_ group: String, _ key: String?, _ message: String) {
            let line = key.flatMap { file.lineNumber(ofKey: $0, inGroup: group) } ?? file.lineNumber(ofGroup: group)
            let place = line.map { "\(path):\($0)" } ?? path
            problems.append("\(place): [\(group)]" + (key.map { " \($0)" } ?? "") + ": " + message)
        }
        for group in file.groups {
            switch group {
            case "speech": config.readSpeech(file, matcher: matcher(), report: report)
            case "voices": config.readVoices(file, matcher: matcher(), report: report)
            case "ducking": config.readDucking(file, report: report)
            case "daemon": config.readDaemon(file, report: report)
            case "reading": config.readReading(file, report: report)
            default: report(group, nil, "unknown group (known: [speech], [voices], [ducking], [daemon], [reading]); ignored")
            }
        }
        return (config, problems)
    }

    /// `[speech]`: language, rate, pitch, volume.
    private mutating func readSpeech(_ file: KeyFile, matcher: @autoclosure () -> LanguageMatcher,
                                     report: (String, String?, String) -> Void) {
        let group = "speech"
        for key in file.keys(inGroup: group) {
            switch key {
            case "language":
                let value = file.string(key, inGroup: group) ?? ""
                do {
                    _ = try matcher().match(value)
                    language = value.trimmingSpaces
                } catch {
                    report(group, key, "\(error.description); ignored")
                }
            case "rate":
                rate = Self.number(file, group, key, in: SpeakOptions.rates, unit: " words per minute",
                                   default: "\(SpeakOptions.defaultRate)", report: report)
            case "pitch":
                pitch = Self.number(file, group, key, in: SpeakOptions.pitches, unit: "",
                                    default: "\(SpeakOptions.defaultPitch)", report: report)
            case "volume":
                let raw = file.string(key, inGroup: group) ?? ""
                if let v = try? file.double(key, inGroup: group), v.isFinite, SpeakOptions.volumes.contains(v) {
                    volume = v
                } else {
                    report(group, key, "'\(raw)' is not a volume from 0.0 to 1.0; using 1.0")
                }
            default:
                report(group, key, "unknown key (known: language, rate, pitch, volume); ignored")
            }
        }
    }

    /// `[voices]`: a BCP 47 tag = an eSpeak NG or Piper voice.
    private mutating func readVoices(_ file: KeyFile, matcher: @autoclosure () -> LanguageMatcher,
                                     report: (String, String?, String) -> Void) {
        let group = "voices"
        for key in file.keys(inGroup: group) {
            let name = file.string(key, inGroup: group) ?? ""
            do { _ = try matcher().match(key) } catch {
                report(group, key, "\(error.description); ignored")
                continue
            }
            guard let voice = matcher().voice(named: name.trimmingSpaces) else {
                // A Piper voice may be installed while the daemon runs: kept, and looked for when it is needed.
                if name.trimmingSpaces.lowercased().hasPrefix("piper:") {
                    voices[key.lowercased().replacingUnderscores] = name.trimmingSpaces
                    report(group, key, "unknown voice '\(name)' (`lector voices` lists them); eSpeak NG reads it until it is installed")
                } else {
                    report(group, key, "unknown voice '\(name)' (`lector voices` lists them); ignored")
                }
                continue
            }
            voices[key.lowercased().replacingUnderscores] = voice.identifier
        }
    }

    /// `[daemon]`: idle-exit (minutes, 0 to 1440), portal-shortcut (true or false).
    private mutating func readDaemon(_ file: KeyFile, report: (String, String?, String) -> Void) {
        let group = "daemon"
        for key in file.keys(inGroup: group) {
            if key == "portal-shortcut" {
                let raw = (file.string(key, inGroup: group) ?? "").trimmingSpaces
                if raw == "true" || raw == "false" { portalShortcut = raw == "true" } else {
                    report(group, key, "'\(raw)' is not true or false; using false")
                }
                continue
            }
            guard key == "idle-exit" else {
                report(group, key, "unknown key (known: idle-exit, portal-shortcut); ignored")
                continue
            }
            if let minutes = try? file.double(key, inGroup: group), minutes.isFinite, minutes >= 0, minutes <= 1440 {
                idleExitSeconds = minutes * 60
            } else {
                let raw = file.string(key, inGroup: group) ?? ""
                report(group, key, "'\(raw)' is not a number of minutes from 0 to 1440; using 10")
            }
        }
    }

    /// `[ducking]`: mode and level.
    private mutating func readDucking(_ file: KeyFile, report: (String, String?, String) -> Void) {
        let group = "ducking"
        var mode = "lower"
        var level = 15.0
        for key in file.keys(inGroup: group) {
            let raw = (file.string(key, inGroup: group) ?? "").trimmingSpaces
            switch key {
            case "mode":
                if ["lower", "pause-others", "off"].contains(raw) { mode = raw } else {
                    report(group, key, "'\(raw)' is not lower, pause-others or off; using lower")
                }
            case "level":
                if let v = try? file.double(key, inGroup: group), v.isFinite, abs(v) <= 60 { level = abs(v) } else {
                    report(group, key, "'\(raw)' is not a level from 0 to 60 dB; using 15")
                }
            default:
                report(group, key, "unknown key (known: mode, level); ignored")
            }
        }
        ducking = mode == "off" ? .off : mode == "pause-others" ? .pauseOtherPlayers : .lower(decibels: -level)
    }

    private static func number(_ file: KeyFile, _ group: String, _ key: String, in range: ClosedRange<Int>, unit: String,
                               default fallback: String, report: (String, String?, String) -> Void) -> Int? {
        let raw = file.string(key, inGroup: group) ?? ""
        if let v = try? file.integer(key, inGroup: group), range.contains(v) { return v }
        report(group, key, "'\(raw)' is not a whole number from \(range.lowerBound) to \(range.upperBound)\(unit); using \(fallback)")
        return nil
    }
}

private extension String {
    var replacingUnderscores: String { String(map { $0 == "_" ? "-" : $0 }) }
}
