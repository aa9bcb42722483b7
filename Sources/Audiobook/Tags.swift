/// What an audiobook file says about itself: title, authors, language and chapter marks.
public struct AudioTags: Equatable, Sendable {
    /// One chapter mark: its title and where it starts in the audio, ms from the start.
    public struct Mark: Equatable, Sendable {
        /// The chapter's title, one line.
        public var title: String
        /// Its start, ms from the start of the file.
        public var start: Int
        /// Makes a mark for `title` starting `start` ms into the audio.
        public init(title: String, start: Int) {
            self.title = title
            self.start = start
        }
    }

    /// The title, nil when none is known.
    public var title: String?
    /// The authors, in order; empty when unknown.
    public var authors: [String]
    /// The language, a BCP 47 tag; nil when unknown.
    public var language: String?
    /// Chapter marks in order, starts not decreasing.
    public var chapters: [Mark]
    /// The book a file is one chapter of (`--split chapters`), nil otherwise.
    public var album: String?
    /// The file's number among the book's files and their count (`--split chapters`), nil otherwise.
    public var track: (number: Int, total: Int)?

    /// Makes tags; every field defaults to "unknown".
    public init(title: String? = nil, authors: [String] = [], language: String? = nil, chapters: [Mark] = [],
                album: String? = nil, track: (number: Int, total: Int)? = nil) {
        self.title = title
        self.authors = authors
        self.language = language
        self.chapters = chapters
        self.album = album
        self.track = track
    }

    /// Tags equal field by field.
    public static func == (a: AudioTags, b: AudioTags) -> Bool {
        a.title == b.title && a.authors == b.authors && a.language == b.language && a.chapters == b.chapters
            && a.album == b.album && a.track?.number == b.track?.number && a.track?.total == b.track?.total
    }

    /// At most this many bytes of UTF-8 in a title, an author's name or a chapter's title; at most
    /// `maximumAuthors` authors. A document's metadata can be any size; a file's tags are read whole by players.
    public static let maximumFieldBytes = 4_096
    /// At most this many authors.
    public static let maximumAuthors = 64

    /// These tags within `totalBytes` of Vorbis comments (or as many ID3v2 bytes, about the same): each field
    /// cut to ``maximumFieldBytes`` (at a character), authors to ``maximumAuthors``, then chapter marks dropped
    /// from the end until the whole fits; and whether anything was cut.
    public func bounded(totalBytes: Int) -> (tags: AudioTags, cut: Bool) {
        var out = self
        func cut(_ s: String) -> String {
            guard s.utf8.count > AudioTags.maximumFieldBytes else { return s }
            var result = ""
            var bytes = 0
            for scalar in s.unicodeScalars {
                bytes += String(scalar).utf8.count
                if bytes > AudioTags.maximumFieldBytes { break }
                result.unicodeScalars.append(scalar)
            }
            return result
        }
        out.title = title.map(cut)
        out.album = album.map(cut)
        out.authors = authors.prefix(AudioTags.maximumAuthors).map(cut)
        out.chapters = chapters.map { Mark(title: cut($0.title), start: $0.start) }
        // Each comment costs its length and 4 bytes; a chapter two comments of about 30 bytes and its title.
        var total = out.vorbisComments.reduce(0) { $0 + 4 + $1.utf8.count }
        while total > totalBytes, let last = out.chapters.popLast() {
            total -= 2 * 4 + 33 + last.title.utf8.count
        }
        return (out, out != self)
    }

    /// The fields as Vorbis comments (`TITLE`, `ARTIST` per author, `LANGUAGE`, `ALBUM`, `TRACKNUMBER` and
    /// `TRACKTOTAL`, and the chapter extension's
    /// `CHAPTER001=HH:MM:SS.mmm`, `CHAPTER001NAME=…`), `ENCODER` last.
    ///
    /// Source: Xiph Vorbis comment field recommendations; the Vorbis chapter extension
    /// (wiki.xiph.org/Chapter_Extension), read by ffmpeg and most players.
    public var vorbisComments: [String] {
        var fields: [String] = []
        if let title { fields.append("TITLE=" + title) }
        fields += authors.map { "ARTIST=" + $0 }
        if let language { fields.append("LANGUAGE=" + language) }
        if let album { fields.append("ALBUM=" + album) }
        if let track { fields += ["TRACKNUMBER=\(track.number)", "TRACKTOTAL=\(track.total)"] }
        for (i, mark) in chapters.enumerated() {
            let number = AudioTags.padded(i + 1, 3)
            fields.append("CHAPTER\(number)=" + AudioTags.clock(milliseconds: mark.start))
            fields.append("CHAPTER\(number)NAME=" + mark.title)
        }
        fields.append("ENCODER=Lector")
        return fields
    }

    /// `HH:MM:SS.mmm` for a time in ms.
    public static func clock(milliseconds ms: Int) -> String {
        let ms = max(ms, 0)
        return "\(padded(ms / 3_600_000, 2)):\(padded(ms / 60_000 % 60, 2)):\(padded(ms / 1_000 % 60, 2)).\(padded(ms % 1_000, 3))"
    }

    static func padded(_ n: Int, _ width: Int) -> String {
        let s = String(n)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }
}

/// Little-endian and big-endian integers appended to byte arrays.
extension Array where Element == UInt8 {
    mutating func appendLE32(_ v: Int) {
        for shift in stride(from: 0, to: 32, by: 8) { append(UInt8(truncatingIfNeeded: v >> shift)) }
    }
    mutating func appendBE32(_ v: Int) {
        for shift in stride(from: 24, through: 0, by: -8) { append(UInt8(truncatingIfNeeded: v >> shift)) }
    }
    mutating func appendBE24(_ v: Int) {
        for shift in stride(from: 16, through: 0, by: -8) { append(UInt8(truncatingIfNeeded: v >> shift)) }
    }
    mutating func appendString(_ s: String) { append(contentsOf: Array(s.utf8)) }
}

/// Vorbis comment blocks (the body shared by Ogg Vorbis, Ogg Opus and FLAC).
///
/// Source: Vorbis I specification §5 (comment header), RFC 7845 §5.2 (OpusTags), FLAC format
/// (METADATA_BLOCK_VORBIS_COMMENT).
public enum VorbisComment {
    /// The vendor string and comments of a block starting at `bytes[offset]` (after any magic); nil when it
    /// is malformed.
    public static func parse(_ bytes: [UInt8], at offset: Int) -> (vendor: [UInt8], comments: [String])? {
        var at = offset
        func le32() -> Int? {
            guard at + 4 <= bytes.count else { return nil }
            defer { at += 4 }
            return Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24
        }
        guard let vendorLength = le32(), at + vendorLength <= bytes.count else { return nil }
        let vendor = Array(bytes[at..<at + vendorLength])
        at += vendorLength
        guard let count = le32() else { return nil }
        var comments: [String] = []
        for _ in 0..<count {
            guard let length = le32(), at + length <= bytes.count else { return nil }
            comments.append(String(decoding: bytes[at..<at + length], as: UTF8.self))
            at += length
        }
        return (vendor, comments)
    }

    /// The block: vendor string and comments, lengths little-endian (no magic, no framing bit).
    public static func body(vendor: [UInt8], comments: [String]) -> [UInt8] {
        var out: [UInt8] = []
        out.appendLE32(vendor.count)
        out += vendor
        out.appendLE32(comments.count)
        for comment in comments {
            let utf8 = Array(comment.utf8)
            out.appendLE32(utf8.count)
            out += utf8
        }
        return out
    }
}
