import SpeechCore
import Testing

@testable import LectorDaemon

/// What MPRIS widgets show of a reading: `xesam:album`, `xesam:artist` and `lector:chapter`.
@Suite struct ReadingDescriptionTests {
    /// Three sentences of 10 scalars each, at 0, 11 and 22.
    static func utterance(_ structure: TextStructure) -> Utterance {
        let text = "Sentence A Sentence B Sentence C"
        let sentences = [0, 11, 22].map { start in
            Sentence(range: start..<(start + 10), text: String(text.unicodeScalars.dropFirst(start).prefix(10)))
        }
        var u = Utterance(id: 1, text: text, sentences: sentences, language: "en", voiceName: "English",
                          engineVoice: "en", rate: 175, pitch: 50, title: "Sentence A Sentence B…")
        u.structure = structure
        return u
    }

    @Test("plain text: the album is the text's first words, and so is the artist; no chapter")
    func plainText() {
        let d = ReadingDescription(Self.utterance(TextStructure()), sentenceIndex: 1)
        #expect(d == ReadingDescription(album: "Sentence A Sentence B…", artists: ["Sentence A Sentence B…"], chapter: nil))
    }

    @Test("a document: its title as album, its authors as artists, the chapter of the sentence being read")
    func document() {
        let structure = TextStructure(
            title: "Moby-Dick;\n or, The Whale", authors: ["Herman Melville", "  "],
            chapters: [Chapter(title: "Loomings", start: 11), Chapter(title: "The  Carpet-Bag", start: 22)])
        let u = Self.utterance(structure)
        let table: [(Int, String?)] = [(0, nil), (1, "Loomings"), (2, "The Carpet-Bag"), (9, "The Carpet-Bag"), (-3, nil)]
        for (index, chapter) in table {
            let d = ReadingDescription(u, sentenceIndex: index)
            #expect(d.album == "Moby-Dick; or, The Whale")
            #expect(d.artists == ["Herman Melville"])
            #expect(d.chapter == chapter, "sentence \(index)")
        }
    }

    @Test("a title but no authors: the title is the artist too; an empty title counts as none")
    func titleWithoutAuthors() {
        #expect(ReadingDescription(Self.utterance(TextStructure(title: "notes.txt")), sentenceIndex: 0).artists == ["notes.txt"])
        #expect(ReadingDescription(Self.utterance(TextStructure(title: " \n")), sentenceIndex: 0).album == "Sentence A Sentence B…")
    }
}
