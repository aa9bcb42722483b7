import GLibKit
import LectorCommon
import LanguageDetection
import Segmentation
import SpeechCore
import Synthesis

/// Why a text cannot be read, with the D-Bus error name it travels as.
struct PrepareError: Error, CustomStringConvertible {
    var name: String
    var message: String
    var description: String { message }

    static func emptyText() -> PrepareError {
        PrepareError(name: "org.lector.Lector1.Error.EmptyText", message: "nothing to read: the text is empty or only white space and control characters")
    }
    static func malformedSSML(_ error: MarkupError) -> PrepareError {
        PrepareError(name: "org.lector.Lector1.Error.MalformedSSML", message: "malformed SSML: \(error)")
    }
    static func invalid(_ message: String) -> PrepareError {
        PrepareError(name: "org.freedesktop.DBus.Error.InvalidArgs", message: message)
    }
}

/// Turns text and options into an `Utterance`: cleans the text, detects the language of each paragraph when
/// none is given, matches languages to eSpeak NG voices, cuts the text into sentences. Shared by the daemon and the offline renderer so that both read alike.
final class UtterancePreparer {
    /// eSpeak NG's limits (speak_lib.h: espeakRATE_MINIMUM 80, espeakRATE_MAXIMUM 450, pitch 0-100).
    static let rates = SpeakOptions.rates
    static let defaultRate = SpeakOptions.defaultRate
    static let pitches = SpeakOptions.pitches
    static let defaultPitch = SpeakOptions.defaultPitch

    let voices: [Voice]
    let matcher: LanguageMatcher
    private let segmenter = Segmenter()
    private let detector = LanguageDetector()
    private var nextID: UInt64 = 1

    /// The user's settings (default language, voice per language, rate, pitch); see `Configuration`.
    private(set) var configuration = Configuration()

    /// A preparer for `voices` (by default the installed ones: `VoiceCatalog.load()`).
    init(voices: [Voice] = VoiceCatalog.load()) {
        self.voices = voices
        matcher = LanguageMatcher(voices: voices)
    }

    /// Reads the configuration file at `path` (by default `$XDG_CONFIG_HOME/lector/config`) and uses it from
    /// now on. Returns one line per problem found in it (each was ignored).
    func loadConfiguration(path: String = Configuration.defaultPath) -> [String] {
        let (config, problems) = Configuration.load(path: path, matcher: matcher)
        configuration = config
        defaultLanguageCache = nil
        return problems
    }

    private var defaultLanguageCache: LanguageMatch??

    /// The language to use when a request names none and detection is unsure: the configured one, else the
    /// locale's (LC_ALL, LC_MESSAGES, LANG), else English.
    var defaultLanguage: LanguageMatch? {
        if let cached = defaultLanguageCache { return cached }
        let found = findDefaultLanguage()
        defaultLanguageCache = .some(found)
        return found
    }

    private func findDefaultLanguage() -> LanguageMatch? {
        if let tag = configuration.language, let m = try? matcher.match(tag) { return m }
        for name in ["LC_ALL", "LC_MESSAGES", "LANG"] {
            guard let value = environment(name), !value.isEmpty else { continue }
            let tag = String(value.prefix { $0 != "." && $0 != "@" })
            if tag == "C" || tag == "POSIX" { break }
            if let m = try? matcher.match(tag) { return m }
            break
        }
        return try? matcher.match("en")
    }

    /// The voice for `match` (found for the tag `requested`): the configured one for the requested tag or the
    /// matched one (`[voices]`), else the matcher's.
    private func voice(for match: LanguageMatch, requested: String?) -> Voice {
        let configured = requested.flatMap { configuration.voice(for: $0) } ?? configuration.voice(for: match.tag)
        return configured.flatMap { matcher.voice(named: $0) } ?? match.voice
    }

    /// Makes the utterance for `text` (already decoded; it is cleaned here).
    /// - Throws: `PrepareError` for empty text, an unknown language or voice, or a rate/pitch out of range.
    func prepare(_ text: String, options: SpeakOptions) throws(PrepareError) -> Utterance {
        let rate = options.rate ?? configuration.rate ?? Self.defaultRate
        guard Self.rates.contains(rate) else {
            throw .invalid("rate \(rate) is out of range: eSpeak NG speaks \(Self.rates.lowerBound)–\(Self.rates.upperBound) words per minute")
        }
        let pitch = options.pitch ?? configuration.pitch ?? Self.defaultPitch
        guard Self.pitches.contains(pitch) else { throw .invalid("pitch \(pitch) is out of range 0–99") }
        var document: SSMLDocument?
        if options.ssml {
            do { document = try SSMLDocument.parse(TextCleaner.clean(text)) } catch { throw .malformedSSML(error) }
        }
        let requestedLanguage = options.language ?? document?.language

        var cleaned = TextCleaner.clean(text)
        var sentences: [Sentence] = []
        var voices: [UtteranceVoice] = []
        if document == nil && options.voice == nil && options.language == nil {
            // No language given: each paragraph in its own (detected) language.
            guard let fallback = defaultLanguage else {
                throw PrepareError(name: "org.lector.Lector1.Error.UnknownLanguage", message: "no eSpeak NG voice is installed")
            }
            let scalars = Array(cleaned.unicodeScalars)
            for run in detector.runs(in: cleaned) {
                let m = run.language.flatMap { try? matcher.match($0) } ?? fallback
                let v = voice(for: m, requested: run.language)
                let chosen = UtteranceVoice(language: m.tag, name: v.name, engineVoice: v.identifier)
                let index = voices.firstIndex(of: chosen) ?? voices.count
                if index == voices.count { voices.append(chosen) }
                let piece = String(String.UnicodeScalarView(scalars[run.range]))
                for var s in segmenter.sentences(of: piece, language: m.tag) {
                    s.range = s.range.lowerBound + run.range.lowerBound..<s.range.upperBound + run.range.lowerBound
                    s.voice = index
                    sentences.append(s)
                }
            }
        } else {
            var language: String
            var voice: Voice
            if let name = options.voice {
                guard let v = matcher.voice(named: name) else {
                    throw PrepareError(name: "org.lector.Lector1.Error.UnknownVoice", message: "unknown voice '\(name)'; `lector voices` lists them")
                }
                voice = v
                language = v.languages.first ?? "und"
                if let tag = requestedLanguage {
                    language = try match(tag).tag
                }
            } else {
                let m: LanguageMatch
                if let tag = requestedLanguage { m = try match(tag) } else {
                    guard let d = defaultLanguage else {
                        throw PrepareError(name: "org.lector.Lector1.Error.UnknownLanguage", message: "no eSpeak NG voice is installed")
                    }
                    m = d
                }
                language = m.tag
                voice = self.voice(for: m, requested: requestedLanguage)
            }
            voices = [UtteranceVoice(language: language, name: voice.name, engineVoice: voice.identifier)]
            // SSML: one sentence per top-level <p>/<s> (see SSMLDocument); no detection, xml:lang says it.
            if let document { (cleaned, sentences) = document.sentences } else {
                sentences = segmenter.sentences(of: cleaned, language: language)
            }
        }
        guard !sentences.isEmpty else { throw .emptyText() }
        // The first voice is the first sentence's (Utterance.language and voiceName report it).
        if sentences[0].voice != 0 {
            let first = sentences[0].voice
            voices.swapAt(0, first)
            for i in sentences.indices where sentences[i].voice == 0 || sentences[i].voice == first {
                sentences[i].voice = sentences[i].voice == 0 ? first : 0
            }
        }
        let id = nextID
        nextID += 1
        return Utterance(id: id, text: cleaned, sentences: sentences, voices: voices,
                         rate: rate, pitch: pitch,
                         title: options.title ?? TextCleaner.title(of: cleaned), url: options.url)
    }

    private func match(_ tag: String) throws(PrepareError) -> LanguageMatch {
        do { return try matcher.match(tag) } catch {
            throw PrepareError(name: "org.lector.Lector1.Error.UnknownLanguage", message: error.description)
        }
    }
}
