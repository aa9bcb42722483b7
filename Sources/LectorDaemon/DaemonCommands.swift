@preconcurrency import Glibc
import GLibKit
import LectorCommon
import SpeechCore
import Synthesis
import SystemKit

/// The commands that need eSpeak NG, PulseAudio or the rest of the reading machinery, run in the
/// `lector-daemon` executable; `lector` (the command line, see `LectorClient.Command`) hands them over to it.
public struct DaemonCommands: LocalCommands {
    /// The commands of this process.
    public init() {}

    /// `lector daemon [--instance] [--no-duck] [--duck-level DB] [--pause-others]`: runs the daemon in the
    /// foreground until SIGTERM/SIGINT. Exit status 0, 1 when the bus or the name cannot be had, 2 on a usage error.
    public func daemon(_ arguments: [String]) -> Int32 {
        let parser = OptionParser(parameterString: "", summary: "Runs Lector's daemon in the foreground: the one reader of this session, on the session bus as org.lector.Lector and org.mpris.MediaPlayer2.lector.")
        let instance = parser.flag("instance", "A separate player: owns org.mpris.MediaPlayer2.lector.instance<PID> only")
        let noDuck = parser.flag("no-duck", "Leave other audio alone while reading")
        let duckLevel = parser.double("duck-level", "Lower other streams on the same sink by DB decibels while reading (default 15)", argument: "DB")
        let idleExit = parser.double("idle-exit", "Exit after SECONDS stopped, with the state saved (default: the config file's [daemon] idle-exit, else 600; 0 never)", argument: "SECONDS")
        let pauseOthers = parser.flag("pause-others", "Instead of lowering other audio, pause the other media players while reading and resume them afterwards")
        let rest: [String]
        do { rest = try parser.parse(arguments) } catch {
            printError(error.description)
            return 2
        }
        guard rest.isEmpty else { printError("daemon takes no arguments"); return 2 }
        // GLib names the journal entries (SYSLOG_IDENTIFIER) after the program name: "lector", not the
        // "lector daemon" of the help text (g_set_prgname may be called again since GLib 2.72).
        OptionParser.setProgramName("lector")
        var ducking: DuckingMode?   // nil: the config file's, else the standard -15 dB
        if let level = duckLevel.value {
            guard level.isFinite, abs(level) <= 60 else { printError("--duck-level takes a level from -60 to 0 dB"); return 2 }
            ducking = .lower(decibels: -abs(level))
        }
        if pauseOthers.value { ducking = .pauseOtherPlayers }
        if noDuck.value { ducking = .off }
        if let seconds = idleExit.value, !(seconds.isFinite && seconds >= 0 && seconds <= 86_400) {
            printError("--idle-exit takes a number of seconds from 0 to 86400")
            return 2
        }
        return Daemon(instance: instance.value, ducking: ducking, idleExitSeconds: idleExit.value).run()
    }

    /// `lector worker`: eSpeak NG synthesis for the daemon, over standard input and output (`Worker`).
    public func worker() -> Int32 {
        Worker.run(input: .standardInput, output: .standardOutput)
    }

    /// `lector voices [--lang TAG]`: the voices, one a line: BCP 47 tag, name, identifier, gender, engine
    /// (`espeak-ng` or `piper`), tab-separated; eSpeak NG's first, then the Piper voices found (`Piper.voices`).
    /// `lector voices add FILE.onnx`: installs a Piper voice (`addPiperVoice`). Exit status 1 when TAG matches
    /// no voice or the voice cannot be added, 2 on a usage error.
    public func voices(_ arguments: [String]) -> Int32 {
        if arguments.count > 1 && arguments[1] == "add" { return addPiperVoice(Array(arguments.dropFirst(2))) }
        let parser = OptionParser(parameterString: "[add FILE.onnx]", summary: "Lists the voices, one a line: BCP 47 tag, name, identifier, gender, engine (tab-separated). `lector voices add FILE.onnx` installs a Piper voice and its FILE.onnx.json.")
        let lang = parser.string("lang", short: "l", "Only the voices for this language (BCP 47 tag; with a region, that region's)", argument: "TAG")
        let rest: [String]
        do { rest = try parser.parse(arguments) } catch {
            printError(error.description)
            return 2
        }
        guard rest.isEmpty else { printError("voices takes no arguments but `add FILE.onnx`"); return 2 }
        let voices = VoiceCatalog.load() + Piper.voices()
        var selected = voices
        if let tag = lang.value {
            let matcher = LanguageMatcher(voices: voices)
            do {
                let match = try matcher.match(tag)
                // A tag with a region (en-GB) lists the voices of that region and those of the language that
                // name none; a language alone (en) lists all of its voices.
                let wanted = match.tag.lowercased()
                let primary = wanted.split(separator: "-").first.map(String.init) ?? ""
                selected = voices.filter { v in
                    if v == match.voice { return true }
                    let same = v.languages.map { $0.lowercased() }.filter { $0.split(separator: "-").first.map(String.init) == primary }
                    guard !same.isEmpty else { return false }
                    let regional = same.filter { $0.contains("-") }
                    return wanted == primary || regional.isEmpty || regional.contains { $0 == wanted || $0.hasPrefix(wanted + "-") }
                }
            } catch {
                printError(error.description)
                return 1
            }
        }
        for v in selected {
            // Each field one safe field (names from files are cleaned already; identifiers are file paths too).
            print([v.languages.first ?? "", v.name, v.identifier, v.gender.dbusName, v.engine.rawValue]
                .map(TextCleaner.field).joined(separator: "\t"))
        }
        return 0
    }

    /// `lector voices add FILE.onnx`: copies a Piper model and its `FILE.onnx.json` into Lector's own voices
    /// (`$XDG_DATA_HOME/lector/voices`), after checking that the name is a Piper voice's
    /// (`LANGUAGE_REGION-NAME-QUALITY.onnx`) and that the configuration is there. Prints the voice's identifier.
    private func addPiperVoice(_ arguments: [String]) -> Int32 {
        guard arguments.count == 1, let path = arguments.first, !path.hasPrefix("-") else {
            printError("usage: lector voices add FILE.onnx")
            return 2
        }
        guard let voice = Voice.piper(model: path) else {
            printError("\(path): not a Piper voice (expected a model named like en_US-joe-medium.onnx)")
            return 1
        }
        let file = String(path.split(separator: "/").last ?? "")
        let target = Piper.ownVoices + "/" + file
        do {
            guard fileTest(path, .isRegular) else { printError("\(path): no such file"); return 1 }
            guard fileTest(path + ".json", .isRegular) else {
                printError("\(path): its configuration \(file).json is missing beside it; Piper needs both")
                return 1
            }
            let model = try readFile(path)
            let config = try readFile(path + ".json")
            guard !model.isEmpty, config.first == UInt8(ascii: "{") else {
                printError("\(path): an empty model or a configuration that is not JSON")
                return 1
            }
            do throws(Errno) { try makeDirectories(Piper.ownVoices) } catch {
                printError("\(Piper.ownVoices): \(error)")
                return 1
            }
            try writeFileAtomically(target + ".json", contents: config, mode: 0o644)
            try writeFileAtomically(target, contents: model, mode: 0o644)
        } catch {
            printError(error.message)
            return 1
        }
        print(voice.identifier)
        return 0
    }

    /// `lector read --output FILE`: prepares `text` as the daemon would (configuration included) and
    /// renders it with workers to an audio file (`OfflineRenderer`). Exit status 1 on failure, with one line,
    /// 130 when interrupted.
    public func render(_ text: String, options: SpeakOptions, render: RenderOptions) -> Int32 {
        let preparer = UtterancePreparer()
        for problem in preparer.loadConfiguration() { printError("warning: " + problem) }
        do {
            let utterance = try preparer.prepare(text, options: options)
            return OfflineRenderer(utterance: utterance, options: render, workerArgv: [executablePath(), "worker"]).run()
        } catch {
            printError(error.message)
        }
        return 1
    }
}
