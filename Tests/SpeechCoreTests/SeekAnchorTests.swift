import Testing
@testable import SpeechCore

/// Word starts (samples) of "Every evening, before the sky turns grey, a small motor wakes and the lamp at the
/// top begins to glow." at 175 wpm as eSpeak NG 1.51 synthesizes it in a fresh worker, and again after it has
/// synthesized "A lighthouse is a patient machine.": the comma pause after "evening," is 1,089 samples
/// (49 ms) longer the second time, and every later word starts that much later or more.
@Suite struct SeekAnchorTests {
    static let fresh: [Int64] = [0, 5824, 19046, 26328, 29304, 35322, 44040, 53840, 55440, 62684]
    static let afterOther: [Int64] = [0, 5824, 20135, 27419, 30382, 36411, 45127, 54929, 56743, 63994]

    @Test("A place measured in a slower synthesis is found by word in a faster one: no audio of the word is skipped")
    func fasterResynthesis() {
        // 81 samples into "the" (word 3) in the first synthesis; the plain offset would skip 1,091 samples of it.
        let anchor = SeekAnchor(offset: 27_500, wordStarts: Self.afterOther)
        #expect(anchor == SeekAnchor(offset: 27_500, wordStarts: Self.afterOther))
        #expect(anchor.word == 3 && anchor.into == 81)
        #expect(anchor.skip(newWordStarts: Self.fresh) == 26_409) // "the" starts at 26,328 there
    }

    @Test("A place measured in a faster synthesis is found by word in a slower one")
    func slowerResynthesis() {
        let anchor = SeekAnchor(offset: 44_100, wordStarts: Self.fresh)
        #expect(anchor.word == 6 && anchor.into == 60)
        #expect(anchor.skip(newWordStarts: Self.afterOther) == 45_187) // 45,127 + 60
    }

    @Test("A place in a pause that is shorter in the new synthesis starts at the next word, not after it")
    func clampedToTheNextWord() {
        // 13,676 samples after "evening" starts: past the end of the shorter comma pause of the fresh synthesis.
        let anchor = SeekAnchor(offset: 19_500, wordStarts: Self.afterOther)
        #expect(anchor.word == 1 && anchor.into == 13_676)
        #expect(anchor.skip(newWordStarts: Array(Self.fresh.prefix(2))) == 19_500) // "before" not known yet
        #expect(anchor.skip(newWordStarts: Self.fresh) == 19_046)
    }

    @Test("Not placed until the new synthesis has reported the anchor's word")
    func pendingUntilTheWordIsKnown() {
        let anchor = SeekAnchor(offset: 30_000, wordStarts: Self.fresh)
        #expect(anchor.word == 4)
        #expect(anchor.skip(newWordStarts: []) == nil)
        #expect(anchor.skip(newWordStarts: Array(Self.afterOther.prefix(4))) == nil)
        #expect(anchor.skip(newWordStarts: Array(Self.afterOther.prefix(5))) == 31_078) // 30,382 + 696
    }

    @Test("Before the first word (eSpeak NG's leading silence): the offset itself, at most up to the first word")
    func beforeTheFirstWord() {
        let anchor = SeekAnchor(offset: 50, wordStarts: [120, 4000])
        #expect(anchor.word == -1 && anchor.into == 50)
        #expect(anchor.skip(newWordStarts: []) == 50)
        #expect(anchor.skip(newWordStarts: [30, 3900]) == 30)
        #expect(SeekAnchor(offset: 50, wordStarts: []).skip(newWordStarts: [80]) == 50)
    }
}
