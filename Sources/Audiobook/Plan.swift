/// Where chapters fall among the sentences of a text, and how a rendering is laid out in files.
public enum ChapterPlan {
    /// For each chapter start (Unicode scalar offsets, increasing), the index of the first sentence read in it:
    /// the first whose range ends after the start. A chapter after the last sentence gets `sentenceEnds.count`.
    /// `sentenceEnds` are the sentences' upper bounds, increasing.
    public static func firstSentences(chapterStarts: [Int], sentenceEnds: [Int]) -> [Int] {
        chapterStarts.map { start in
            var low = 0, high = sentenceEnds.count
            while low < high {
                let mid = (low + high) / 2
                if sentenceEnds[mid] <= start { low = mid + 1 } else { high = mid }
            }
            return low
        }
    }

    /// The file of chapter `number` (1-based, of `count`) when a rendering to `path` is split:
    /// `book.opus` → `book-01.opus` (as many digits as `count` needs, at least two).
    public static func splitPath(_ path: String, number: Int, count: Int) -> String {
        let (stem, ext) = stemAndExtension(path)
        return "\(stem)-\(AudioTags.padded(number, max(2, String(count).count)))\(ext)"
    }

    /// The playlist of a split rendering to `path`: `book.opus` → `book.m3u`.
    public static func playlistPath(_ path: String) -> String {
        stemAndExtension(path).stem + ".m3u"
    }

    /// An extended M3U playlist of `entries` (file paths, written relative to the playlist's folder, and their
    /// titles and durations in seconds), in order. Source: the de facto `#EXTM3U` / `#EXTINF` format.
    public static func playlist(_ entries: [(path: String, title: String, seconds: Int)]) -> String {
        var out = "#EXTM3U\n"
        for entry in entries {
            let name = entry.path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? entry.path
            out += "#EXTINF:\(entry.seconds),\(entry.title.split(whereSeparator: \.isNewline).joined(separator: " "))\n\(name)\n"
        }
        return out
    }

    private static func stemAndExtension(_ path: String) -> (stem: String, ext: String) {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return (path, "") }
        return (String(path[..<dot]), String(path[dot...]))
    }
}

/// The progress line of a rendering on a terminal: bar, percent, elapsed, time left and speed.
public struct ProgressLine: Equatable, Sendable {
    /// Done, 0…1 (of the text's characters).
    public var fraction: Double
    /// Seconds since the rendering started.
    public var elapsed: Double
    /// Seconds of audio rendered so far.
    public var audio: Double

    /// Makes the figures of one line.
    public init(fraction: Double, elapsed: Double, audio: Double) {
        self.fraction = fraction
        self.elapsed = elapsed
        self.audio = audio
    }

    /// `[#######·············]  35%  0:12 elapsed, 0:22 left, 850× real time`, `width` cells of bar.
    public func text(width: Int = 24) -> String {
        let f = min(max(fraction, 0), 1)
        let filled = Int(f * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: "·", count: width - filled)
        let percent = String(Int(f * 100))
        var line = "[\(bar)] \(String(repeating: " ", count: 3 - percent.count))\(percent)%  \(ProgressLine.clock(elapsed)) elapsed"
        if f > 0.001 && f < 1 { line += ", \(ProgressLine.clock(elapsed * (1 - f) / f)) left" }
        if elapsed > 0.05 { line += ", \(Int(audio / elapsed))× real time" }
        return line
    }

    /// `M:SS` or `H:MM:SS`.
    public static func clock(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        let mmss = "\(AudioTags.padded(s / 60 % 60, s >= 3_600 ? 2 : 1)):\(AudioTags.padded(s % 60, 2))"
        return s >= 3_600 ? "\(s / 3_600):" + mmss : mmss
    }
}
