@preconcurrency import Glibc

/// The backgrounds of the sentence and word highlights for each look of the window, and the text colour each
/// is drawn under. Pure.
///
/// No highlight sets a text colour: GTK 4.8's AT-SPI text attributes (gtk/a11y/gtkatspitextbuffer.c,
/// `gtk_text_buffer_get_run_attributes`) read a tag's `foreground` whenever its `foreground-set` is true, and
/// `foreground` is write-only, so the colour read is garbage and the window dies (SIGSEGV) at the first
/// attribute query of a screen reader over a highlighted word. Setting `foreground-rgba` sets
/// `foreground-set` too. So each background here is chosen to read well under the text colour of the style
/// it is used with (at least 7:1, WCAG 2.1's AAA level for text; `HighlightColoursTests`).
public struct HighlightColours: Equatable, Sendable {
    /// The sentence being heard: a light wash, `#rrggbb`.
    public var sentence: String
    /// The word being heard: a strong mark (underlined too, so that it shows without colour), `#rrggbb`.
    public var word: String
    /// The text colour the style draws over them, `#rrggbb` (libadwaita 1.2's `view_fg_color`, its 80 % black
    /// taken over white for the light style; Lector's high contrast draws white on black).
    public var text: String

    /// The colours for the window's look: `contrast` (Lector's high contrast or the desktop's), `dark` (the
    /// dark style, or Lector's high contrast, which is white on black).
    public static func forStyle(contrast: Bool, dark: Bool) -> HighlightColours {
        switch (contrast, dark) {
        case (false, false): HighlightColours(sentence: "#fff4c2", word: "#ffd54a", text: "#333333")
        case (false, true): HighlightColours(sentence: "#3d3a1c", word: "#6b5500", text: "#ffffff")
        case (true, false): HighlightColours(sentence: "#cfe3ff", word: "#ffff00", text: "#000000")
        case (true, true): HighlightColours(sentence: "#1a3a6a", word: "#8b0000", text: "#ffffff")
        }
    }

    /// The contrast ratio of two `#rrggbb` colours, 1 to 21 (WCAG 2.1, "contrast ratio" and "relative
    /// luminance", sRGB); 1 for a colour that does not parse.
    public static func contrast(_ a: String, _ b: String) -> Double {
        guard let la = luminance(a), let lb = luminance(b) else { return 1 }
        return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)
    }

    private static func luminance(_ colour: String) -> Double? {
        let hex = colour.hasPrefix("#") ? colour.dropFirst() : Substring(colour)
        guard hex.count == 6, let value = Int(hex, radix: 16) else { return nil }
        func channel(_ shift: Int) -> Double {
            let c = Double((value >> shift) & 0xff) / 255
            return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
        }
        return 0.2126 * channel(16) + 0.7152 * channel(8) + 0.0722 * channel(0)
    }
}
