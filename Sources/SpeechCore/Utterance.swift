/// The three states of speech, as the original `SpeechManager` named them. They map one to one onto MPRIS
/// `PlaybackStatus` ("Playing", "Paused", "Stopped"; MPRIS2 specification, org.mpris.MediaPlayer2.Player).
public enum SpeechState: String, Sendable, CaseIterable {
    /// Audio is being played (or is about to be: synthesis has been asked for).
    case reading
    /// The stream is corked: silent, nothing discarded, position frozen.
    case paused
    /// Nothing plays; position 0. The last text is kept so that toggle/Play can read it again.
    case stopped
}

/// A unit of synthesis: a sentence (or a slice of a very long one) of an utterance.
public struct Sentence: Equatable, Sendable {
    /// Where the sentence lies in `Utterance.text`, in Unicode scalar values (code points), 0-based.
    /// Never starts or ends with white space.
    public var range: Range<Int>
    /// The sentence's text: exactly the scalars of `range` (made on each use from `textSlice`).
    public var text: String {
        get { String(textSlice) }
        set { textSlice = Substring(newValue) }
    }
    /// The sentence's text as stored: a slice of the text it was cut from (the utterance's text, shared, not
    /// copied: a 1 MB text is not held a second time by its sentences), or a string of its own.
    public private(set) var textSlice: Substring
    /// The language and voice it is read with: an index into `Utterance.voices` (0, the utterance's first
    /// voice, unless a text mixes languages).
    public var voice: Int
    /// What the engine reads when it differs from `text` (a web address read as its host, a citation marker
    /// left out: see `SpokenForm`), with the map from its offsets back to `text`'s; nil: `text` is read.
    public var spoken: SpokenText?
    /// For an SSML utterance: the SSML document (`<speak>…</speak>`) the synthesizer reads for this
    /// sentence, whose text content is `text`; nil for plain text, which is read as `text`.
    public var markup: String?

    /// The start of the sentence's text on one line, for a log line: line breaks read as spaces, at most 60
    /// characters ("..." ends a cut).
    public var excerpt: String {
        let line = textSlice.split(whereSeparator: \.isNewline).joined(separator: " ")
        return line.count > 60 ? String(line.prefix(57)) + "..." : line
    }

    /// Makes a sentence from its range in the utterance and its text (`text.unicodeScalars.count == range.count`),
    /// read with `Utterance.voices[voice]`, and for SSML the markup to synthesize.
    public init(range: Range<Int>, text: String, voice: Int = 0, markup: String? = nil) {
        self.init(range: range, text: Substring(text), voice: voice, markup: markup)
    }

    /// Makes a sentence whose text is a slice of a longer string, typically the utterance's text, which it
    /// shares instead of copying (`text.unicodeScalars.count == range.count`).
    public init(range: Range<Int>, text: Substring, voice: Int = 0, markup: String? = nil) {
        self.range = range
        textSlice = text
        self.voice = voice
        self.markup = markup
    }

    /// What the engine reads of a plain-text sentence: `spoken`'s text (else `text`), with a full stop after
    /// it when the sentence ends a line (a line break or the end of the text follows, spaces aside) without
    /// ending in punctuation that ends a sentence or clause (Unicode's Terminal_Punctuation, closing brackets
    /// and quotes aside). Headings, list items and table rows keep their text as written (the window shows
    /// it), yet are read as sentences that end there: Piper's models take the falling intonation and pause from
    /// the final punctuation, and eSpeak NG reads the end of its input as a full stop either way. A piece cut
    /// inside a long sentence goes on on the same line, and gets none. The added stop comes after every offset
    /// of `spoken`'s map, which stays valid.
    public var heard: String {
        var read = spoken?.text ?? text
        let base = textSlice.base.unicodeScalars
        var after = textSlice.endIndex
        while after < base.endIndex, base[after] == " " || base[after] == "\t" { base.formIndex(after: &after) }
        if after < base.endIndex, !"\n\r\u{85}\u{2028}\u{2029}".unicodeScalars.contains(base[after]) { return read }
        for scalar in textSlice.unicodeScalars.reversed() {
            switch scalar.properties.generalCategory {
            case .closePunctuation, .finalPunctuation: continue
            case _ where scalar == "\"" || scalar == "'": continue
            case _ where scalar.properties.isTerminalPunctuation || scalar == "\u{2026}": return read
            default:
                while read.last?.isWhitespace == true { read.removeLast() }  // a spoken form may end in a space
                return read + "."
            }
        }
        return read
    }
}

/// A language and the voice that reads it, for the sentences of an utterance in that language.
public struct UtteranceVoice: Equatable, Sendable {
    /// BCP 47 language tag actually used, e.g. "en-US".
    public var language: String
    /// Human-readable voice name, e.g. "English (America)".
    public var name: String
    /// The name the synthesizer selects the voice by (for eSpeak NG, `espeak_SetVoiceByName`'s argument).
    public var engineVoice: String

    /// Makes a language and voice.
    public init(language: String, name: String, engineVoice: String) {
        self.language = language
        self.name = name
        self.engineVoice = engineVoice
    }
}

/// One text to be read, with everything needed to read it. Immutable once handed to `SpeechManager`.
public struct Utterance: Equatable, Sendable {
    /// Unique within one daemon's lifetime, > 0, increasing.
    public var id: UInt64
    /// The whole text as it will be read (cleaned: see `TextCleaner`).
    public var text: String
    /// The text cut into sentences, in order; never empty. While `pendingText` > 0 these are the first
    /// sentences only: the rest are appended with `SpeechManager.extend` as they are cut.
    public var sentences: [Sentence]
    /// Unicode scalars of `text` after the last sentence that are not cut into sentences yet: 0 once every
    /// sentence is known. A long text starts being read before all of it is prepared.
    public var pendingText: Int
    /// Every sentence of the text is known (`pendingText` is 0).
    public var isComplete: Bool { pendingText == 0 }
    /// The languages and voices the sentences are read with (`Sentence.voice` indexes it); never empty.
    /// One entry unless the text mixes languages.
    public var voices: [UtteranceVoice]
    /// BCP 47 language tag of the first voice (`voices[0]`), e.g. "en-US".
    public var language: String { voices[0].language }
    /// Human-readable name of the first voice, e.g. "English (America)".
    public var voiceName: String { voices[0].name }
    /// The engine's name of the first voice (for eSpeak NG, `espeak_SetVoiceByName`'s argument).
    public var engineVoice: String { voices[0].engineVoice }
    /// Speaking rate in words per minute.
    public var rate: Int
    /// Base pitch, 0...99 (eSpeak NG's `espeakPITCH`).
    public var pitch: Int
    /// A short title for media widgets.
    public var title: String
    /// The `file://` URI the text came from, if any.
    public var url: String?
    /// The text's title, authors and chapters where its source says them (documents); empty for typed text.
    public var structure = TextStructure()
    /// The SSML index marks of the text, sorted by offset; empty for plain text. Each is announced when it is
    /// heard (see `MarkCursor`).
    public var marks: [IndexMark] = []

    /// Creates an utterance read in one language with one voice. `sentences` must not be empty;
    /// `pendingText` > 0 when they are only the first ones (see `pendingText`).
    public init(id: UInt64, text: String, sentences: [Sentence], language: String, voiceName: String,
                engineVoice: String, rate: Int, pitch: Int, title: String, url: String? = nil, pendingText: Int = 0) {
        self.init(id: id, text: text, sentences: sentences,
                  voices: [UtteranceVoice(language: language, name: voiceName, engineVoice: engineVoice)],
                  rate: rate, pitch: pitch, title: title, url: url, pendingText: pendingText)
    }

    /// Creates an utterance whose sentences are read with the voices they name (`Sentence.voice`, an index
    /// into `voices`). Neither `sentences` nor `voices` may be empty; `pendingText` > 0 when the sentences are
    /// only the first ones of the text (see `pendingText`).
    public init(id: UInt64, text: String, sentences: [Sentence], voices: [UtteranceVoice],
                rate: Int, pitch: Int, title: String, url: String? = nil, pendingText: Int = 0) {
        precondition(!sentences.isEmpty, "an utterance has at least one sentence")
        precondition(!voices.isEmpty && sentences.allSatisfy { voices.indices.contains($0.voice) },
                     "every sentence's voice is one of the utterance's voices")
        self.id = id
        self.text = text
        self.sentences = sentences
        self.voices = voices
        self.rate = rate
        self.pitch = pitch
        self.title = title
        self.url = url
        self.pendingText = max(0, pendingText)
    }
}

extension Utterance {
    /// The language and voice sentence `index` is read with (clamped to the sentences there are).
    public func voice(ofSentence index: Int) -> UtteranceVoice {
        voices[sentences[min(max(index, 0), sentences.count - 1)].voice]
    }
}
