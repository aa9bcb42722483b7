import SpeechCore
import GLibKit

/// How a client asks for a text to be read: the options of `lector read` and of the D-Bus `Speak` call
/// (data/org.lector.Lector1.xml).
public struct SpeakOptions: Equatable, Sendable {
    /// eSpeak NG's speaking rates in words per minute (speak_lib.h: espeakRATE_MINIMUM 80, espeakRATE_MAXIMUM 450).
    public static let rates = 80...450
    /// eSpeak NG's normal rate, in words per minute (speak_lib.h: espeakRATE_NORMAL).
    public static let defaultRate = 175
    /// Base pitches Lector accepts (eSpeak NG's `espeakPITCH`, 0-100, of which 50 is normal).
    public static let pitches = 0...99
    /// eSpeak NG's normal base pitch.
    public static let defaultPitch = 50
    /// Stream volumes, linear: 0.0 is mute, 1.0 the sound server's full volume (the configuration's
    /// `[speech] volume`, MPRIS `Volume`).
    public static let volumes = 0.0...1.0

    /// BCP 47 tag; nil: the voice's language, else detected per paragraph (unsure: the configured default
    /// language, else the daemon's locale, else English).
    public var language: String?
    /// eSpeak NG voice name or identifier.
    public var voice: String?
    /// Words per minute (`rates`).
    public var rate: Int?
    /// Base pitch (`pitches`).
    public var pitch: Int?
    /// Append instead of replacing.
    public var queue = false
    /// A short title for media widgets (MPRIS `xesam:title`); nil: made from the text.
    public var title: String?
    /// The `file://` URI the text came from (MPRIS `xesam:url`).
    public var url: String?
    /// For a file read before: start from its beginning instead of where it was left off.
    public var fromStart = false
    /// The text is an SSML document (application/ssml+xml), read in eSpeak NG's SSML mode.
    public var ssml = false
    /// The document format of the text or file (a `DocumentFormat` raw value: "html", "markdown", "epub",
    /// "odt", "docx", "pdf", "text"); nil: told by its content type.
    public var format: String?
    /// The password of an encrypted PDF.
    public var password: String?
    /// Reading settings for this text, `name=value` pairs separated by commas (`ReadingSettings.changed(by:)`),
    /// over the configured ones; nil: the configured ones.
    public var reading: String?

    /// Options with everything left to the daemon's defaults, except what is given.
    public init(language: String? = nil, voice: String? = nil, rate: Int? = nil, pitch: Int? = nil, queue: Bool = false) {
        self.language = language
        self.voice = voice
        self.rate = rate
        self.pitch = pitch
        self.queue = queue
    }
}

extension SpeakOptions {
    /// The keys of Speak's and SpeakFile's `options` (`a{sv}`), in the order data/org.lector.Lector1.xml
    /// lists them; each option is one field of `SpeakOptions`.
    public enum Key: String, CaseIterable, Sendable {
        /// `SpeakOptions.language`.
        case language
        /// `SpeakOptions.voice`.
        case voice
        /// `SpeakOptions.rate`.
        case rate
        /// `SpeakOptions.pitch`.
        case pitch
        /// `SpeakOptions.queue`.
        case queue
        /// `SpeakOptions.ssml`.
        case ssml
        /// `SpeakOptions.title`.
        case title
        /// `SpeakOptions.url`.
        case url
        /// `SpeakOptions.fromStart`.
        case fromStart = "from-start"
        /// `SpeakOptions.format`.
        case format
        /// `SpeakOptions.password`.
        case password
        /// `SpeakOptions.reading`.
        case reading

        /// The D-Bus type of the key's value: "s", "i" or "b".
        public var type: String {
            switch self {
            case .language, .voice, .title, .url, .format, .password, .reading: "s"
            case .rate, .pitch: "i"
            case .queue, .ssml, .fromStart: "b"
            }
        }

        /// `type` in words, for messages: "a string", "an integer" or "a boolean".
        var typeName: String {
            switch type {
            case "s": "a string"
            case "i": "an integer"
            default: "a boolean"
            }
        }
    }

    /// Why options or a value are refused; `description` is the one-line message both the daemon (as
    /// org.freedesktop.DBus.Error.InvalidArgs) and the command line give.
    public enum OptionError: Error, Equatable, CustomStringConvertible, Sendable {
        /// A key that is not a `Key`.
        case unknownKey(String)
        /// A value that is not of its key's type (any integer type is taken for "i", any text type for "s").
        case wrongType(Key)
        /// A rate outside `rates` (words per minute).
        case rateOutOfRange(Int)
        /// A pitch outside `pitches`.
        case pitchOutOfRange(Int)

        /// The message, one line.
        public var description: String {
            switch self {
            case .unknownKey(let key):
                return "unknown option '\(key)'; known: " + Key.allCases.map(\.rawValue).joined(separator: ", ")
            case .wrongType(let key):
                return "option '\(key.rawValue)' must be \(key.typeName) (\(key.type))"
            case .rateOutOfRange(let wpm):
                return "rate \(wpm) is out of range: eSpeak NG speaks \(rates.lowerBound)–\(rates.upperBound) words per minute"
            case .pitchOutOfRange(let pitch):
                return "pitch \(pitch) is out of range \(pitches.lowerBound)–\(pitches.upperBound)"
            }
        }
    }

    /// Throws `.rateOutOfRange` unless `wpm` is in `rates`.
    public static func checkRate(_ wpm: Int) throws(OptionError) {
        guard rates.contains(wpm) else { throw .rateOutOfRange(wpm) }
    }

    /// Throws `.pitchOutOfRange` unless `pitch` is in `pitches`.
    public static func checkPitch(_ pitch: Int) throws(OptionError) {
        guard pitches.contains(pitch) else { throw .pitchOutOfRange(pitch) }
    }

    /// Checks `reading` (`name=value` pairs, `ReadingSettings.changed(by:)`).
    /// - Throws: `ReadingSettingsError` with the one line for the first bad pair.
    public static func checkReading(_ reading: String) throws(ReadingSettingsError) {
        _ = try ReadingSettings().changed(by: reading)
    }

    /// The options as Speak and SpeakFile take them (`a{sv}` entries, unboxed): only what is set, the
    /// booleans only when true, rate and pitch as `i` (clamped to `Int32`).
    public var dbusOptions: [String: Variant] {
        var d: [Key: Variant] = [:]
        if let v = language { d[.language] = .string(v) }
        if let v = voice { d[.voice] = .string(v) }
        if let v = rate { d[.rate] = .int32(Int32(clamping: v)) }
        if let v = pitch { d[.pitch] = .int32(Int32(clamping: v)) }
        if queue { d[.queue] = .bool(true) }
        if ssml { d[.ssml] = .bool(true) }
        if let v = title { d[.title] = .string(v) }
        if let v = url { d[.url] = .string(v) }
        if fromStart { d[.fromStart] = .bool(true) }
        if let v = format { d[.format] = .string(v) }
        if let v = password { d[.password] = .string(v) }
        if let v = reading { d[.reading] = .string(v) }
        return d.wireNamed
    }

    /// Reads Speak's and SpeakFile's `options` (values boxed or not). Only the types are checked here: the
    /// ranges of rate and pitch are checked with the defaults they fall back to (`checkRate`, `checkPitch`).
    /// - Throws: `OptionError.unknownKey` or `.wrongType` for the first bad entry met.
    public init(dbusOptions: [String: Variant]) throws(OptionError) {
        self.init()
        for (name, boxed) in dbusOptions {
            guard let key = Key(rawValue: name) else { throw .unknownKey(name) }
            try set(key, boxed.unboxed)
        }
    }

    private mutating func set(_ key: Key, _ value: Variant) throws(OptionError) {
        func text() throws(OptionError) -> String {
            guard let s = value.string else { throw .wrongType(key) }
            return s
        }
        func integer() throws(OptionError) -> Int {
            guard let i = value.int64, let n = Int(exactly: i) else { throw .wrongType(key) }
            return n
        }
        func flag() throws(OptionError) -> Bool {
            guard let b = value.bool else { throw .wrongType(key) }
            return b
        }
        switch key {
        case .language: language = try text()
        case .voice: voice = try text()
        case .title: title = try text()
        case .url: url = try text()
        case .rate: rate = try integer()
        case .pitch: pitch = try integer()
        case .queue: queue = try flag()
        case .fromStart: fromStart = try flag()
        case .ssml: ssml = try flag()
        case .format: format = try text()
        case .password: password = try text()
        case .reading: reading = try text()
        }
    }
}
