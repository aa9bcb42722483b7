import CESpeakNG
import SpeechCore

/// An installed voice: an eSpeak NG voice, or a Piper neural voice (a model file and its configuration).
///
/// Source: eSpeak NG's `espeak_VOICE` (speak_lib.h) as listed by `espeak_ListVoices`; for Piper, the model's
/// file name (`en_US-joe-medium.onnx`: language, dataset, quality).
public struct Voice: Equatable, Sendable {
    /// The engine that speaks a voice.
    public enum Engine: String, Equatable, Sendable {
        /// eSpeak NG, in Lector's own worker (`lector worker`).
        case espeakNG = "espeak-ng"
        /// Piper (VITS models run with ONNX Runtime), in the Piper worker (`lector-piper-worker`).
        case piper
    }

    /// A voice's gender as eSpeak NG declares it (`espeak_VOICE.gender`: 0 none, 1 male, 2 female).
    public enum Gender: String, Equatable, Sendable {
        /// eSpeak NG gender 1.
        case male
        /// eSpeak NG gender 2.
        case female
        /// eSpeak NG gender 0 (not specified).
        case unknown
    }

    /// The voice's name, e.g. `"English (America)"`; `espeak_SetVoiceByName` accepts it.
    public var name: String
    /// The voice file within `espeak-ng-data/voices`, e.g. `"gmw/en-US"`. Unique; `espeak_SetVoiceByName`
    /// accepts it, so it is what to pass to ``WorkerRequest/configure(voice:rate:pitch:)`` to get exactly
    /// this voice.
    public var identifier: String
    /// The languages the voice speaks as BCP 47 tags in eSpeak NG's order (the voice's own language first),
    /// e.g. `["en-US", "en"]`: eSpeak NG's subtags, cased the BCP 47 way (RFC 5646 section 2.1.1).
    public var languages: [String]
    /// eSpeak NG's priority for each entry of ``languages`` (same count; lower is preferred when several
    /// voices speak a language, e.g. `"en"` is 2 for English (Great Britain), 3 for English (America)).
    public var languagePriorities: [Int]
    /// The voice's own eSpeak NG language name, e.g. `"en-us"`. `espeak_SetVoiceByName` accepts it, but it
    /// may select another voice with the same language (two voices speak `"yue"`): prefer ``identifier``.
    public var espeakLanguage: String
    /// The voice's gender.
    public var gender: Gender
    /// The engine that speaks it.
    public var engine: Engine = .espeakNG
    /// For a Piper voice, the absolute path of its `.onnx` model (its `.onnx.json` beside it); nil for eSpeak NG.
    public var model: String?

    /// Creates a voice description; `languagePriorities` defaults to 5 (eSpeak NG's usual) for every language.
    public init(
        name: String, identifier: String, languages: [String], languagePriorities: [Int]? = nil,
        espeakLanguage: String, gender: Gender
    ) {
        self.name = name
        self.identifier = identifier
        self.languages = languages
        self.languagePriorities = languagePriorities ?? Array(repeating: 5, count: languages.count)
        self.espeakLanguage = espeakLanguage
        self.gender = gender
    }

    /// The Piper voice of the model at `path`, named like Piper's published voices,
    /// `LANGUAGE_REGION-DATASET-QUALITY.onnx` (`en_US-joe-medium.onnx`); nil for another name.
    ///
    /// Its ``identifier`` is `piper:` and the file's base name (`piper:en_US-joe-medium`), its ``name`` the base
    /// name, its language the BCP 47 form of the first part (`en_US` → `en-US`, RFC 5646 section 2.1.1). A file
    /// name may hold anything but `/` and NUL: the name is made one safe field (`TextCleaner.field`: no control
    /// character, terminal escape, tab or line break reaches `lector voices`, `lector status` or D-Bus), while
    /// ``model`` keeps the path as it is, to open.
    public static func piper(model path: String) -> Voice? {
        guard path.hasSuffix(".onnx") else { return nil }
        let file = path.split(separator: "/").last.map(String.init) ?? path
        let base = TextCleaner.field(String(file.dropLast(5)))
        let parts = base.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count >= 2, parts.allSatisfy({ !$0.isEmpty }),
              let language = LanguageTag.canonical(String(parts[0])) else { return nil }
        var voice = Voice(name: base, identifier: "piper:" + base, languages: [language], espeakLanguage: language,
                          gender: .unknown)
        voice.engine = .piper
        voice.model = path
        return voice
    }
}

/// The voices installed for eSpeak NG.
public enum VoiceCatalog {
    /// All installed voices except mbrola voices (whose diphone data is not installed), in eSpeak NG's order
    /// (sorted by language).
    ///
    /// Uses `espeak_ng_InitializePath(NULL)` and `espeak_ListVoices(NULL)` (speak_lib.h): reads the voice
    /// files only, without `espeak_Initialize` or any synthesis state, so it is safe in the daemon.
    /// Takes about 6–11 ms for the 131 voices of eSpeak NG 1.51. Empty if no data is installed, or if
    /// libespeak-ng.so.1 cannot be loaded (it is opened here on first use; see `lector_espeak`).
    public static func load() -> [Voice] {
        guard let espeak = lector_espeak()?.pointee else { return [] }  // it said why
        espeak.InitializePath(nil)
        guard let list = espeak.ListVoices(nil) else { return [] }
        var voices: [Voice] = []
        var index = 0
        while let entry = list[index] {
            index += 1
            let v = entry.pointee
            guard let namePointer = v.name, let identifierPointer = v.identifier else { continue }
            let identifier = String(cString: identifierPointer)
            if identifier.hasPrefix("mb/") { continue }
            let languages = parseLanguages(v.languages)
            guard let first = languages.first else { continue }
            let gender: Voice.Gender = v.gender == 1 ? .male : v.gender == 2 ? .female : .unknown
            voices.append(Voice(
                name: TextCleaner.field(String(cString: namePointer)),
                identifier: identifier,
                languages: languages.map { LanguageTag.canonical($0.name) ?? $0.name },
                languagePriorities: languages.map(\.priority),
                espeakLanguage: first.name,
                gender: gender))
        }
        return voices
    }

    /// Parses `espeak_VOICE.languages`: pairs of (priority byte, NUL-terminated name), ended by a 0 byte.
    private static func parseLanguages(_ pointer: UnsafePointer<CChar>?) -> [(priority: Int, name: String)] {
        guard let pointer else { return [] }
        var result: [(priority: Int, name: String)] = []
        var p = UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self)
        while p.pointee != 0 {
            let priority = Int(p.pointee)
            var end = p + 1
            while end.pointee != 0 { end += 1 }
            result.append((priority, String(cString: p + 1)))
            p = end + 1
        }
        return result
    }
}
