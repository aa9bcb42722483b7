@preconcurrency import Glibc
import GLibKit
import LectorCommon
import SpeechCore

/// The `lector` command line: `lector COMMAND [OPTIONS…]`, each command with its own GOptionContext and `--help`.
public enum Command {
    static let commands: [(name: String, summary: String)] = [
        ("read", "Read text aloud (arguments, --file, or standard input)"),
        ("pause", "Pause reading (silent at once, nothing lost)"),
        ("resume", "Resume reading where it paused"),
        ("toggle", "Pause, resume, or read the last text again"),
        ("stop", "Stop reading"),
        ("next", "Skip to the next sentence (or --chapter, --paragraph)"),
        ("previous", "Go back to the previous sentence (or --chapter, --paragraph)"),
        ("chapters", "List the chapters of the text with their start times"),
        ("chapter", "Go to chapter N"),
        ("seek", "Jump by ±SECONDS"),
        ("rate", "Change the speaking rate (words per minute), heard from the next word"),
        ("pitch", "Change the base pitch (0-99), heard from the next word"),
        ("voice", "Change the voice of the text being read, heard from the next word"),
        ("position", "Show the position in seconds, or jump to SECONDS"),
        ("status", "Show what is being read"),
        ("open", "Read files or file URIs; without one, pause or go on and say what is read (the desktop entry)"),
        ("sleep", "Pause reading after a time (20m, 1h30m) or at the end of this paragraph"),
        ("repeat", "Repeat the sentence being read, or the whole text and queue, or nothing"),
        ("voices", "List the voices (eSpeak NG and Piper) and their languages; `voices add FILE.onnx` installs a Piper voice"),
        ("window", "Show the reader window: the text, with the word being heard highlighted"),
        ("speechd", "Make Lector Speech Dispatcher's default output module (enable), or undo it (disable)"),
        ("shortcut", "Bind a key to reading the selection (GNOME or Plasma shortcut), or remove it"),
        ("lexicon", "Say words as you want: add, remove, list or import (W3C PLS) pronunciations"),
        ("daemon", "Run the reading daemon (started on demand by the other commands)"),
    ]

    /// Runs the command in `arguments` (argv, with argv[0]) and returns the exit status:
    /// 0 success, 1 failure (one line on standard error), 2 usage error, 3 `status` with no daemon.
    /// `daemon`, `worker`, `voices` and `read --output` run in `local` when given (in `lector-daemon`); without
    /// it (in `lector`) the process becomes `lector-daemon` with the same arguments (`DaemonExecutable`).
    /// Whether a graphical session is there to show a window on (`DISPLAY` or `WAYLAND_DISPLAY` set).
    static var hasDisplay: Bool {
        let names: [String] = ["DISPLAY", "WAYLAND_DISPLAY"]
        return names.contains { name in getenv(name).map { $0.pointee != 0 } ?? false }
    }

    public static func main(_ arguments: [String], local: (any LocalCommands)? = nil) -> Int32 {
        signal(SIGPIPE, SIG_IGN) // a dead worker or client must be an error, not the end of the process
        let args = Array(arguments.dropFirst())
        // Help reads "Usage: lector read [OPTION…] …" (the daemon sets "lector" back once its options are read).
        let command = args.first.flatMap { name in commands.contains { $0.name == name } ? name : nil }
        OptionParser.setProgramName(command.map { "lector " + $0 } ?? "lector")
        guard let name = args.first, !name.hasPrefix("-") else { return topLevel(arguments) }
        let rest = ["lector " + name] + args.dropFirst()
        switch name {
        case "worker", "daemon", "voices":
            guard let local else { return DaemonExecutable.become(arguments) }
            return name == "worker" ? local.worker() : name == "daemon" ? local.daemon(rest) : local.voices(rest)
        case "window":
            // Its own help, and one line without a display: nothing is paused or read then.
            if !Self.hasDisplay || args.contains("--help") || args.contains("-h") {
                let parser = OptionParser(parameterString: "[FILE | URI …]",
                                          summary: "Shows the reader window: the text being read, with the sentence and the word heard marked, and the player's controls. FILEs or file:// URIs are read (the first now, the others after it). Needs a display (Wayland or X11).")
                guard parse(parser, rest) != nil else { return 2 }
                printError("the reader window needs a display: neither WAYLAND_DISPLAY nor DISPLAY is set (`lector read --file` and `lector toggle` work without one)")
                return 1
            }
            // The desktop entry runs `lector window %U`: with no lector-window installed it does what `lector
            // open` does, so that a click still reads or pauses.
            guard DaemonExecutable.path("lector-window") != nil else {
                return open(["lector open"] + args.dropFirst(), arguments: arguments, local: local)
            }
            return DaemonExecutable.become(arguments, executable: "lector-window")
        case "read": return read(rest, arguments: arguments, local: local)
        case "pause", "resume", "stop", "toggle": return control(name, rest)
        case "status": return status(rest)
        case "open": return open(rest, arguments: arguments, local: local)
        case "sleep": return sleep(rest)
        case "repeat": return repeatMode(rest)
        case "next", "previous": return move(name, rest)
        case "chapters": return chapters(rest)
        case "chapter": return chapter(rest)
        case "seek": return seek(rest)
        case "rate", "pitch": return prosody(name, rest)
        case "voice": return voice(rest)
        case "position": return position(rest)
        case "speechd": return SpeechdCommand.run(rest)
        case "shortcut": return ShortcutCommand.run(rest)
        case "lexicon": return LexiconCommand.run(rest)
        default:
            printError("unknown command '\(name)'; `lector --help` lists the commands")
            return 2
        }
    }

    private static func topLevel(_ arguments: [String]) -> Int32 {
        let width = commands.map(\.name.count).max() ?? 0
        let list = commands.map { "  " + $0.name + String(repeating: " ", count: width - $0.name.count + 2) + $0.summary }
        let parser = OptionParser(parameterString: "COMMAND [OPTION…]",
                                  summary: "Reads text aloud with eSpeak NG; a media player on the session bus (MPRIS).\n\nCommands:\n" + list.joined(separator: "\n"),
                                  description: "`lector COMMAND --help` describes each command.")
        let version = parser.flag("version", "Print Lector's version and exit")
        do { _ = try parser.parse(arguments) } catch {
            printError(error.description)
            return 2
        }
        if version.value {
            print("lector \(LectorVersion.string)")
            return 0
        }
        fputs(parser.helpText, stdout)
        return arguments.count > 1 ? 0 : 2
    }

    /// Parses with `parser`, printing GLib's message on a usage error.
    static func parse(_ parser: OptionParser, _ args: [String]) -> [String]? {
        do { return try parser.parse(args) } catch {
            printError(error.description)
            return nil
        }
    }

    // MARK: read

    private static func read(_ args: [String], arguments: [String], local: (any LocalCommands)?) -> Int32 {
        let parser = OptionParser(parameterString: "[TEXT… | -]",
                                  summary: "Reads TEXT aloud (or the file given with --file, or standard input). It replaces what is being read, unless --queue.",
                                  description: "Languages are BCP 47 tags (en, en-GB, pt-BR, de); `lector voices` lists them.")
        let lang = parser.string("lang", short: "l", "Language of the text (BCP 47 tag); without it, detected per paragraph", argument: "TAG")
        let voice = parser.string("voice", short: "v", "A voice's name or identifier (lector voices), or a language tag for that language's voice", argument: "NAME")
        let rate = parser.integer("rate", short: "r", "Speaking rate in words per minute (80-450, default 175)", argument: "WPM")
        let pitch = parser.integer("pitch", short: "p", "Base pitch (0-99, default 50)", argument: "0-99")
        let file = parser.string("file", short: "f", "Read the text of FILE (UTF-8; SSML when it ends in .ssml or starts with <?xml…<speak>)", argument: "FILE")
        let ssml = parser.flag("ssml", "The text is an SSML document (<speak>…</speak>)")
        let format = parser.string("format", "The text's or file's format: html, markdown, epub, odt, docx, pdf or text (default: told by its content); with --output, the audio file's: wav, flac, ogg, opus or mp3, or subtitles: srt or vtt (default: from the extension)", argument: "FORMAT")
        let password = parser.string("password", "The password of an encrypted PDF", argument: "PASSWORD")
        let reading = parser.string("reading", "What is read of web addresses, e-mail addresses, citations, long numbers and hashes, runs of symbols and emoji: NAME=VALUE pairs separated by commas (links=host|full|skip, emails|citations|numbers|symbols=read|skip, emoji=once|all|skip; default: the configuration's [reading])", argument: "LIST")
        let queue = parser.flag("queue", short: "q", "Read after what is being read, instead of replacing it")
        let fromStart = parser.flag("from-start", "Read a file read before from its beginning, not from where it was left off")
        let wait = parser.flag("wait", short: "w", "Return when reading ends")
        let output = parser.string("output", short: "o", "Render to an audio file instead of playing (no daemon, no sound server): .wav, .flac, .ogg, .opus or .mp3", argument: "FILE")
        let bitrate = parser.integer("bitrate", "With --output: bit rate of ogg, opus and mp3, in kbit/s (default 48; opus 32)", argument: "KBPS")
        let jobs = parser.integer("jobs", short: "j", "With --output: synthesis workers and encoder threads in parallel (default: one per core)", argument: "N")
        let quiet = parser.flag("quiet", "With --output: no progress bar")
        let force = parser.flag("force", "With --output: replace an existing file")
        let split = parser.string("split", "With --output: \"chapters\" writes one file per chapter and an .m3u playlist", argument: "chapters")
        let selection = parser.flag("selection", short: "s", "Read the selected text (the primary selection)")
        let clipboard = parser.flag("clipboard", short: "c", "Read the text in the clipboard")
        guard let rest = parse(parser, args) else { return 2 }
        var options = SpeakOptions(language: lang.value, voice: voice.value, rate: rate.value, pitch: pitch.value, queue: queue.value)
        if let list = reading.value {
            do { try SpeakOptions.checkReading(list) } catch {
                printError(error.message)
                return 2
            }
            options.reading = list
        }
        if selection.value || clipboard.value {
            guard !(selection.value && clipboard.value) else {
                printError("--selection and --clipboard name two texts: give one of them")
                return 2
            }
            guard output.value == nil else {
                printError("--selection and --clipboard are read aloud, not rendered: give the text or --file with --output")
                return 2
            }
            return readSelection(clipboard.value ? .clipboard : .primary, rest: rest, options: options, wait: wait.value)
        }
        options.fromStart = fromStart.value
        options.password = password.value
        if let output = output.value {
            // Rendering runs in lector-daemon; hand over before standard input is read.
            guard let local else { return DaemonExecutable.become(arguments) }
            // With --output, --format names the audio file's format.
            guard let render = renderOptions(output, format: format.value, bitrate: bitrate.value, jobs: jobs.value,
                                             quiet: quiet.value, force: force.value, split: split.value) else { return 2 }
            return renderToFile(rest, file: file.value, ssml: ssml.value, options: options, render: render, local: local)
        }
        // Without --output, --format names the text's format. The audio formats have names of their own, so one
        // given here is a usage error rather than a text format nobody knows; so are the other rendering options.
        let audioFormats: Set<String> = ["wav", "flac", "ogg", "opus", "mp3"]
        let renderOnly: [(String, Bool)] = [
            ("--format \(format.value ?? "")", format.value.map { audioFormats.contains($0.lowercased()) } ?? false),
            ("--bitrate", bitrate.value != nil), ("--jobs", jobs.value != nil), ("--quiet", quiet.value),
            ("--force", force.value), ("--split", split.value != nil)]
        if let (name, _) = renderOnly.first(where: { $0.1 }) {
            printError("\(name) goes with --output")
            return 2
        }
        if let given = format.value, DocumentFormat(rawValue: given.lowercased()) == nil {
            printError("--format takes " + DocumentFormat.allCases.map(\.rawValue).joined(separator: ", ")
                       + " (with --output: wav, flac, ogg, opus, mp3, srt or vtt), not “\(given)”")
            return 2
        }
        options.format = format.value
        return speakAloud(rest, file: file.value, ssml: ssml.value, options: options, wait: wait.value)
    }

    /// The options of `read --output PATH`; nil after one line for a `--split` other than "chapters".
    private static func renderOptions(_ path: String, format: String?, bitrate: Int?, jobs: Int?, quiet: Bool,
                                      force: Bool, split: String?) -> RenderOptions? {
        var render = RenderOptions(path: path)
        render.format = format
        render.bitrate = bitrate
        render.jobs = jobs
        render.quiet = quiet
        render.force = force
        if let split {
            guard split == "chapters" else {
                printError("--split takes \"chapters\", not “\(split)”")
                return nil
            }
            render.splitChapters = true
        }
        return render
    }

    /// `read --output`: renders the text, or the file opened (not read: it may be a document, which the
    /// document worker reads), to an audio file. Returns the exit status.
    private static func renderToFile(_ rest: [String], file: String?, ssml: Bool, options: SpeakOptions,
                                     render: RenderOptions, local: any LocalCommands) -> Int32 {
        var options = options
        switch Input.source(arguments: rest, file: file) {
        case .failure(let error):
            printError(error.message)
            return error.usage ? 2 : 1
        case .success(.text(let input)):
            options.title = input.title
            options.url = input.url
            options.ssml = ssml || input.ssml
            return local.render(input.text, options: options, render: render)
        case .success(.file(let opened)):
            options.title = opened.title
            options.url = opened.url
            options.ssml = ssml
            return local.render(file: opened, options: options, render: render)
        }
    }

    /// `read` aloud: hands the daemon the text, or the file open (SpeakFile: the bus would carry a file's text
    /// byte by byte). Returns the exit status.
    private static func speakAloud(_ rest: [String], file: String?, ssml: Bool, options: SpeakOptions, wait: Bool) -> Int32 {
        var options = options
        let content: Client.Content
        switch Input.source(arguments: rest, file: file) {
        case .failure(let error):
            printError(error.message)
            return error.usage ? 2 : 1
        case .success(.text(let input)):
            content = .text(input.text)
            options.ssml = ssml || input.ssml
        case .success(.file(let opened)):
            content = .file(opened)
            options.title = opened.title
            options.url = opened.url
            options.ssml = ssml || opened.isSSML
        }
        let client: Client
        do { client = try Client.connect() } catch {
            printError(error.description)
            return 1
        }
        return client.speak(content, options: options, wait: wait)
    }

    /// `read --selection` / `--clipboard`: the selection's text, read like typed text (no file, no SSML).
    private static func readSelection(_ which: Selection, rest: [String], options: SpeakOptions, wait: Bool) -> Int32 {
        guard rest.isEmpty else {
            printError("--\(which.rawValue) reads the \(which.rawValue): give no text with it")
            return 2
        }
        switch which.read() {
        case .failure(let error):
            printError(error.message)
            return 1
        case .success(let text):
            let client: Client
            do { client = try Client.connect() } catch {
                printError(error.description)
                return 1
            }
            // The same text again (one key pressed twice): pause or resume it instead of starting over.
            if !options.queue, let state = client.sameTextState(text), state == "reading" || state == "paused" {
                return client.call(.toggle)
            }
            return client.speak(.text(text), options: options, wait: wait)
        }
    }

    // MARK: control

    private static func control(_ name: String, _ args: [String]) -> Int32 {
        let summaries = ["pause": "Pauses reading: the sound stops at once and nothing is lost.",
                         "resume": "Resumes reading at the exact point where it paused.",
                         "stop": "Stops reading and discards what was queued. `lector toggle` reads the text again.",
                         "toggle": "Pauses when reading, resumes when paused, reads the last text again when stopped."]
        let parser = OptionParser(parameterString: "", summary: summaries[name])
        guard let rest = parse(parser, args) else { return 2 }
        guard rest.isEmpty else { printError("\(name) takes no arguments"); return 2 }
        let client: Client
        // resume starts a daemon only to go on with a reading saved by one that ended (StateKeeper).
        let start = name == "toggle" || (name == "resume" && SavedReading.exists)
        do { client = try Client.connect(startingDaemon: start) } catch {
            if case .notRunning = error { return 0 } // nothing reads: nothing to pause or stop
            printError(error.description)
            return 1
        }
        let method: Lector1.Method = switch name {
        case "pause": .pause
        case "resume": .resume
        case "stop": .stop
        default: .toggle
        }
        return client.call(method)
    }

    // MARK: MPRIS controls

    private static func move(_ name: String, _ args: [String]) -> Int32 {
        let parser = OptionParser(parameterString: "", summary: name == "next"
            ? "Skips to the next sentence (chapter, paragraph); paused stays paused."
            : "Goes back to the previous sentence (chapter, paragraph; the one being read starts again when past its start); paused stays paused.")
        let chapter = parser.flag("chapter", "By chapter")
        let paragraph = parser.flag("paragraph", "By paragraph")
        guard let rest = parse(parser, args) else { return 2 }
        guard rest.isEmpty else { printError("\(name) takes no arguments"); return 2 }
        guard !(chapter.value && paragraph.value) else { printError("give --chapter or --paragraph, not both"); return 2 }
        guard let client = running() else { return 0 }
        guard chapter.value || paragraph.value else { return client.player(name == "next" ? .next : .previous) }
        return client.move(chapter.value ? "chapter" : "paragraph", by: name == "next" ? 1 : -1)
    }

    /// Splits off a signed number (`-5`, `+2.5`) that GOptionContext would take for an option.
    private static func number(in args: [String]) -> (value: Double?, rest: [String]) {
        var rest = [args[0]]
        var value: Double?
        for a in args.dropFirst() {
            if value == nil, let v = Double(a), v.isFinite { value = v } else { rest.append(a) }
        }
        return (value, rest)
    }

    /// Seconds as µs, clamped to what an `x` can hold (`lector seek 1e300` is past the end, not a crash).
    static func microseconds(_ seconds: Double) -> Int64 {
        let value = seconds * 1_000_000
        guard value.isFinite else { return value > 0 ? .max : .min }
        return value >= 9.2e18 ? .max : value <= -9.2e18 ? .min : Int64(value)
    }

    private static func seek(_ args: [String]) -> Int32 {
        let parser = OptionParser(parameterString: "±SECONDS", summary: "Jumps forward (+) or back (-) by SECONDS of speech, e.g. `lector seek -5`. Before the start means the start; past the end means the next sentence.")
        let (value, rest) = number(in: args)
        guard let leftover = parse(parser, rest) else { return 2 }
        guard let seconds = value, leftover.isEmpty else { printError("seek takes one number of seconds, e.g. `lector seek -5`"); return 2 }
        guard let client = running() else { return 0 }
        return client.player(.seek, [.int64(microseconds(seconds))])
    }

    private static func prosody(_ name: String, _ args: [String]) -> Int32 {
        let rate = name == "rate"
        let parser = OptionParser(parameterString: rate ? "WPM" : "PITCH", summary: rate
            ? "Sets the speaking rate of the text being read (and of the texts queued after it) to WPM words per minute, 80-450 (175 is normal). The change is heard from the next word; the sentence does not start again."
            : "Sets the base pitch of the text being read (and of the texts queued after it), 0-99 (50 is normal). The change is heard from the next word; the sentence does not start again.")
        guard let rest = parse(parser, args) else { return 2 }
        guard rest.count == 1, let value = Int(rest[0]) else {
            printError(rate ? "rate takes one number of words per minute, e.g. `lector rate 220`" : "pitch takes one number from 0 to 99, e.g. `lector pitch 60`")
            return 2
        }
        do { try rate ? SpeakOptions.checkRate(value) : SpeakOptions.checkPitch(value) } catch {
            printError(error.description)
            return 2
        }
        guard let client = running() else { return 0 }
        return client.call(rate ? .setRate : .setPitch, [.int32(Int32(value))])
    }

    private static func voice(_ args: [String]) -> Int32 {
        let parser = OptionParser(parameterString: "NAME|TAG", summary: "Reads the rest of the text being read with another voice: an eSpeak NG voice name or identifier, or a BCP 47 language tag (`lector voices` lists them). The change is heard from the next word; queued texts keep their voices.")
        guard let rest = parse(parser, args) else { return 2 }
        guard rest.count == 1, !rest[0].isEmpty else { printError("voice takes one voice name or language tag, e.g. `lector voice de`"); return 2 }
        guard let client = running() else { return 0 }
        return client.call(.setVoice, [.string(rest[0])])
    }

    private static func position(_ args: [String]) -> Int32 {
        let parser = OptionParser(parameterString: "[SECONDS]", summary: "Prints the position heard, in seconds; with SECONDS, jumps there.")
        let (value, rest) = number(in: args)
        guard let leftover = parse(parser, rest) else { return 2 }
        guard leftover.isEmpty else { printError("position takes at most one number of seconds"); return 2 }
        guard let client = running() else {
            if value == nil { print(seconds(0)) }
            return 0
        }
        if let value {
            guard value >= 0 else { printError("position must be 0 or more seconds"); return 2 }
            return client.setPosition(microseconds(value))
        }
        return client.printPosition()
    }

    /// A client when the daemon runs; nil (and nothing printed) when it does not; exits on other errors.
    private static func running() -> Client? {
        do { return try Client.connect(startingDaemon: false) } catch {
            if case .notRunning = error { return nil }
            printError(error.description)
            exit(1)
        }
    }

    // MARK: status

    private static func status(_ args: [String]) -> Int32 {
        let parser = OptionParser(parameterString: "", summary: "Shows the state (reading, paused, stopped), the text's language and voice, the position and length in seconds, and the sentence being read.")
        let follow = parser.flag("follow", short: "F", "Keep showing the state, a progress bar and the sentence being read, live")
        guard let rest = parse(parser, args) else { return 2 }
        guard rest.isEmpty else { printError("status takes no arguments"); return 2 }
        let client: Client
        do { client = try Client.connect(startingDaemon: false) } catch {
            if case .notRunning = error { print("state: not running"); return 3 }
            printError(error.description)
            return 1
        }
        return follow.value ? StatusView(client: client).run() : client.printStatus()
    }

    // MARK: repeat

    private static func repeatMode(_ args: [String]) -> Int32 {
        let parser = OptionParser(parameterString: "[sentence | all | off]",
                                  summary: "What is read again when it ends: `sentence` repeats the sentence being read, `all` the whole text and the texts queued after it, `off` nothing (MPRIS LoopStatus Track, Playlist, None). Without an argument, shows it.")
        guard let rest = parse(parser, args) else { return 2 }
        guard rest.count <= 1 else { printError("repeat takes one argument: sentence, all or off"); return 2 }
        var status: MPRIS.LoopStatus?
        if let word = rest.first {
            switch word.lowercased() {
            case "sentence", "track", "one": status = .track
            case "all", "playlist", "text": status = .playlist
            case "off", "none", "no": status = MPRIS.LoopStatus.none
            default:
                printError("'\(word)' is not a repeat mode; try sentence, all or off")
                return 2
            }
        }
        let client: Client
        do { client = try Client.connect(startingDaemon: status != nil && status != MPRIS.LoopStatus.none) } catch {
            if case .notRunning = error { print("repeat: off"); return 0 }
            printError(error.description)
            return 1
        }
        if let status {
            let result = client.setLoopStatus(status)
            guard result == 0 else { return result }
        }
        guard let mode = client.repeatMode() else { printError("unexpected reply from the daemon"); return 1 }
        print("repeat: \(mode)")
        return 0
    }

    // MARK: sleep

    private static func sleep(_ args: [String]) -> Int32 {
        let parser = OptionParser(parameterString: "[DURATION | paragraph | off]",
                                  summary: "The sleep timer: reading fades out over 5 s and pauses after DURATION (20m, 90s, 1h30m; a bare number is minutes) or at the end of the paragraph being read; `off` cancels it. Without an argument, shows it.")
        guard let rest = parse(parser, args) else { return 2 }
        guard rest.count <= 1 else { printError("sleep takes one argument: DURATION, paragraph or off"); return 2 }
        var call: (method: Lector1.Method, arguments: [Variant])?
        if let word = rest.first {
            switch word.lowercased() {
            case "off", "cancel": call = (.cancelSleep, [])
            case "paragraph", "para", "p": call = (.sleepAtParagraphEnd, [])
            default:
                guard let microseconds = SleepDuration.parse(word) else {
                    printError("'\(word)' is not a duration; try 20m, 90s, 1h30m, paragraph or off")
                    return 2
                }
                call = (.sleepAfter, [.int64(microseconds)])
            }
        }
        guard let client = running() else {
            guard let call, call.method != .cancelSleep else {
                print("sleep: off")
                return 0
            }
            printError("nothing is being read")
            return 1
        }
        if let call {
            let status = client.call(call.method, call.arguments)
            guard status == 0 else { return status }
        }
        return client.printSleepTimer()
    }
}
