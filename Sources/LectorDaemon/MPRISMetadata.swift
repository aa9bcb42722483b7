import SpeechCore

/// What a media widget shows of a reading, apart from the sentence (`xesam:title`): what is being read and by
/// whom. GNOME Shell shows the title and then the artist; Plasma's tooltip reads "TITLE by ARTIST".
struct ReadingDescription: Equatable {
    /// `xesam:album`: the document's or file's title (`TextStructure.title`), else the text's first words
    /// (`Utterance.title`).
    var album: String
    /// `xesam:artist`: the authors where known (`TextStructure.authors`), else `[album]`, so that the line
    /// under the sentence names the text.
    var artists: [String]
    /// `lector:chapter`: the title of the chapter the sentence is in (`TextStructure.chapterIndex(at:)` of the
    /// sentence's start); nil for a text without chapters or before the first one.
    var chapter: String?

    /// A description made of its parts (see the properties).
    init(album: String, artists: [String], chapter: String?) {
        self.album = album
        self.artists = artists
        self.chapter = chapter
    }

    /// Describes `utterance` while its sentence `sentenceIndex` is read (clamped to the sentences there are).
    init(_ utterance: Utterance, sentenceIndex: Int) {
        let structure = utterance.structure
        let title = structure.title.map(Self.oneLine).flatMap { $0.isEmpty ? nil : $0 } ?? utterance.title
        album = title
        let authors = structure.authors.map(Self.oneLine).filter { !$0.isEmpty }
        artists = authors.isEmpty ? [title] : authors
        let sentences = utterance.sentences
        if sentences.isEmpty {
            chapter = nil
        } else {
            let start = sentences[min(max(0, sentenceIndex), sentences.count - 1)].range.lowerBound
            chapter = structure.chapterIndex(at: start).map { Self.oneLine(structure.chapters[$0].title) }
        }
    }

    /// `text` on one line, its white space runs made single spaces (a title from metadata may hold line breaks).
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: { $0.isWhitespace || $0.isNewline }).joined(separator: " ")
    }
}
