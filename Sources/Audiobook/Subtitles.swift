/// Subtitle files made from a rendering: SubRip (`.srt`) and WebVTT (`.vtt`), one cue per sentence, timed
/// where the sentence is heard in the audio Lector renders of the same text.
///
/// Source: WebVTT (W3C Candidate Recommendation, 2019): the `WEBVTT` header, cue timings `HH:MM:SS.mmm -->
/// HH:MM:SS.mmm`, and `&`, `<`, `>` escaped as `&amp;`, `&lt;`, `&gt;` in cue text; SubRip as mpv, ffmpeg and
/// VLC read it: a cue number, `HH:MM:SS,mmm --> HH:MM:SS,mmm`, the text, a blank line.
public enum SubtitleFormat: String, CaseIterable, Sendable {
    /// SubRip.
    case srt
    /// WebVTT.
    case vtt

    /// The format of a file name's extension (`.srt`, `.vtt`, any case); nil for any other name.
    public init?(fileName: String) {
        guard let dot = fileName.lastIndex(of: "."), !fileName[dot...].contains("/") else { return nil }
        self.init(rawValue: fileName[fileName.index(after: dot)...].lowercased())
    }

    /// What the file starts with: WebVTT's signature line and a blank line; nothing for SubRip.
    public var header: String { self == .vtt ? "WEBVTT\n\n" : "" }

    /// One cue: its `number` (from 1), `start` and `end` in ms from the start of the audio, and `text` made
    /// one line (runs of white space, line breaks among them, become one space; WebVTT's `&`, `<`, `>`
    /// escaped, and `-->` in either format broken so it cannot be read as a timing). Empty for a text with
    /// nothing to show.
    public func cue(number: Int, start: Int, end: Int, text: String) -> String {
        let line = SubtitleFormat.oneLine(text)
        guard !line.isEmpty else { return "" }
        let shown = self == .vtt ? SubtitleFormat.escaped(line) : line.replacing("-->", with: "->")
        let timing = "\(clock(start)) --> \(clock(max(end, start + 1)))"
        return "\(number)\n\(timing)\n\(shown)\n\n"
    }

    /// `ms` as `HH:MM:SS,mmm` (SubRip) or `HH:MM:SS.mmm` (WebVTT); hours grow past 99 as needed.
    public func clock(_ ms: Int) -> String {
        let ms = max(0, ms)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let milli = ms % 1_000
        let fraction = milli < 10 ? "00\(milli)" : milli < 100 ? "0\(milli)" : "\(milli)"
        return "\(two(ms / 3_600_000)):\(two(ms / 60_000 % 60)):\(two(ms / 1_000 % 60))\(self == .vtt ? "." : ",")\(fraction)"
    }

    /// `text` with each run of white space (and control characters) as one space, trimmed.
    static func oneLine(_ text: String) -> String {
        var out = ""
        var space = false
        for scalar in text.unicodeScalars {
            if scalar.properties.isWhitespace || scalar.properties.generalCategory == .control {
                space = !out.isEmpty
                continue
            }
            if space { out += " " }
            space = false
            out.unicodeScalars.append(scalar)
        }
        return out
    }

    /// `text` with WebVTT's three reserved characters as character references.
    static func escaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            default: out.append(character)
            }
        }
        return out
    }
}
