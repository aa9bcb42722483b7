/// A method of a D-Bus interface Lector exports or calls: its raw value is its name on the bus. Every
/// conforming type is checked against the introspection XML in data/ by a unit test (names and signatures,
/// both ways).
public protocol WireMethod: RawRepresentable, CaseIterable, Hashable, Sendable where RawValue == String {
    /// The types of the in-arguments, concatenated in order (a D-Bus signature, "" for none).
    var inSignature: String { get }
    /// The types of the out-arguments, concatenated in order (a D-Bus signature, "" for none).
    var outSignature: String { get }
}

/// A property of a D-Bus interface Lector exports: its raw value is its name on the bus.
public protocol WireProperty: RawRepresentable, CaseIterable, Hashable, Sendable where RawValue == String {
    /// The property's D-Bus type, e.g. "s", "(uuu)", "a{sv}".
    var type: String { get }
    /// Whether `org.freedesktop.DBus.Properties.Set` may change it (access "readwrite"), else "read".
    var isWritable: Bool { get }
}

/// A signal of a D-Bus interface Lector exports: its raw value is its name on the bus.
public protocol WireSignal: RawRepresentable, CaseIterable, Hashable, Sendable where RawValue == String {
    /// The types of its arguments, concatenated in order (a D-Bus signature).
    var signature: String { get }
}

extension Dictionary where Key: RawRepresentable, Key.RawValue == String {
    /// The same entries keyed by their names on the bus (for `a{sv}` values and PropertiesChanged).
    public var wireNamed: [String: Value] {
        Dictionary<String, Value>(uniqueKeysWithValues: map { ($0.key.rawValue, $0.value) })
    }
}

extension Dictionary where Key == String {
    /// The entries whose names are cases of `K`, keyed by those cases; other names are left out.
    public func named<K: RawRepresentable & Hashable>(_: K.Type) -> [K: Value] where K.RawValue == String {
        var result: [K: Value] = [:]
        for (name, value) in self { if let key = K(rawValue: name) { result[key] = value } }
        return result
    }
}

/// Lector's own interface, `org.lector.Lector1` at `/org/lector/Lector` (`Names`): the names and signatures
/// of its members, as data/org.lector.Lector1.xml defines them. The daemon dispatches on them and the
/// command line calls through them.
public enum Lector1 {
    /// The methods (data/org.lector.Lector1.xml documents each).
    public enum Method: String, WireMethod {
        /// Reads a text; returns the utterance id.
        case speak = "Speak"
        /// Reads the text of an open regular file sent with the call.
        case speakFile = "SpeakFile"
        /// Reading → paused (the stream corked).
        case pause = "Pause"
        /// Paused → reading, from the exact sample.
        case resume = "Resume"
        /// Pauses, resumes, or reads the last text again.
        case toggle = "Toggle"
        /// Any state → stopped, position 0, queued texts discarded.
        case stop = "Stop"
        /// The sleep timer, after a duration.
        case sleepAfter = "SleepAfter"
        /// The sleep timer, at the end of the paragraph being read.
        case sleepAtParagraphEnd = "SleepAtParagraphEnd"
        /// Turns the sleep timer off.
        case cancelSleep = "CancelSleep"
        /// The speaking rate, from the next word.
        case setRate = "SetRate"
        /// The base pitch, from the next word.
        case setPitch = "SetPitch"
        /// The voice of the text being read, from the next word.
        case setVoice = "SetVoice"
        /// The installed voices.
        case listVoices = "ListVoices"
        /// Reads from the sentence that holds a text offset.
        case readFrom = "ReadFrom"
        /// Asks for (or stops) the Word signals, sent to the callers that asked only.
        case watchWords = "WatchWords"
        /// Moves to the start of a chapter of the text (0-based), keeping the state.
        case jumpToChapter = "JumpToChapter"
        /// Moves by chapters or paragraphs, forward or back; says whether there was one.
        case move = "Move"
        /// Sentences of the text: their ranges in Text and what is said of each.
        case sentences = "Sentences"

        /// Speak: (text, options); SpeakFile: (file descriptor, options), options as `SpeakOptions.dbusOptions`;
        /// SleepAfter: µs; SetRate: words per minute; SetPitch: 0-99; SetVoice: name, identifier or BCP 47 tag;
        /// ReadFrom: a text offset in Unicode scalars; WatchWords: whether to send the caller Word signals.
        public var inSignature: String {
            switch self {
            case .speak: "sa{sv}"
            case .speakFile: "ha{sv}"
            case .sleepAfter: "x"
            case .setRate, .setPitch: "i"
            case .setVoice: "s"
            case .readFrom: "u"
            case .watchWords: "b"
            case .jumpToChapter: "u"
            case .move: "si"
            case .sentences: "uu"
            case .pause, .resume, .toggle, .stop, .sleepAtParagraphEnd, .cancelSleep, .listVoices: ""
            }
        }

        /// Speak and SpeakFile: the utterance id; ListVoices: (name, identifier, languages, gender) per voice.
        public var outSignature: String {
            switch self {
            case .speak, .speakFile: "t"
            case .listVoices: "a(ssass)"
            case .move: "b"
            case .sentences: "a(uus)"
            default: ""
            }
        }
    }

    /// The properties, all read-only.
    public enum Property: String, WireProperty {
        /// "reading", "paused" or "stopped".
        case state = "State"
        /// The current (or last) utterance's id, 0 when none.
        case utterance = "Utterance"
        /// The current (or last) utterance's text (announced as invalidated only).
        case text = "Text"
        /// The BCP 47 tag of the sentence being heard.
        case language = "Language"
        /// The voice name of the sentence being heard.
        case voice = "Voice"
        /// The sentence being heard: its index and its range in Text.
        case sentence = "Sentence"
        /// The position heard, µs (never announced).
        case position = "Position"
        /// The length of the utterance's audio, µs.
        case length = "Length"
        /// The sleep timer.
        case sleepTimer = "SleepTimer"
        /// The text's chapters: (title, start µs, level) each.
        case chapters = "Chapters"
        /// Where each of Chapters starts in Text, in Unicode scalars (announced as invalidated only).
        case chapterOffsets = "ChapterOffsets"

        /// State, Text, Language, Voice: text; Utterance: the id; Sentence: (index, start, length) in scalars;
        /// Position, Length: µs; SleepTimer: (mode, µs since the Unix epoch); ChapterOffsets: scalars into Text.
        public var type: String {
            switch self {
            case .state, .text, .language, .voice: "s"
            case .utterance: "t"
            case .sentence: "(uuu)"
            case .position, .length: "x"
            case .sleepTimer: "(sx)"
            case .chapters: "a(sxu)"
            case .chapterOffsets: "au"
            }
        }

        /// Always false: clients change the state through methods.
        public var isWritable: Bool { false }
    }

    /// The events, each sent when it is heard; the first argument is the utterance id.
    public enum Signal: String, WireSignal {
        /// Reading of an utterance began.
        case started = "Started"
        /// A sentence starts being heard.
        case sentence = "Sentence"
        /// A word starts being heard.
        case word = "Word"
        /// An SSML mark is reached.
        case mark = "Mark"
        /// Reading paused.
        case paused = "Paused"
        /// Reading resumed.
        case resumed = "Resumed"
        /// Reading stopped before the end (Stop, or replaced).
        case stopped = "Stopped"
        /// The end was heard.
        case finished = "Finished"
        /// A sentence lost, or (fatal) reading ended by a failure.
        case error = "Error"

        /// Sentence: (id, index, start, length, language); Word: (id, start, length); Mark: (id, name);
        /// Paused and Resumed: (id, position in µs); Error: (id, message, fatal).
        public var signature: String {
            switch self {
            case .started, .stopped, .finished: "t"
            case .sentence: "tuuus"
            case .word: "tuu"
            case .paused, .resumed: "tx"
            case .mark: "ts"
            case .error: "tsb"
            }
        }
    }

    /// The most of Text one reply carries, bytes of UTF-8 (30 MiB): dbus-daemon disconnects a peer that sends
    /// a message over its limit (32 MiB by default, `max_message_size`), and the reply's header and the other
    /// properties of a GetAll need room too. A longer text (a document may yield up to 64 MiB) is read whole;
    /// its Text is the first 30 MiB, cut at a character boundary.
    public static let maximumTextReplyBytes = 30 << 20

    /// Lector's own D-Bus error names (data/org.lector.Lector1.xml names them where they are returned); other
    /// errors are the standard `org.freedesktop.DBus.Error.*`.
    public enum ErrorName: String, CaseIterable, Sendable {
        /// Toggle (or SleepAtParagraphEnd) with nothing to play.
        case nothingToPlay = "org.lector.Lector1.Error.NothingToPlay"
        /// Speak with `queue` when the text does not fit in the queue.
        case queueFull = "org.lector.Lector1.Error.QueueFull"
        /// Nothing readable in the text.
        case emptyText = "org.lector.Lector1.Error.EmptyText"
        /// A language no voice speaks, or no voice installed.
        case unknownLanguage = "org.lector.Lector1.Error.UnknownLanguage"
        /// A voice that is not installed.
        case unknownVoice = "org.lector.Lector1.Error.UnknownVoice"
        /// An SSML document the markup parser refuses.
        case malformedSSML = "org.lector.Lector1.Error.MalformedSSML"
        /// Any call that reaches a daemon after it began to exit (idle exit, SIGTERM, Quit): it has released
        /// its names and accepts nothing more; the caller starts or activates a new daemon and calls again.
        case exiting = "org.lector.Lector1.Error.Exiting"
    }
}
