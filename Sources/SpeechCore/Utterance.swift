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
    /// The sentence's own text: exactly the scalars of `range`.
    public var text: String
    /// For an SSML utterance: the SSML document (`<speak>…</speak>`) the synthesizer reads for this
    /// sentence, whose text content is `text`; nil for plain text, which is read as `text`.
    public var markup: String?

    /// Makes a sentence from its range in the utterance and its text (`text.unicodeScalars.count == range.count`),
    /// and for SSML the markup to synthesize.
    public init(range: Range<Int>, text: String, markup: String? = nil) {
        self.range = range
        self.text = text
        self.markup = markup
    }
}

/// One text to be read, with everything needed to read it. Immutable once handed to `SpeechManager`.
public struct Utterance: Equatable, Sendable {
    /// Unique within one daemon's lifetime, > 0, increasing.
    public var id: UInt64
    /// The whole text as it will be read (cleaned: see `TextCleaner`).
    public var text: String
    /// The text cut into sentences, in order; never empty.
    public var sentences: [Sentence]
    /// BCP 47 language tag actually used, e.g. "en-US".
    public var language: String
    /// Human-readable voice name, e.g. "English (America)".
    public var voiceName: String
    /// The name the synthesizer selects the voice by (for eSpeak NG, `espeak_SetVoiceByName`'s argument).
    public var engineVoice: String
    /// Speaking rate in words per minute.
    public var rate: Int
    /// Base pitch, 0...99 (eSpeak NG's `espeakPITCH`).
    public var pitch: Int
    /// A short title for media widgets.
    public var title: String
    /// The `file://` URI the text came from, if any.
    public var url: String?

    /// Creates an utterance. `sentences` must not be empty.
    public init(id: UInt64, text: String, sentences: [Sentence], language: String, voiceName: String,
                engineVoice: String, rate: Int, pitch: Int, title: String, url: String? = nil) {
        precondition(!sentences.isEmpty, "an utterance has at least one sentence")
        self.id = id
        self.text = text
        self.sentences = sentences
        self.language = language
        self.voiceName = voiceName
        self.engineVoice = engineVoice
        self.rate = rate
        self.pitch = pitch
        self.title = title
        self.url = url
    }
}
