/// ID3v2.4 tags for MP3 files: title, authors, language, album and track (TALB, TRCK), and chapters (CTOC + CHAP frames).
///
/// Source: ID3 tag version 2.4.0 structure and native frames (id3.org), and the ID3v2 Chapter Frame
/// Addendum 1.0 (`CHAP`, `CTOC`). Text is UTF-8 (encoding byte 3).
public enum ID3v2 {
    /// A complete tag (header and frames) for `tags`, the last chapter ending at `durationMs`.
    public static func tag(_ tags: AudioTags, durationMs: Int) -> [UInt8] {
        var frames: [UInt8] = []
        if let title = tags.title { frames += frame("TIT2", text(title)) }
        if !tags.authors.isEmpty { frames += frame("TPE1", text(tags.authors.joined(separator: "\u{0}"))) }
        if let language = tags.language { frames += frame("TLAN", text(iso639_2(language))) }
        if let album = tags.album { frames += frame("TALB", text(album)) }
        if let track = tags.track { frames += frame("TRCK", text("\(track.number)/\(track.total)")) }
        frames += frame("TSSE", text("Lector"))
        if !tags.chapters.isEmpty {
            var toc: [UInt8] = Array("toc".utf8) + [0, 0x03, UInt8(min(tags.chapters.count, 255))]
            for i in tags.chapters.indices.prefix(255) { toc += Array("chp\(i + 1)".utf8) + [0] }
            frames += frame("CTOC", toc)
            for (i, mark) in tags.chapters.enumerated() {
                let end = i + 1 < tags.chapters.count ? tags.chapters[i + 1].start : durationMs
                var chap: [UInt8] = Array("chp\(i + 1)".utf8) + [0]
                chap.appendBE32(mark.start)
                chap.appendBE32(max(end, mark.start))
                chap.appendBE32(-1) // byte offsets unused: 0xFFFFFFFF
                chap.appendBE32(-1)
                chap += frame("TIT2", text(mark.title))
                frames += frame("CHAP", chap)
            }
        }
        var header: [UInt8] = Array("ID3".utf8) + [4, 0, 0]
        header += synchsafe(frames.count)
        return header + frames
    }

    /// The size of the ID3v2 tag at the start of `bytes` (header, frames, footer), 0 when there is none.
    public static func size(atStartOf bytes: [UInt8]) -> Int {
        guard bytes.count >= 10, bytes[0] == 0x49, bytes[1] == 0x44, bytes[2] == 0x33 else { return 0 }
        let body = bytes[6...9].reduce(0) { $0 << 7 | Int($1 & 0x7F) }
        return 10 + body + (bytes[5] & 0x10 != 0 ? 10 : 0)
    }

    private static func text(_ s: String) -> [UInt8] { [3] + Array(s.utf8) }

    private static func frame(_ id: String, _ body: [UInt8]) -> [UInt8] {
        Array(id.utf8) + synchsafe(body.count) + [0, 0] + body
    }

    private static func synchsafe(_ n: Int) -> [UInt8] {
        [UInt8(n >> 21 & 0x7F), UInt8(n >> 14 & 0x7F), UInt8(n >> 7 & 0x7F), UInt8(n & 0x7F)]
    }

    /// TLAN takes ISO 639-2 codes: the primary subtag of `bcp47` mapped for common languages, else as given.
    static func iso639_2(_ bcp47: String) -> String {
        let primary = bcp47.split(separator: "-").first.map { $0.lowercased() } ?? ""
        let table = ["en": "eng", "de": "deu", "fr": "fra", "es": "spa", "it": "ita", "pt": "por", "nl": "nld",
                     "pl": "pol", "ru": "rus", "sv": "swe", "da": "dan", "nb": "nob", "no": "nor", "fi": "fin",
                     "cs": "ces", "el": "ell", "tr": "tur", "ja": "jpn", "zh": "zho", "ar": "ara", "hu": "hun"]
        return table[primary] ?? primary
    }
}
