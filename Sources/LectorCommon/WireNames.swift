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
        case speak = "Speak"
        case speakFile = "SpeakFile"
        case pause = "Pause"
        case resume = "Resume"
        case toggle = "Toggle"
        case stop = "Stop"
        case sleepAfter = "SleepAfter"
        case sleepAtParagraphEnd = "SleepAtParagraphEnd"
        case cancelSleep = "CancelSleep"
        case setRate = "SetRate"
        case setPitch = "SetPitch"
        case setVoice = "SetVoice"
        case listVoices = "ListVoices"

        /// Speak: (text, options); SpeakFile: (file descriptor, options), options as `SpeakOptions.dbusOptions`;
        /// SleepAfter: µs; SetRate: words per minute; SetPitch: 0-99; SetVoice: name, identifier or BCP 47 tag.
        public var inSignature: String {
            switch self {
            case .speak: "sa{sv}"
            case .speakFile: "ha{sv}"
            case .sleepAfter: "x"
            case .setRate, .setPitch: "i"
            case .setVoice: "s"
            case .pause, .resume, .toggle, .stop, .sleepAtParagraphEnd, .cancelSleep, .listVoices: ""
            }
        }

        /// Speak and SpeakFile: the utterance id; ListVoices: (name, identifier, languages, gender) per voice.
        public var outSignature: String {
            switch self {
            case .speak, .speakFile: "t"
            case .listVoices: "a(ssass)"
            default: ""
            }
        }
    }

    /// The properties, all read-only.
    public enum Property: String, WireProperty {
        case state = "State"
        case utterance = "Utterance"
        case text = "Text"
        case language = "Language"
        case voice = "Voice"
        case sentence = "Sentence"
        case position = "Position"
        case length = "Length"
        case sleepTimer = "SleepTimer"

        /// State, Text, Language, Voice: text; Utterance: the id; Sentence: (index, start, length) in scalars;
        /// Position, Length: µs; SleepTimer: (mode, µs since the Unix epoch).
        public var type: String {
            switch self {
            case .state, .text, .language, .voice: "s"
            case .utterance: "t"
            case .sentence: "(uuu)"
            case .position, .length: "x"
            case .sleepTimer: "(sx)"
            }
        }

        /// Always false: clients change the state through methods.
        public var isWritable: Bool { false }
    }

    /// The events, each sent when it is heard; the first argument is the utterance id.
    public enum Signal: String, WireSignal {
        case started = "Started"
        case sentence = "Sentence"
        case word = "Word"
        case paused = "Paused"
        case resumed = "Resumed"
        case stopped = "Stopped"
        case finished = "Finished"
        case error = "Error"

        /// Sentence: (id, index, start, length, language); Word: (id, start, length); Paused and Resumed:
        /// (id, position in µs); Error: (id, message, fatal).
        public var signature: String {
            switch self {
            case .started, .stopped, .finished: "t"
            case .sentence: "tuuus"
            case .word: "tuu"
            case .paused, .resumed: "tx"
            case .error: "tsb"
            }
        }
    }

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
    }
}
