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
        // A tag as the voice, as `lector voice` takes it: that language's voice.
        let tagged = try preparer.prepare(Self.three, options: SpeakOptions(voice: "de"))
        #expect(tagged.voices.count == 1 && tagged.language == "de", "\(tagged.voices)")
        #expect(throws: PrepareError.self) { try preparer.prepare(Self.three, options: SpeakOptions(voice: "Nobody at all")) }
        // A misspelt name is not taken for the language its first letters are the code of.
        #expect(preparer.voiceTag("no-such-voice") == nil && preparer.voiceTag("de-such") == nil)
        #expect(preparer.voiceTag("de_DE")?.tag.hasPrefix("de") == true)
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

/// A long text is prepared a slice at a time (`prepareStart`, then `SentenceCutter.next`): the sentences are
/// the same as when it is prepared whole.
@Suite struct LazyPreparationTests {
    /// `paragraphs` paragraphs of a few sentences each, some in German, with one very long line among them.
    static func longText(paragraphs: Int) -> String {
        var parts: [String] = []
        for i in 0..<paragraphs {
            switch i % 7 {
            case 3: parts.append(UtterancePreparerTests.german + " " + UtterancePreparerTests.german)
            case 5: parts.append(Array(repeating: "Line \(i) goes on and on, e.g. past the window. Still line \(i).", count: 120).joined(separator: " "))
            default: parts.append("Paragraph \(i) begins here. " + UtterancePreparerTests.english + " It ends, Mr. Smith said.")
            }
        }
        return parts.joined(separator: "\n\n")
    }

    /// Prepares `text` lazily with slices of `slice` scalars and returns the utterance with every sentence.
    static func lazily(_ text: String, options: SpeakOptions, first: Int, slice: Int) throws -> (Utterance, Int) {
        let preparer = UtterancePreparer(voices: testVoices)
        var (u, rest) = try preparer.prepareStart(text, options: options, firstSlice: first)
        var slices = 1
        if let rest {
            #expect(u.pendingText > 0 && u.pendingText == rest.pendingText)
            var pending = u.pendingText
            while !rest.isDone {
                u.sentences += rest.next(approximately: slice)
                u.voices += rest.takeNewVoices()
                #expect(rest.pendingText < pending || rest.isDone)
                pending = rest.pendingText
                slices += 1
            }
        } else {
            #expect(u.pendingText == 0)
        }
        u.pendingText = 0
        return (u, slices)
    }

    @Test("with a language: the same sentences as prepared whole, in many slices", arguments: [(700, 1500), (4096, 8192), (50, 300)])
    func sameSentences(first: Int, slice: Int) throws {
        let text = Self.longText(paragraphs: 40)
        var options = SpeakOptions()
        options.language = "en"
        let whole = try UtterancePreparer(voices: testVoices).prepare(text, options: options)
        let (lazy, slices) = try Self.lazily(text, options: options, first: first, slice: slice)
        #expect(slices > 3)
        #expect(lazy.sentences == whole.sentences)
        #expect(lazy.text == whole.text && lazy.voices == whole.voices)
    }

    @Test("no language given: the same sentences and voices per paragraph as prepared whole")
    func sameVoices() throws {
        // Starts in German, so the first voice is swapped with English's in every slice too.
        let text = UtterancePreparerTests.german + "\n\n" + Self.longText(paragraphs: 30)
        let whole = try UtterancePreparer(voices: testVoices).prepare(text, options: SpeakOptions())
        let (lazy, slices) = try Self.lazily(text, options: SpeakOptions(), first: 100, slice: 2000)
        #expect(slices > 3)
        #expect(lazy.voices == whole.voices && whole.voices.count > 1)
        #expect(lazy.sentences == whole.sentences)
    }

    @Test("no language given: a long text is detected as it is cut, not whole before it is read")
    func detectedAsCut() throws {
        // Languages that only come late in the text: French after ~60 K scalars, Russian at the very end.
        let text = Self.longText(paragraphs: 60) + "\n\n" + UtterancePreparerTests.french + "\n\n"
            + Self.longText(paragraphs: 20) + "\n\n" + UtterancePreparerTests.sample("ru.txt")
        let whole = try UtterancePreparer(voices: testVoices).prepare(text, options: SpeakOptions())
        #expect(whole.voices.map(\.language) == ["en", "de", "fr", "ru"])
        let (start, _) = try UtterancePreparer(voices: testVoices).prepareStart(text, options: SpeakOptions(), firstSlice: 4096)
        #expect(start.voices.map(\.language) == ["en", "de"], "the start knows only the languages detected so far")
        let (lazy, slices) = try Self.lazily(text, options: SpeakOptions(), first: 4096, slice: 2048)
        #expect(slices > 10)
        #expect(lazy.voices == whole.voices)
        #expect(lazy.sentences == whole.sentences)
        #expect(UtterancePreparerTests.languages(lazy).suffix(3) == ["ru", "ru", "ru"])
    }

    @Test("a short text is prepared whole at once; an unreadable start does not end the text")
    func shortAndUnreadable() throws {
        let preparer = UtterancePreparer(voices: testVoices)
        var options = SpeakOptions()
        options.language = "en"
        let (short, rest) = try preparer.prepareStart(UtterancePreparerTests.english, options: options, firstSlice: 4096)
        #expect(rest == nil && short.isComplete && short.sentences.count == 2)
        // Zero-width spaces (format characters) and line breaks: nothing to read in the first slices.
        let blank = String(repeating: "\u{200B} \u{200B}\n", count: 2000)
        let text = blank + UtterancePreparerTests.english
        let (u, _) = try preparer.prepareStart(text, options: options, firstSlice: 100)
        #expect(u.sentences.count == 2 && u.sentences[0].text.hasPrefix("The train"))
        #expect(throws: PrepareError.self) {
            _ = try preparer.prepareStart(blank, options: options, firstSlice: 100)
        }
    }
}
