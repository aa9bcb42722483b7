#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Testing
@testable import LanguageDetection

/// The sample texts, read from Fixtures/ beside this file (copies of the samples the project is tried on).
enum Fixtures {
    static let directory: String = {
        let file = "\(#filePath)"
        return String(file[..<file.lastIndex(of: "/")!]) + "/Fixtures"
    }()

    static func text(_ name: String) -> String {
        guard let f = fopen(directory + "/" + name, "rb") else { return "" }
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
}

@Suite struct LanguageDetectorTests {
    let detector = LanguageDetector()

    @Test("each sample is detected in its language, reliably", arguments: [
        ("en.txt", "en"), ("de.txt", "de"), ("fr.txt", "fr"), ("es.txt", "es"), ("ru.txt", "ru"), ("zh.txt", "zh"),
    ])
    func samples(file: String, language: String) throws {
        let text = Fixtures.text(file)
        try #require(!text.isEmpty, "missing fixture \(file)")
        let detected = try #require(detector.detect(text))
        #expect(detected.tag == language)
        #expect(detected.isReliable)
        #expect(detected.percent >= 90)
        #expect(detected.letterBytes >= detector.minimumLetterBytes)
    }

    @Test("each sample as a whole is one run in its language", arguments: [
        ("en.txt", "en"), ("de.txt", "de"), ("fr.txt", "fr"), ("es.txt", "es"), ("ru.txt", "ru"), ("zh.txt", "zh"),
    ])
    func sampleRuns(file: String, language: String) {
        let text = Fixtures.text(file)
        let runs = detector.runs(in: text)
        #expect(runs.map(\.language) == [language])
        let count = text.unicodeScalars.count
        #expect(runs.first?.range.lowerBound == 0)
        // Trailing white space (the file's last newline) is not part of the run.
        #expect(runs.first.map { $0.range.upperBound <= count && $0.range.upperBound >= count - 2 } == true)
    }

    @Test("nothing to detect: empty text, digits and punctuation")
    func nothing() {
        #expect(detector.detect("") == nil)
        #expect(detector.detect("1234 5678 -- !!") == nil)
        #expect(detector.runs(in: " \n\n \t\n").isEmpty)
    }

    @Test("odd input never crashes: noncharacters, private use, emoji, combining marks, one 200k-letter word")
    func oddInput() {
        let nonCharacters = String(String.UnicodeScalarView([0xFFFE, 0xFFFF, 0xFDD0, 0x1FFFF].compactMap(Unicode.Scalar.init)))
        let odd = [nonCharacters + " Das ist ein Satz.", "\u{E000}\u{F8FF}", "😀😀 🎉", "a\u{0301}\u{0308}\u{20DD}",
                   "\u{FFFD}\u{FFFD} text", String(repeating: "a", count: 200_000), "\u{202E}abc\u{202C} שלום עולם"]
        for text in odd {
            _ = detector.detect(text)
            _ = detector.runs(in: text + "\n\n" + text)
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            var scalars = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 1...300, using: &generator) {
                let value = UInt32.random(in: 1...0x10FFFF, using: &generator)
                if let scalar = Unicode.Scalar(value) { scalars.append(scalar) }
            }
            _ = detector.runs(in: String(scalars))
        }
    }

    @Test("a short text is not reliable enough")
    func short() {
        let runs = detector.runs(in: "Ja.")
        #expect(runs.map(\.language) == [nil])
    }

    @Test("three paragraphs in three languages: three runs with their ranges")
    func threeLanguages() {
        let en = "The train to the coast was late again this morning, and nobody on the platform seemed surprised by it."
        let de = "Der Zug nach Hamburg hatte an diesem Morgen zwanzig Minuten Verspätung, und niemand wunderte sich darüber."
        let fr = "Après la réunion, nous irons dîner ensemble dans le petit restaurant au coin de la rue, comme toujours."
        let text = en + "\n\n" + de + "\n  \n" + fr + "\n"
        let runs = detector.runs(in: text)
        #expect(runs.map(\.language) == ["en", "de", "fr"])
        let scalars = Array(text.unicodeScalars)
        let pieces = runs.map { String(String.UnicodeScalarView(scalars[$0.range])) }
        #expect(pieces == [en, de, fr])
    }

    @Test("read a few paragraphs at a time, the runs are those of the whole text", arguments: [1, 7, 64, 500, 4096])
    func readInSteps(length: Int) {
        let text = "Kapitel 1\r\n\r\n" + Fixtures.text("de.txt") + "\n \n\tOK\n\n" + Fixtures.text("fr.txt")
            + "\n\n\n" + Fixtures.text("en.txt") + "\u{2029}" + Fixtures.text("ru.txt") + "\n\n12\n\n"
            + Fixtures.text("zh.txt") + "\n\n" + Fixtures.text("en.txt") + "   \n\n  "
            // Longer than a piece: lines with single line breaks, then one 9,000-letter word.
            + Array(repeating: Fixtures.text("fr.txt"), count: 30).joined(separator: "\n") + "\n\n"
            + String(repeating: "ä", count: 9000) + "\n\n" + Fixtures.text("es.txt")
        let whole = detector.runs(in: text)
        #expect(whole.map(\.language) == ["de", "fr", "en", "ru", "zh", "en", "fr", "es"])
        let reader = LanguageRunReader(text: text, detector: detector)
        var runs: [LanguageRun] = []
        var steps = 0
        while !reader.isDone {
            let more = reader.next(approximately: length)
            #expect(!more.isEmpty || reader.isDone)
            if steps == 0 { #expect(more.first?.language == "de", "the title takes the language that follows") }
            LanguageRunReader.append(more, to: &runs)
            steps += 1
        }
        #expect(runs == whole)
        #expect(reader.next(approximately: length).isEmpty)
        if length < 500 { #expect(steps > 6, "\(steps) steps") }
    }

    @Test("a step detects no more than it was asked for: the paragraph, or the piece, that reaches the length")
    func stepsStopEarly() {
        let en = Fixtures.text("en.txt"), de = Fixtures.text("de.txt")
        let paragraphs = en + "\n\n" + de + "\n\n" + en
        var reader = LanguageRunReader(text: paragraphs, detector: detector)
        let first = reader.next(approximately: 10)
        #expect(first.map(\.language) == ["en"] && (first.last?.range.upperBound ?? .max) <= en.unicodeScalars.count,
                "only the first paragraph: \(first)")
        // One paragraph of lines longer than a piece: only its first piece.
        let lines = Array(repeating: en, count: 2 * Paragraphs.maximumLength / en.unicodeScalars.count + 2)
            .joined(separator: "\n")
        reader = LanguageRunReader(text: lines, detector: detector)
        let piece = reader.next(approximately: 10)
        #expect(piece.count == 1 && piece[0].range.upperBound <= Paragraphs.maximumLength, "\(piece)")
        #expect(!reader.isDone)
    }

    @Test("a paragraph longer than the maximum is cut at its last line break, else white space, else the limit")
    func longParagraphs() {
        func pieces(_ text: String) -> [String] {
            let scalars = Array(text.unicodeScalars)
            return Paragraphs.ranges(in: scalars, maximumLength: 12).map { String(String.UnicodeScalarView(scalars[$0])) }
        }
        #expect(pieces("one two\nthree four five six\nseven") == ["one two", "three four", "five six", "seven"])
        #expect(pieces("aaaa bbbb cccc dddd") == ["aaaa bbbb", "cccc dddd"])
        #expect(pieces("abcdefghijklmnopqrstuvwxyz") == ["abcdefghijkl", "mnopqrstuvwx", "yz"])
        #expect(pieces("one\u{2028}two  three\n\nfour") == ["one", "two  three", "four"])
        #expect(pieces("twelve chars") == ["twelve chars"])
        for piece in Paragraphs.ranges(in: Array(String(repeating: "Ein Satz. ", count: 2000).unicodeScalars)) {
            #expect(piece.count <= Paragraphs.maximumLength)
        }
    }

    @Test("adjacent paragraphs of one language merge into one run")
    func merging() {
        let text = Fixtures.text("de.txt") + "\n\n" + Fixtures.text("fr.txt") + "\n\n" + Fixtures.text("es.txt")
        let runs = detector.runs(in: text)
        #expect(runs.map(\.language) == ["de", "fr", "es"])
        // de.txt has two paragraphs: the first run spans both.
        #expect(Paragraphs.ranges(in: Fixtures.text("de.txt")).count == 2)
        #expect(runs.first?.range == 0..<Fixtures.text("de.txt").unicodeScalars.count - 1)
    }

    @Test("CLD2's deprecated and pseudo codes")
    func codes() {
        #expect(LanguageDetector.tag(forCLD2Code: "iw") == "he")
        #expect(LanguageDetector.tag(forCLD2Code: "no") == "nb")
        #expect(LanguageDetector.tag(forCLD2Code: "un") == nil)
        #expect(LanguageDetector.tag(forCLD2Code: "xx-Qaai") == nil)
        #expect(LanguageDetector.tag(forCLD2Code: "zh-Hant") == "zh-Hant")
    }
}

@Suite struct ParagraphTests {
    @Test("paragraphs are separated by blank lines; single line breaks do not separate")
    func splitting() {
        #expect(Paragraphs.ranges(in: "") == [])
        #expect(Paragraphs.ranges(in: "one") == [0..<3])
        #expect(Paragraphs.ranges(in: "  one\ntwo  ") == [2..<9])
        #expect(Paragraphs.ranges(in: "one\n\ntwo") == [0..<3, 5..<8])
        #expect(Paragraphs.ranges(in: "one\n \t \ntwo\n\n\n\nthree\n") == [0..<3, 8..<11, 15..<20])
        #expect(Paragraphs.ranges(in: "one\r\n\r\ntwo") == [0..<3, 7..<10])
        #expect(Paragraphs.ranges(in: "one\r\rtwo") == [0..<3, 5..<8])
        #expect(Paragraphs.ranges(in: "one\u{2029}two") == [0..<3, 4..<7])
        #expect(Paragraphs.ranges(in: "é\n\nü") == [0..<1, 3..<4])
    }

    static func d(_ tag: String, reliable: Bool = true, bytes: Int = 100) -> DetectedLanguage {
        DetectedLanguage(tag: tag, isReliable: reliable, letterBytes: bytes)
    }

    static func runs(_ detected: [DetectedLanguage?]) -> [LanguageRun] {
        let paragraphs = detected.enumerated().map { (range: $0.offset * 10..<$0.offset * 10 + 8, detected: $0.element) }
        return LanguageDetector.runs(paragraphs, minimumLetterBytes: 24)
    }

    @Test("merging: same languages join, ranges span the paragraphs between")
    func merge() {
        #expect(Self.runs([Self.d("en"), Self.d("en"), Self.d("de"), Self.d("en")]) == [
            LanguageRun(range: 0..<18, language: "en"), LanguageRun(range: 20..<28, language: "de"),
            LanguageRun(range: 30..<38, language: "en"),
        ])
    }

    @Test("short paragraphs inherit the previous language; leading ones the first that follows")
    func inherit() {
        #expect(Self.runs([Self.d("de"), Self.d("en", bytes: 5), Self.d("fr")]).map(\.language) == ["de", "fr"])
        #expect(Self.runs([Self.d("en", bytes: 5), nil, Self.d("ru"), Self.d("de")]).map(\.language) == ["ru", "de"])
        #expect(Self.runs([Self.d("en", bytes: 5), Self.d("ru")]).first?.range == 0..<18)
        #expect(Self.runs([nil, Self.d("en", bytes: 3)]).map(\.language) == [nil])
    }

    @Test("unreliable long paragraphs are unsure (nil), and short ones after them stay unsure")
    func unreliable() {
        #expect(Self.runs([Self.d("de"), Self.d("en", reliable: false), Self.d("de", bytes: 4)]).map(\.language) == ["de", nil])
        #expect(Self.runs([Self.d("en", bytes: 4), Self.d("fr", reliable: false), Self.d("fr")]).map(\.language) == [nil, "fr"])
    }
}
