/// What is known of a text beyond its words: where it came from and how it is divided. Importers fill it
/// (documents: EPUB metadata and navigation, PDF outline, HTML and Markdown headings); plain text typed or
/// piped has none of it. Every consumer (MPRIS metadata, `lector chapters`, the reader window, audiobook
/// chapter marks) reads it from `Utterance.structure`.
public struct TextStructure: Equatable, Sendable {
    /// The document's own title (EPUB `dc:title`, PDF Info `Title`, HTML `<title>`), or a file's name; nil:
    /// none known, widgets show the text's first words (`Utterance.title`).
    public var title: String?
    /// The authors, in the document's order (EPUB `dc:creator`, PDF Info `Author`, HTML `meta name=author`);
    /// empty when unknown.
    public var authors: [String]
    /// The document's language as its metadata declares it (BCP 47), nil when it declares none.
    public var language: String?
    /// Chapters in reading order, starts strictly increasing; empty when the text has no structure.
    public var chapters: [Chapter]
    /// The stretches its source marks as written in a language (HTML `lang`, EPUB `dc:language`, …), sorted,
    /// not overlapping, nested marks already resolved (`LanguageSpanBuilder`); text in no span is unmarked.
    /// They choose the voice per sentence (`UtterancePreparer`); empty when the source marks none.
    public var languages: [LanguageSpan] = []

    /// Makes a structure; every field defaults to "unknown".
    public init(title: String? = nil, authors: [String] = [], language: String? = nil, chapters: [Chapter] = []) {
        self.title = title
        self.authors = authors
        self.language = language
        self.chapters = chapters
    }

    /// The chapter that holds the character at `offset` (Unicode scalars into `Utterance.text`): the last one
    /// that starts at or before it; nil before the first chapter or when there are none.
    public func chapterIndex(at offset: Int) -> Int? {
        var low = 0, high = chapters.count
        while low < high {
            let mid = (low + high) / 2
            if chapters[mid].start <= offset { low = mid + 1 } else { high = mid }
        }
        return low == 0 ? nil : low - 1
    }
}

/// One chapter or section of a text: a heading, an EPUB navigation point or a PDF outline entry.
public struct Chapter: Equatable, Sendable {
    /// Its title as shown and listed (`lector chapters`), one line.
    public var title: String
    /// Where it starts in `Utterance.text`, in Unicode scalars, 0-based.
    public var start: Int
    /// Its depth: 1 for a top-level chapter (`h1`, an EPUB top-level navPoint), 2 for a section in it, ….
    public var level: Int

    /// Makes a chapter starting at scalar offset `start`, at depth `level` (≥ 1).
    public init(title: String, start: Int, level: Int = 1) {
        self.title = title
        self.start = start
        self.level = max(1, level)
    }
}
