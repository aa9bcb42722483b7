#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import SpeechCore
import Testing
import LectorCommon
@testable import LectorDaemon

/// How the preparer chooses languages and voices: per paragraph when none is given, else what is given.
@Suite struct UtterancePreparerTests {
    static let english = "The train to the coast was late again this morning. Nobody on the platform seemed surprised by it."
    static let german = "Der Zug nach Hamburg hatte an diesem Morgen zwanzig Minuten Verspätung. Niemand wunderte sich darüber."
    static let french = "Après la réunion, nous irons dîner ensemble dans le petit restaurant au coin de la rue, comme toujours."
    static let three = [english, german, french].joined(separator: "\n\n")

    static func sample(_ name: String) -> String {
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        while let last = parts.popLast(), last != "Tests" {}
        let path = parts.joined(separator: "/") + "/Tests/LanguageDetectionTests/Fixtures/" + name
        guard let f = fopen(path, "rb") else { return "" }
        defer { fclose(f) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = fread(&buffer, 1, buffer.count, f)
            if n <= 0 { break }
            bytes += buffer[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The language of each sentence.
    static func languages(_ u: Utterance) -> [String] {
        u.sentences.indices.map { u.voice(ofSentence: $0).language }
    }

    @Test("no language given: each paragraph is read in its detected language, with ranges into the text")
    func perParagraph() throws {
        let preparer = UtterancePreparer(voices: testVoices)
        let u = try preparer.prepare(Self.three, options: SpeakOptions())
        #expect(Self.languages(u) == ["en", "en", "de", "de", "fr"])
        #expect(u.voices.map(\.language) == ["en", "de", "fr"])
        #expect(Set(u.voices.map(\.engineVoice)).count == 3)
        #expect(u.language == "en")
        let scalars = Array(u.text.unicodeScalars)
        for s in u.sentences {
            #expect(String(String.UnicodeScalarView(scalars[s.range])) == s.text)
        }
    }

    @Test("each sample file is read in its own language", arguments: [
        ("en.txt", "en"), ("de.txt", "de"), ("fr.txt", "fr"), ("es.txt", "es"), ("ru.txt", "ru"), ("zh.txt", "zh"),
    ])
    func samples(file: String, language: String) throws {
        let text = Self.sample(file)
        try #require(!text.isEmpty)
        let u = try UtterancePreparer(voices: testVoices).prepare(text, options: SpeakOptions())
        #expect(u.voices.count == 1)
        #expect(u.language == language)
        if language == "zh" { #expect(u.engineVoice == "sit/cmn", "Mandarin, not \(u.voiceName)") }
    }

    @Test("a --lang given wins over detection; so does a --voice")
    func givenWins() throws {
        let preparer = UtterancePreparer(voices: testVoices)
        let lang = try preparer.prepare(Self.three, options: SpeakOptions(language: "de"))
        #expect(lang.voices.count == 1 && Set(Self.languages(lang)) == ["de"])
        let voice = try preparer.prepare(Self.three, options: SpeakOptions(voice: "French (France)"))
        #expect(voice.voices.count == 1 && voice.voiceName == "French (France)")
    }

    @Test("unsure detection takes the configured default language; [voices] applies to detected languages")
    func unsureTakesTheDefault() throws {
        let dir = String(cString: mkdtemp(strdup("/tmp/lector-config-XXXXXX")))
        let path = dir + "/config"
        let f = fopen(path, "w")
        fputs("[speech]\nlanguage=es\n[voices]\nen=English (America)\n", f)
        fclose(f)
        defer { unlink(path); rmdir(dir) }
        let preparer = UtterancePreparer(voices: testVoices)
        #expect(preparer.loadConfiguration(path: path).isEmpty)
        #expect(try preparer.prepare("Ok.", options: SpeakOptions()).language == "es")
        let u = try preparer.prepare(Self.english + "\n\n" + Self.german, options: SpeakOptions())
        #expect(u.voices.map(\.name) == ["English (America)", "German"])
    }

    @Test("white space only is still an empty text")
    func empty() {
        #expect(throws: PrepareError.self) { try UtterancePreparer(voices: testVoices).prepare(" \n\n\t", options: SpeakOptions()) }
    }
}
