import LectorCommon
import SpeechCore
import Testing
@testable import LectorDaemon

/// The order in which a sentence's voice is chosen: the request's language or voice, then the language its
/// source marks (a document's `lang`), then detection; and how a mark inside a sentence cuts it.
@Suite struct MarkedLanguageTests {
    static let english = "The train to the coast was late again this morning. Nobody on the platform seemed surprised by it."
    static let german = "Der Zug nach Hamburg hatte an diesem Morgen zwanzig Minuten Verspätung. Niemand wunderte sich darüber."

    /// Each sentence as "language: text".
    static func read(_ u: Utterance) -> [String] {
        u.sentences.indices.map { u.voice(ofSentence: $0).language + ": " + u.sentences[$0].text }
    }

    static func structure(_ spans: [LanguageSpan], language: String? = nil) -> TextStructure {
        var s = TextStructure(language: language)
        s.languages = spans
        return s
    }

    @Test func theDocumentsLanguageIsTheDefaultWhereDetectionIsUnsure() throws {
        let preparer = UtterancePreparer(voices: testVoices)
        let short = try preparer.prepare("Ok.", options: SpeakOptions(), declared: Self.structure([], language: "de"))
        #expect(Self.read(short) == ["de: Ok."])
        // Detection is sure: the document's declared language does not override it.
        let sure = try preparer.prepare(Self.english, options: SpeakOptions(), declared: Self.structure([], language: "de"))
        #expect(Self.read(sure).map { String($0.prefix(3)) } == ["en:", "en:"])
    }

    /// `parts` joined, with a span over each part that has a language.
    static func marked(_ parts: [(String?, String)], separator: String = "\n\n") -> (String, [LanguageSpan]) {
        var text = "", spans: [LanguageSpan] = []
        for (language, part) in parts {
            if !text.isEmpty { text += separator }
            let start = text.unicodeScalars.count
            text += part
            if let language { spans.append(LanguageSpan(range: start..<text.unicodeScalars.count, language: language)) }
        }
        return (text, spans)
    }

    @Test func aMarkBeatsDetection() throws {
        // English text marked German is read in German; unmarked German text is detected.
        let (text, spans) = Self.marked([("de", Self.english), (nil, Self.german)])
        let u = try UtterancePreparer(voices: testVoices).prepare(text, options: SpeakOptions(), declared: Self.structure(spans))
        #expect(Self.read(u).map { $0.prefix(3) } == ["de:", "de:", "de:", "de:"])
        #expect(u.voices.count == 1)
    }

    @Test func theRequestsLanguageOrVoiceBeatsTheMarks() throws {
        let (text, spans) = Self.marked([("de", Self.german), ("fr", "Bonjour à tous.")])
        let preparer = UtterancePreparer(voices: testVoices)
        var options = SpeakOptions()
        options.language = "en"
        #expect(Set(try preparer.prepare(text, options: options, declared: Self.structure(spans)).voices.map(\.language)) == ["en"])
        options = SpeakOptions()
        options.voice = "roa/es"
        #expect(try preparer.prepare(text, options: options, declared: Self.structure(spans)).voices.map(\.engineVoice) == ["roa/es"])
    }

    @Test func aMarkInsideASentenceIsReadAsAPieceOfItsOwn() throws {
        let (text, spans) = Self.marked([("en", "He said"), ("fr", "je ne sais quoi"), ("en", "and left.")], separator: " ")
        let u = try UtterancePreparer(voices: testVoices).prepare(text, options: SpeakOptions(), declared: Self.structure(spans))
        #expect(Self.read(u) == ["en: He said", "fr: je ne sais quoi", "en: and left."])
        #expect(u.text == text)
    }

    @Test func aMarkReadByTheSameVoiceAsItsSentenceDoesNotCutIt() throws {
        // The matcher reads `en` with English (Great Britain), as it reads `en-GB`.
        let (text, spans) = Self.marked([(nil, "The colour of the sea was grey"), ("en-GB", "that morning,"), (nil, "and nobody minded it.")],
                                        separator: " ")
        let u = try UtterancePreparer(voices: testVoices).prepare(text, options: SpeakOptions(), declared: Self.structure(spans))
        #expect(Self.read(u) == ["en: " + text])
    }

    @Test func aLanguageNoVoiceSpeaksIsLeftToDetection() throws {
        let (text, spans) = Self.marked([("tlh", Self.german), ("en", Self.english)])
        let u = try UtterancePreparer(voices: testVoices).prepare(text, options: SpeakOptions(), declared: Self.structure(spans))
        #expect(Self.read(u).map { String($0.prefix(2)) } == ["de", "de", "en", "en"])
    }

    @Test func marksWorkWhenTheTextIsPreparedASliceAtATime() throws {
        // A long text cut in idle steps: the marks far into it still choose the voice.
        let paragraphs = (0..<60).map { i in (i % 3 == 2 ? "de" : nil as String?, i % 3 == 2 ? Self.english : Self.english) }
        let (text, spans) = Self.marked(paragraphs)
        let preparer = UtterancePreparer(voices: testVoices)
        let (start, rest) = try preparer.prepareStart(text, options: SpeakOptions(), firstSlice: 300, declared: Self.structure(spans))
        var u = start
        let cutter = try #require(rest)
        while !cutter.isDone { u.sentences += cutter.next(approximately: 300) }
        u.voices += cutter.takeNewVoices()
        let languages = u.sentences.indices.map { u.voice(ofSentence: $0).language }
        #expect(languages.count == 120)
        #expect(languages.enumerated().allSatisfy { i, l in l == ((i / 2) % 3 == 2 ? "de" : "en") })
    }
}
