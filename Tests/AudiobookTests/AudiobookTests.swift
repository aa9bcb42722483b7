import Testing
@testable import Audiobook

@Suite struct TagTests {
    @Test("Vorbis comments carry title, every author, language and numbered chapters with their times")
    func vorbisComments() {
        let tags = AudioTags(title: "Book", authors: ["A", "B"], language: "en-GB",
                             chapters: [.init(title: "One", start: 0), .init(title: "Two", start: 3_723_456)])
        #expect(tags.vorbisComments == ["TITLE=Book", "ARTIST=A", "ARTIST=B", "LANGUAGE=en-GB",
                                        "CHAPTER001=00:00:00.000", "CHAPTER001NAME=One",
                                        "CHAPTER002=01:02:03.456", "CHAPTER002NAME=Two", "ENCODER=Lector"])
        let body = VorbisComment.body(vendor: Array("v".utf8), comments: tags.vorbisComments)
        #expect(VorbisComment.parse(body, at: 0)?.comments == tags.vorbisComments)
    }

    @Test("An ID3v2.4 tag has its header size, a table of contents and one CHAP frame per chapter ending where the next starts")
    func id3() {
        let tags = AudioTags(title: "Book", language: "de", chapters: [.init(title: "One", start: 0), .init(title: "Two", start: 1_500)])
        let tag = ID3v2.tag(tags, durationMs: 4_000)
        #expect(Array(tag[0..<5]) == Array("ID3".utf8) + [4, 0])
        #expect(ID3v2.size(atStartOf: tag) == tag.count)
        let text = String(decoding: tag, as: UTF8.self)
        #expect(text.contains("CTOC") && text.contains("chp1") && text.contains("chp2") && text.contains("deu"))
        // chp1: start 0, then end 1500 ms, big-endian
        let chp1 = tag.firstRange(of: Array("chp1".utf8) + [0, 0, 0, 0, 0])
        #expect(chp1 != nil)
        if let r = chp1 { #expect(Array(tag[r.upperBound..<r.upperBound + 4]) == [0, 0, 0x05, 0xDC]) }
    }

    @Test("A split file's album and track: ALBUM, TRACKNUMBER and TRACKTOTAL comments, ID3 TALB and TRCK number/total")
    func albumAndTrack() {
        let tags = AudioTags(title: "One", album: "Book", track: (2, 12))
        #expect(tags.vorbisComments == ["TITLE=One", "ALBUM=Book", "TRACKNUMBER=2", "TRACKTOTAL=12", "ENCODER=Lector"])
        let text = String(decoding: ID3v2.tag(tags, durationMs: 1_000), as: UTF8.self)
        #expect(text.contains("TALB") && text.contains("Book") && text.contains("TRCK") && text.contains("2/12"))
    }

    @Test("Bounded tags: each field cut to 4,096 bytes at a character, 64 authors, then chapters dropped from the end to fit; small tags untouched")
    func bounded() {
        let small = AudioTags(title: "Book", authors: ["A"], chapters: [.init(title: "One", start: 0)])
        let same = small.bounded(totalBytes: 1 << 24)
        #expect(same.tags == small && !same.cut)
        let big = AudioTags(title: String(repeating: "é", count: 10_000), authors: (0..<100).map { "Author \($0)" },
                            chapters: (0..<1_000).map { .init(title: String(repeating: "c", count: 5_000), start: $0 * 1_000) })
        let (out, cut) = big.bounded(totalBytes: 100_000)
        #expect(cut)
        #expect(out.title?.utf8.count == 4_096 && out.title?.unicodeScalars.count == 2_048)
        #expect(out.authors.count == 64)
        #expect(out.chapters.allSatisfy { $0.title.utf8.count == 4_096 })
        #expect(out.vorbisComments.reduce(0) { $0 + 4 + $1.utf8.count } <= 100_000 && out.chapters.count > 10)
        #expect(Array(out.chapters.map(\.start)) == Array(big.chapters.prefix(out.chapters.count).map(\.start)))
    }

    @Test("Ogg pages: the CRC of a known page, and a long packet laid on continued pages")
    func ogg() {
        // RFC 3533 CRC: the page's CRC field read back equals the one recomputed.
        let page = OggPage(flags: 2, granule: 0, serial: 7, sequence: 0, lacing: [3], body: [1, 2, 3])
        var bytes = page.bytes
        let stored = Array(bytes[22..<26])
        bytes.replaceSubrange(22..<26, with: [0, 0, 0, 0])
        let crc = OggPage.crc(bytes)
        #expect(stored == (0..<4).map { UInt8(truncatingIfNeeded: crc >> (8 * UInt32($0))) })
        let pages = OggPage.paginate([UInt8](repeating: 9, count: 255 * 300), serial: 1, sequence: 5, granule: 0)
        #expect(pages.count == 2)
        #expect(pages[0].flags == 0 && pages[1].flags == OggPage.continued)
        #expect(pages[0].granule == UInt64.max && pages[1].granule == 0)
        #expect(pages[1].lacing.last == 0 && pages[1].sequence == 6)
    }
}

@Suite struct OpusJoinTests {
    @Test("a packet's duration from its TOC: SILK 20 ms, hybrid 10 ms twice, CELT 2.5 ms × 3 frames (code 3)")
    func durations() {
        #expect(OggOpusJoiner.samples(ofPacketStartingWith: [1 << 3 | 0]) == 960)
        #expect(OggOpusJoiner.samples(ofPacketStartingWith: [12 << 3 | 1]) == 960)
        #expect(OggOpusJoiner.samples(ofPacketStartingWith: [16 << 3 | 3, 3]) == 360)
        #expect(OggOpusJoiner.samples(ofPacketStartingWith: [31 << 3 | 0]) == 960)
        #expect(OggOpusJoiner.samples(ofPacketStartingWith: []) == 0)
    }
}

@Suite struct PlanTests {
    @Test("A chapter's first sentence is the first ending after its start")
    func firstSentences() {
        // sentences [0,10) [11,20) [21,30)
        #expect(ChapterPlan.firstSentences(chapterStarts: [0, 11, 15, 40], sentenceEnds: [10, 20, 30]) == [0, 1, 1, 3])
    }

    @Test("Split files are numbered with at least two digits, and the playlist lists them in order by name")
    func split() {
        #expect(ChapterPlan.splitPath("/x/book.opus", number: 3, count: 12) == "/x/book-03.opus")
        #expect(ChapterPlan.splitPath("book", number: 7, count: 120) == "book-007")
        #expect(ChapterPlan.playlistPath("/x/book.opus") == "/x/book.m3u")
        #expect(ChapterPlan.playlist([("/x/a-01.mp3", "One", 3), ("/x/a-02.mp3", "Two", 4)])
                == "#EXTM3U\n#EXTINF:3,One\na-01.mp3\n#EXTINF:4,Two\na-02.mp3\n")
    }

    @Test("The progress line shows bar, percent, elapsed, time left and speed")
    func progress() {
        #expect(ProgressLine(fraction: 0.25, elapsed: 10, audio: 3_000).text(width: 4)
                == "[#···]  25%  0:10 elapsed, 0:30 left, 300× real time")
        #expect(ProgressLine.clock(3_725) == "1:02:05")
    }
}

@Suite struct SubtitleTests {
    @Test("Cue clocks: SubRip's comma, WebVTT's dot, hours past 99; a cue's text one line, WebVTT's reserved characters escaped, an arrow broken")
    func cues() {
        #expect(SubtitleFormat.srt.clock(3_723_456) == "01:02:03,456" && SubtitleFormat.vtt.clock(7) == "00:00:00.007")
        #expect(SubtitleFormat.vtt.clock(360_000_000) == "100:00:00.000")
        #expect(SubtitleFormat.vtt.cue(number: 3, start: 1_000, end: 2_500, text: " A <b> &\n\tB --> C ")
                == "3\n00:00:01.000 --> 00:00:02.500\nA &lt;b&gt; &amp; B --&gt; C\n\n")
        #expect(SubtitleFormat.srt.cue(number: 1, start: 0, end: 0, text: "x --> y") == "1\n00:00:00,000 --> 00:00:00,001\nx -> y\n\n")
        #expect(SubtitleFormat.srt.cue(number: 1, start: 0, end: 10, text: " \n ").isEmpty)
        #expect(SubtitleFormat(fileName: "a/Book.VTT") == .vtt && SubtitleFormat(fileName: "book.srt.mp3") == nil)
    }
}
