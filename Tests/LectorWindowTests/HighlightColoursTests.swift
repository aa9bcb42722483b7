import LectorWindow
import Testing

@Suite struct HighlightColoursTests {
    @Test("every highlight reads at 7:1 or more under the text colour of its style, with no text colour of its own")
    func contrastWithoutAForeground() {
        for contrast in [false, true] {
            for dark in [false, true] {
                let c = HighlightColours.forStyle(contrast: contrast, dark: dark)
                #expect(HighlightColours.contrast(c.text, c.sentence) >= 7, "sentence \(c)")
                #expect(HighlightColours.contrast(c.text, c.word) >= 7, "word \(c)")
                #expect(c.word != c.sentence)
            }
        }
    }

    @Test func contrastRatioIsWCAGs() {
        #expect(abs(HighlightColours.contrast("#000000", "#ffffff") - 21) < 0.001)
        #expect(HighlightColours.contrast("#777777", "#777777") == 1)
        #expect(abs(HighlightColours.contrast("#ffffff", "#767676") - 4.54) < 0.01)
        #expect(HighlightColours.contrast("#12", "#ffffff") == 1, "a colour that does not parse")
    }
}
