import GLibKit
import Segmentation
import SpeechCore
import Synthesis

/// How a client asks for a text to be read: the options of `lector read` and of the D-Bus `Speak` call.
struct SpeakOptions: Equatable {
    /// BCP 47 tag; nil: the voice's language, else the daemon's locale, else English.
    var language: String?
    /// eSpeak NG voice name or identifier.
    var voice: String?
    /// Words per minute (80...450).
    var rate: Int?
    /// 0...99.
    var pitch: Int?
    /// Append instead of replacing.
    var queue = false
    var title: String?
    var url: String?
    /// The text is an SSML document (application/ssml+xml), read in eSpeak NG's SSML mode.
    var ssml = false
}

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

/// Turns text and options into an `Utterance`: cleans the text, matches the language to an eSpeak NG voice,
/// cuts it into sentences. Shared by the daemon and the offline renderer so that both read alike.
final class UtterancePreparer {
    /// eSpeak NG's limits (speak_lib.h: espeakRATE_MINIMUM 80, espeakRATE_MAXIMUM 450, pitch 0-100).
    static let rates = 80...450
    static let defaultRate = 175
    static let pitches = 0...99
    static let defaultPitch = 50

    let voices: [Voice]
    let matcher: LanguageMatcher
    private let segmenter = Segmenter()
    private var nextID: UInt64 = 1

    init() {
        voices = VoiceCatalog.load()
        matcher = LanguageMatcher(voices: voices)
    }

    /// The language to use when a request names none: the locale's (LC_ALL, LC_MESSAGES, LANG), else English.
    lazy var defaultLanguage: LanguageMatch? = {
        for name in ["LC_ALL", "LC_MESSAGES", "LANG"] {
            guard let value = environment(name), !value.isEmpty else { continue }
            let tag = String(value.prefix { $0 != "." && $0 != "@" })
            if tag == "C" || tag == "POSIX" { break }
            if let m = try? matcher.match(tag) { return m }
            break
        }
        return try? matcher.match("en")
    }()

    /// Makes the utterance for `text` (already decoded; it is cleaned here).
    /// - Throws: `PrepareError` for empty text, an unknown language or voice, or a rate/pitch out of range.
    func prepare(_ text: String, options: SpeakOptions) throws(PrepareError) -> Utterance {
        let rate = options.rate ?? Self.defaultRate
        guard Self.rates.contains(rate) else {
            throw .invalid("rate \(rate) is out of range: eSpeak NG speaks \(Self.rates.lowerBound)–\(Self.rates.upperBound) words per minute")
        }
        let pitch = options.pitch ?? Self.defaultPitch
        guard Self.pitches.contains(pitch) else { throw .invalid("pitch \(pitch) is out of range 0–99") }
        var document: SSMLDocument?
        if options.ssml {
            do { document = try SSMLDocument.parse(TextCleaner.clean(text)) } catch { throw .malformedSSML(error) }
        }
        let requestedLanguage = options.language ?? document?.language

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
                guard let d = defaultLanguage else { throw PrepareError(name: "org.lector.Lector1.Error.UnknownLanguage", message: "no eSpeak NG voice is installed") }
                m = d
            }
            language = m.tag
            voice = m.voice
        }

        let cleaned: String
        let sentences: [Sentence]
        if let document { (cleaned, sentences) = document.sentences } else {
            cleaned = TextCleaner.clean(text)
            sentences = segmenter.sentences(of: cleaned, language: language)
        }
        guard !sentences.isEmpty else { throw .emptyText() }
        let id = nextID
        nextID += 1
        return Utterance(id: id, text: cleaned, sentences: sentences, language: language, voiceName: voice.name,
                         engineVoice: voice.identifier,
                         rate: rate, pitch: pitch,
                         title: options.title ?? TextCleaner.title(of: cleaned), url: options.url)
    }

    private func match(_ tag: String) throws(PrepareError) -> LanguageMatch {
        do { return try matcher.match(tag) } catch {
            throw PrepareError(name: "org.lector.Lector1.Error.UnknownLanguage", message: error.description)
        }
    }
}
