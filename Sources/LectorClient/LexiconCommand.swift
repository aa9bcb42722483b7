@preconcurrency import Glibc
import GLibKit
import LectorCommon
import SpeechCore

/// `lector lexicon add WORD --say RESPELLING | --phonemes PHONEMES`, `remove WORD`, `list`, `import FILE.pls`:
/// edits the pronunciation lexicon (`LexiconStore`, `$XDG_CONFIG_HOME/lector/lexicon`). The daemon watches the
/// file, so a change is heard from the next word or sentence of what is being read; no daemon is needed.
enum LexiconCommand {
    static let usage = "usage: lector lexicon add WORD (--say RESPELLING | --phonemes PHONEMES) [--regex] [--lang TAG] | remove WORD [--lang TAG] | list | import FILE.pls"

    static func run(_ args: [String]) -> Int32 {
        let parser = OptionParser(parameterString: "add WORD | remove WORD | list | import FILE.pls",
                                  summary: "Says words as you want: names, brands, abbreviations. Each entry is a word (whole words; in small letters it matches any case) or with --regex a regular expression, said as a respelling (--say, every voice) or as eSpeak NG phonemes (--phonemes, as between [[ ]]; Piper voices use --say).",
                                  description: "The lexicon is \(LexiconStore.defaultPath); the reading daemon uses a change from the next word or sentence.")
        let say = parser.string("say", "How it is said, spelled as the language spells it", argument: "RESPELLING")
        let phonemes = parser.string("phonemes", "eSpeak NG phoneme mnemonics, e.g. l'EktO@", argument: "PHONEMES")
        let language = parser.string("lang", "Only for this language (a BCP 47 tag, e.g. en or de-AT)", argument: "TAG")
        let regex = parser.flag("regex", "WORD is a regular expression")
        guard let rest = Command.parse(parser, args) else { return 2 }
        let words = rest
        switch (words.first, words.count) {
        case ("add", 2):
            let entry = LexiconEntry(match: words[1], isPattern: regex.value, say: say.value, phonemes: phonemes.value,
                                     language: language.value)
            return edit { lexicon in
                switch LexiconFile.validated(entry) {
                case .success(let e): lexicon.add(e); return nil
                case .failure(let error): return error.message
                }
            }
        case ("remove", 2):
            return edit { lexicon in
                lexicon.remove(words[1], language: language.value) > 0 ? nil : "no entry for '\(words[1])' in the lexicon"
            }
        case ("list", 1):
            let (lexicon, problems) = LexiconStore.load()
            for problem in problems { printError("warning: " + problem) }
            for e in lexicon.entries { print(LexiconFile.line(e)) }
            return 0
        case ("import", 2): return importPLS(words[1])
        default:
            printError(usage)
            return 2
        }
    }

    /// Loads the lexicon, changes it with `change` (which returns nil, or why it cannot), and saves it.
    static func edit(_ change: (inout Lexicon) -> String?) -> Int32 {
        var (lexicon, problems) = LexiconStore.load()
        for problem in problems { printError("warning: " + problem) }
        if let why = change(&lexicon) {
            printError(why)
            return 1
        }
        do { try LexiconStore.save(lexicon) } catch {
            printError(error.message)
            return 1
        }
        return 0
    }

    /// The largest PLS document imported: 16 MiB.
    static let maximumPLSBytes = 16 << 20

    static func importPLS(_ path: String) -> Int32 {
        let result: PLSImport.Result
        do {
            let bytes = try readRegularFile(path, maximumBytes: maximumPLSBytes, followLinks: true)
            guard let text = String(validating: bytes, as: UTF8.self) else {
                printError("\(path) is not UTF-8 text")
                return 1
            }
            result = try PLSImport.entries(text)
        } catch let error as LexiconError {
            printError("\(path): \(error.message)")
            return 1
        } catch {
            printError("cannot read \(path): \(error)")
            return 1
        }
        var added = 0, refused = 0
        let status = edit { lexicon in
            for e in result.entries {
                if case .success(let ok) = LexiconFile.validated(e) { lexicon.add(ok); added += 1 } else { refused += 1 }
            }
            return nil
        }
        guard status == 0 else { return status }
        var line = "imported \(added) entries from \(path)"
        if result.skipped + refused > 0 {
            line += "; \(result.skipped + refused) lexemes left out (phonemes in IPA or X-SAMPA only, which are not converted, or unusable)"
        }
        print(line)
        return 0
    }
}
