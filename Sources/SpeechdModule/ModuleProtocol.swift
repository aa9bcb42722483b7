/// What Speech Dispatcher sends an output module, line by line on standard input (speech-dispatcher 0.11,
/// doc/speech-dispatcher.texi "Communication Protocol for Output Modules", src/modules/module_process.c).
public enum ModuleCommand: Equatable, Sendable {
    /// The first line: the module answers 299 (loaded) or 399 (cannot start).
    case initialize
    /// A message to speak: SSML for `.text`, one character, a key name or a sound icon's name otherwise.
    case speak(MessageKind, String)
    /// Speech parameters for the next messages (`rate=20`, `language=en-US`, `NULL` for unset).
    case set([String: String])
    /// Audio settings, sent once after INIT; Lector plays through its own daemon and ignores them.
    case audio([String: String])
    /// The server's log level for the module.
    case logLevel([String: String])
    /// `DEBUG ON FILE` or `DEBUG OFF`.
    case debug(on: Bool)
    /// Stop speaking at once; no reply, then the STOP (or END) event.
    case stop
    /// Stop at a place known exactly; no reply, then the PAUSE event.
    case pause
    /// `LIST VOICES`: one 200- line per voice.
    case listVoices
    /// End the module.
    case quit
    /// A line the protocol does not know.
    case unknown(String)
    /// Data that breaks the protocol (a character or key of more than one line, a line too long to read): its
    /// error reply.
    case invalid(String)
}

/// The kind of a message: SPEAK, CHAR, KEY or SOUND_ICON.
public enum MessageKind: String, Equatable, Sendable {
    /// SPEAK: SSML text.
    case text = "SPEAK"
    /// CHAR: one character.
    case character = "CHAR"
    /// KEY: a key name (SSIP KEY: `a`, `shift_a`, `space`, …).
    case key = "KEY"
    /// SOUND_ICON: an icon's symbolic name.
    case soundIcon = "SOUND_ICON"
}

/// Turns the lines of the module protocol into commands. Pure: feed it lines (without their `\n`); it
/// returns the reply that opens a data block (`202 OK RECEIVING MESSAGE`, `203 OK RECEIVING SETTINGS`, …)
/// at once, and the command once its block ends with a line holding a single dot. A data line that starts
/// with a dot has it doubled by the server; one is removed.
public struct ModuleReader: Sendable {
    private enum Block: Sendable {
        case message(MessageKind, [String])
        case settings(Settings, [String: String])
    }
    private enum Settings: Sendable { case set, audio, logLevel }
    private var block: Block?
    /// Whether a line of the block being read was too long and skipped: the block ends with its error reply.
    private var blockBroken = false
    /// Whether INIT was read.
    public private(set) var initialized = false

    /// Makes a reader waiting for INIT.
    public init() {}

    /// Reads one line; returns the replies to send now and the command the line completes, if any.
    public mutating func read(_ line: String) -> (replies: [String], command: ModuleCommand?) {
        if let block { return continued(block, line) }
        guard initialized else {
            if line == "INIT" { initialized = true; return ([], .initialize) }
            return ([], .unknown(line))
        }
        switch line {
        case "SPEAK", "CHAR", "KEY", "SOUND_ICON":
            block = .message(MessageKind(rawValue: line)!, [])
            return (["202 OK RECEIVING MESSAGE"], nil)
        case "SET":
            block = .settings(.set, [:])
            return (["203 OK RECEIVING SETTINGS"], nil)
        case "AUDIO":
            block = .settings(.audio, [:])
            return (["207 OK RECEIVING AUDIO SETTINGS"], nil)
        case "LOGLEVEL":
            block = .settings(.logLevel, [:])
            return (["207 OK RECEIVING LOGLEVEL SETTINGS"], nil)
        case "STOP": return ([], .stop)
        case "PAUSE": return ([], .pause)
        case "LIST VOICES": return ([], .listVoices)
        case "QUIT": return ([], .quit)
        default:
            if line.hasPrefix("DEBUG ON") { return ([], .debug(on: true)) }
            if line == "DEBUG OFF" { return ([], .debug(on: false)) }
            return ([], .unknown(line))
        }
    }

    /// A line too long to be kept (`ModuleDriver.maximumLine`) was skipped up to its newline: outside a data block
    /// it is answered with 300 at once (it was no command); inside one, the block ends with its error reply
    /// (301 for a message, 303 for settings) instead of its command, so that nothing of the line is read.
    public mutating func overlong() -> (replies: [String], command: ModuleCommand?) {
        guard block != nil else { return ([], .invalid("300 ERR UNKNOWN COMMAND")) }
        blockBroken = true
        return ([], nil)
    }

    private mutating func continued(_ current: Block, _ line: String) -> (replies: [String], command: ModuleCommand?) {
        let ended = line == "."
        if ended && blockBroken {
            block = nil
            blockBroken = false
            if case .message = current { return ([], .invalid("301 ERROR CANT SPEAK")) }
            return ([], .invalid("303 ERROR INVALID PARAMETER OR VALUE"))
        }
        let data = line.hasPrefix(".") ? String(line.dropFirst()) : line
        switch current {
        case .message(let kind, var lines):
            guard ended else {
                lines.append(data)
                block = .message(kind, lines)
                return ([], nil)
            }
            block = nil
            if kind != .text && lines.count > 1 { return ([], .invalid("305 DATA MORE THAN ONE LINE")) }
            var text = lines.joined(separator: "\n")
            if (kind == .key || kind == .character) && text == "space" { text = " " }
            return ([], .speak(kind, text))
        case .settings(let which, var values):
            guard ended else {
                if let eq = data.firstIndex(of: "=") {
                    values[String(data[..<eq])] = String(data[data.index(after: eq)...])
                }
                block = .settings(which, values)
                return ([], nil)
            }
            block = nil
            switch which {
            case .set: return ([], .set(values))
            case .audio: return ([], .audio(values))
            case .logLevel: return ([], .logLevel(values))
            }
        }
    }
}
