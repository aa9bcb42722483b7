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

    /// Options with everything left to the daemon's defaults, except what is given.
    public init(language: String? = nil, voice: String? = nil, rate: Int? = nil, pitch: Int? = nil, queue: Bool = false) {
        self.language = language
        self.voice = voice
        self.rate = rate
        self.pitch = pitch
        self.queue = queue
    }
}
