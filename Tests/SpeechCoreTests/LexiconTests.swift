import Testing
@testable import SpeechCore

/// The pronunciation lexicon: its file, whole-word and case rules, patterns, what each engine is given, and the
/// reading core asking with it (word events mapped back to the written words, changes heard from the next word).
@Suite struct LexiconTests {
    static func said(_ lexicon: Lexicon, _ text: String, language: String = "en-US", phonemes: Bool = true) -> String {
        lexicon.spoken(of: text, language: language, phonemeInput: phonemes)?.text ?? text
    }

    @Test func wholeWordsOnlyAndSmallLettersMatchAnyCase() {
        let lexicon = Lexicon([LexiconEntry(match: "nginx", say: "engine x")])
        #expect(Self.said(lexicon, "Nginx and NGINX serve nginx.") == "engine x and engine x serve engine x.")
        #expect(Self.said(lexicon, "nginxes and libnginx stay.") == "nginxes and libnginx stay.")
    }

    @Test func aCapitalMakesTheCaseExact() {
        let lexicon = Lexicon([LexiconEntry(match: "US", say: "U S")])
        #expect(Self.said(lexicon, "The US told us.") == "The U S told us.")
    }

    @Test func phonemesForESpeakNGAndTheRespellingForPiper() {
        let lexicon = Lexicon([LexiconEntry(match: "Lector", say: "Lecktor", phonemes: "l'EktO@")])
        #expect(Self.said(lexicon, "Lector reads.") == "[[l'EktO@]] reads.")
        #expect(Self.said(lexicon, "Lector reads.", phonemes: false) == "Lecktor reads.")
        // Phonemes alone: a Piper voice says the word as written.
        let only = Lexicon([LexiconEntry(match: "Lector", phonemes: "l'EktO@")])
        #expect(only.spoken(of: "Lector reads.", language: "en", phonemeInput: false) == nil)
    }

    @Test func languagesAndTheLongestMatchFirst() {
        let lexicon = Lexicon([LexiconEntry(match: "New", say: "Noo"),
                               LexiconEntry(match: "New York", say: "Noo Yawk", language: "en"),
                               LexiconEntry(match: "Chef", say: "Scheff", language: "de")])
        #expect(Self.said(lexicon, "New York. New. Chef.", language: "en-GB") == "Noo Yawk. Noo. Chef.")
        #expect(Self.said(lexicon, "New York. Chef.", language: "de-AT") == "Noo York. Scheff.")
    }

    @Test func patterns() {
        let lexicon = Lexicon([LexiconEntry(match: #"\bv\d+(\.\d+)*\b"#, isPattern: true, say: "the version")])
        #expect(Self.said(lexicon, "Get v1.2.3 now.") == "Get the version now.")
        #expect(Lexicon.patternError("(") != nil)
        #expect(Lexicon.patternError(#"\bfoo\b"#) == nil)
    }

    @Test func offsetsMapBackToTheWrittenWords() throws {
        let lexicon = Lexicon([LexiconEntry(match: "GNU", say: "guh new")])
        let spoken = try #require(lexicon.spoken(of: "GNU is free.", language: "en", phonemeInput: true))
        #expect(spoken.text == "guh new is free.")
        #expect(spoken.writtenRange(0..<3) == 0..<3)   // "guh": the written "GNU"
        #expect(spoken.writtenRange(4..<7) == 0..<3)   // "new": the same
        #expect(spoken.writtenRange(8..<10) == 4..<6)  // "is"
    }

    @Test func theFileReadsBackWhatItWrites() {
        let text = """
            # a comment
            Lector\tsay=Lecktor\tphonemes=l'EktO@
            \\bv\\d+\\b\tregex\tsay=version\tlang=en

            nginx\tsay=engine x
            nginx\tsay=engine ex
            broken
            x\tcolour=red
            (\tregex\tsay=paren
            """
        let (lexicon, problems) = LexiconFile.parse(text)
        #expect(lexicon.entries.map(\.match) == ["Lector", #"\bv\d+\b"#, "nginx"])
        #expect(lexicon.entries[2].say == "engine ex")  // the later line replaces the earlier
        #expect(lexicon.entries[1].isPattern && lexicon.entries[1].language == "en")
        #expect(problems.count == 3 && problems[0].hasPrefix("lexicon line 7:"), "\(problems)")
        #expect(LexiconFile.parse(LexiconFile.encode(lexicon)).0 == lexicon)
    }

    @Test func addAndRemove() {
        var lexicon = Lexicon()
        lexicon.add(LexiconEntry(match: "a", say: "x"))
        lexicon.add(LexiconEntry(match: "a", say: "y", language: "de"))
        #expect(lexicon.entries.count == 2)
        #expect(lexicon.remove("a", language: "de") == 1)
        #expect(lexicon.remove("a") == 1 && lexicon.isEmpty)
    }

    @Test func theReadingCoreAsksWithTheLexiconAndMapsWordsBack() {
        var t = ReadingTimeline(sampleRate: ReadingTimelineTests.rate)
        _ = t.changeLexicon(Lexicon([LexiconEntry(match: "five", say: "fife and more")]), reading: nil, played: 0, writable: 0)
        let u = ReadingTimelineTests.utterance()
        let requests = ReadingTimelineTests.requests(t.start(u, at: 0, corked: false))
        #expect(requests.map(\.text) == ["One two three.", "Four fife and more."])
        _ = ReadingTimelineTests.answer(&t, requests[0])
        _ = ReadingTimelineTests.answer(&t, requests[1])
        var heard: [HeardEvent] = []
        while let (event, _) = t.nextHeard(played: .max) { heard.append(event) }
        // "fife", "and", "more." are all the written "five" (20..<24 in the utterance; "five." with its stop).
        let words = heard.compactMap { if case .word(let r) = $0 { r } else { nil } }
        #expect(words.suffix(4) == [15..<19, 20..<24, 20..<24, 20..<25], "\(words)")
    }

    @Test func aChangedLexiconIsAskedAgainFromTheNextWord() {
        var t = ReadingTimeline(sampleRate: ReadingTimelineTests.rate)
        let u = ReadingTimelineTests.utterance()
        let first = ReadingTimelineTests.requests(t.start(u, at: 0, corked: false))
        _ = ReadingTimelineTests.answer(&t, first[0])
        let actions = t.changeLexicon(Lexicon([LexiconEntry(match: "seven", say: "sev'n")]), reading: u, played: 0, writable: 0)
        #expect(actions.contains { if case .cancel(let tags) = $0 { tags.contains(first[1].tag) } else { false } }, "\(actions)")
        // What is asked from there on is asked under the new lexicon.
        var pending = ReadingTimelineTests.requests(actions)
        var asked: [String] = []
        while !pending.isEmpty {
            let request = pending.removeFirst()
            asked.append(request.text)
            pending += ReadingTimelineTests.requests(ReadingTimelineTests.answer(&t, request, played: .max, writable: 1_000_000))
        }
        #expect(asked.last == "Six sev'n eight nine.", "\(asked)")
        // The same lexicon again changes nothing.
        #expect(t.changeLexicon(Lexicon([LexiconEntry(match: "seven", say: "sev'n")]), reading: u, played: 0, writable: 0) == [])
    }
}
