import LectorWindow
import Testing

@Suite struct ReadingModelTests {
    @Test func highlightsFollowSentenceAndWordEvents() {
        var m = ReadingModel()
        _ = m.showText(7)
        _ = m.loadedUpTo(100)
        let s = m.sentenceHeard(7, 10..<40)
        #expect(s.highlight == .init(sentence: 10..<40, word: nil))
        #expect(s.scrollTo == 10)
        let w = m.wordHeard(7, 15..<20)
        #expect(w.highlight == .init(sentence: 10..<40, word: 15..<20))
        #expect(m.wordHeard(8, 30..<33) == .init(), "another utterance's events are not this text's")
        #expect(m.ended(7).highlight == .init())
    }

    @Test func aHighlightWaitsForItsTextToBeShown() {
        var m = ReadingModel()
        _ = m.showText(1)
        _ = m.loadedUpTo(50)
        let early = m.wordHeard(1, 70..<75)
        #expect(early.highlight == .init(sentence: nil, word: nil))
        #expect(early.scrollTo == nil)
        let later = m.loadedUpTo(100)
        #expect(later.highlight?.word == 70..<75)
        #expect(later.scrollTo == 70)
    }

    @Test func scrollingStopsFollowingUntilBack() {
        var m = ReadingModel()
        _ = m.showText(1)
        _ = m.loadedUpTo(100)
        #expect(m.personScrolled().backButton == true)
        #expect(m.personScrolled() == .init(), "a second scroll changes nothing")
        let word = m.wordHeard(1, 60..<64)
        #expect(word.scrollTo == nil && word.highlight?.word == 60..<64)
        let back = m.backToReading()
        #expect(back.scrollTo == 60 && back.backButton == false)
        #expect(m.wordHeard(1, 65..<70).scrollTo == 65)
    }

    @Test func wordsHeardBeforeTheTextIsShownAreMarkedOnceItIs() {
        var model = ReadingModel()
        _ = model.showText(1)
        _ = model.sentenceHeard(2, 0..<20)
        _ = model.wordHeard(2, 0..<5)
        _ = model.wordHeard(3, 0..<2)  // a newer text still: the one shown next is 2
        _ = model.showText(2)
        #expect(model.heard.word == nil)  // 3's words replaced 2's: nothing stale is marked
        var again = ReadingModel()
        _ = again.showText(1)
        _ = again.sentenceHeard(2, 0..<20)
        _ = again.wordHeard(2, 0..<5)
        _ = again.showText(2)
        #expect(again.heard.sentence == 0..<20 && again.heard.word == 0..<5)
    }

    @Test func aNewTextFollowsAgain() {
        var m = ReadingModel()
        _ = m.showText(1)
        _ = m.personScrolled()
        let update = m.showText(2)
        #expect(update.backButton == false && m.following && m.loaded == 0)
    }

    @Test func piecesJoinToTheTextAndEndAtLineBreaks() {
        let paragraph = String(repeating: "word ", count: 30) + "\n"
        let text = String(repeating: paragraph, count: 50) + "éè🙂 end"
        let pieces = TextPieces.cut(text, size: 400)
        #expect(pieces.joined() == text)
        #expect(pieces.count > 10)
        for piece in pieces.dropLast() {
            #expect(piece.hasSuffix("\n"))
            #expect(piece.unicodeScalars.count <= 800)
        }
        #expect(TextPieces.cut("").isEmpty)
        #expect(TextPieces.cut(String(repeating: "x", count: 1000), size: 100).map(\.count) == Array(repeating: 200, count: 5))
    }

    @Test func settingsReadBackAndClamp() {
        var s = ComfortSettings()
        s.family = "OpenDyslexic"
        s.size = 20
        s.spacing = 1.8
        s.width = 900
        s.highContrast = true
        s.style = "dark"
        #expect(ComfortSettings(keyFile: s.keyFile) == s)
        let wild = ComfortSettings(keyFile: "[window]\nsize=500\nwidth=1\nfont=Comic\nstyle=pink\nspacing=x\n")
        #expect(wild.size == 48 && wild.width == 300 && wild.family == "Sans" && wild.style == "system" && wild.spacing == 1.4)
        #expect(ComfortSettings(keyFile: "not a key file [") == ComfortSettings())
    }

    @Test func readingChoicesReadBackAndBecomeTheSpeakOption() {
        var s = ComfortSettings()
        #expect(s.readingOption == nil)
        s.reading = ["emoji": "skip", "links": "full"]
        #expect(s.readingOption == "links=full,emoji=skip")
        #expect(ComfortSettings(keyFile: s.keyFile) == s)
        #expect(ComfortSettings(keyFile: "[reading]\nlinks=never\nemoji=all\n").reading == ["emoji": "all"])
    }
}
