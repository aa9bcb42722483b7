/// The MPRIS2 names Lector uses, as a player (the daemon's `org.mpris.MediaPlayer2.lector`), as its client
/// (`lector next`, `seek`, `position`) and towards other players (`--pause-others`): Media Player Remote
/// Interfacing Specification 2.2; data/org.mpris.MediaPlayer2.xml lists the members as Lector implements them.
public enum MPRIS {
    /// The object of both interfaces ("/org/mpris/MediaPlayer2").
    public static let path = "/org/mpris/MediaPlayer2"
    /// The root interface.
    public static let rootInterface = "org.mpris.MediaPlayer2"
    /// The player interface.
    public static let playerInterface = "org.mpris.MediaPlayer2.Player"
    /// Every player's bus name starts with this ("org.mpris.MediaPlayer2.").
    public static let busNamePrefix = rootInterface + "."
    /// The shared daemon's player name ("org.mpris.MediaPlayer2.lector"), owned by the daemon's MPRIS
    /// connection: the only connection that exports and signals the player, so every signal is sent once.
    public static let lectorBusName = busNamePrefix + "lector"
    /// The track id meaning "no track" (Track_Id).
    public static let noTrack = "/org/mpris/MediaPlayer2/TrackList/NoTrack"

    /// The root interface's methods.
    public enum RootMethod: String, WireMethod {
        /// Brings the player's window forward (Lector has none).
        case raise = "Raise"
        /// Ends the player.
        case quit = "Quit"

        /// Neither takes arguments.
        public var inSignature: String { "" }
        /// Neither returns anything.
        public var outSignature: String { "" }
    }

    /// The root interface's properties.
    public enum RootProperty: String, WireProperty {
        /// Whether Quit works.
        case canQuit = "CanQuit"
        /// Whether the window is full-screen.
        case fullscreen = "Fullscreen"
        /// Whether Fullscreen can be set.
        case canSetFullscreen = "CanSetFullscreen"
        /// Whether Raise works.
        case canRaise = "CanRaise"
        /// Whether the TrackList interface is implemented.
        case hasTrackList = "HasTrackList"
        /// The player's name for people.
        case identity = "Identity"
        /// The desktop entry's basename.
        case desktopEntry = "DesktopEntry"
        /// The URI schemes OpenUri takes.
        case supportedUriSchemes = "SupportedUriSchemes"
        /// The MIME types OpenUri takes.
        case supportedMimeTypes = "SupportedMimeTypes"

        /// Identity and DesktopEntry are text, the supported schemes and types lists of text, the rest booleans.
        public var type: String {
            switch self {
            case .identity, .desktopEntry: "s"
            case .supportedUriSchemes, .supportedMimeTypes: "as"
            default: "b"
            }
        }

        /// Fullscreen only (Lector leaves it false).
        public var isWritable: Bool { self == .fullscreen }
    }

    /// The player interface's methods.
    public enum PlayerMethod: String, WireMethod {
        /// The next track (Lector: sentence).
        case next = "Next"
        /// The previous track (Lector: sentence).
        case previous = "Previous"
        /// Pauses.
        case pause = "Pause"
        /// Pauses or plays.
        case playPause = "PlayPause"
        /// Stops.
        case stop = "Stop"
        /// Plays.
        case play = "Play"
        /// Moves by an offset.
        case seek = "Seek"
        /// Moves to a position in a track.
        case setPosition = "SetPosition"
        /// Opens and plays a URI.
        case openUri = "OpenUri"

        /// Seek: an offset in µs; SetPosition: (track id, µs); OpenUri: the URI.
        public var inSignature: String {
            switch self {
            case .seek: "x"
            case .setPosition: "ox"
            case .openUri: "s"
            default: ""
            }
        }

        /// None returns anything.
        public var outSignature: String { "" }
    }

    /// The player interface's properties.
    public enum PlayerProperty: String, WireProperty {
        /// `PlaybackStatus`.
        case playbackStatus = "PlaybackStatus"
        /// "None", "Track" (the sentence repeats) or "Playlist" (the text and the queue repeat).
        case loopStatus = "LoopStatus"
        /// The playback rate, a multiplier.
        case rate = "Rate"
        /// The current track's metadata.
        case metadata = "Metadata"
        /// The volume, linear.
        case volume = "Volume"
        /// The position in the track, µs.
        case position = "Position"
        /// The lowest Rate.
        case minimumRate = "MinimumRate"
        /// The highest Rate.
        case maximumRate = "MaximumRate"
        /// Whether Next has an effect.
        case canGoNext = "CanGoNext"
        /// Whether Previous has an effect.
        case canGoPrevious = "CanGoPrevious"
        /// Whether Play has an effect.
        case canPlay = "CanPlay"
        /// Whether Pause has an effect.
        case canPause = "CanPause"
        /// Whether Seek and SetPosition have an effect.
        case canSeek = "CanSeek"
        /// Whether the player can be controlled at all.
        case canControl = "CanControl"

        /// PlaybackStatus and LoopStatus are text, the rates and Volume doubles, Position µs, Metadata a
        /// dictionary (`MetadataKey`), the rest booleans.
        public var type: String {
            switch self {
            case .playbackStatus, .loopStatus: "s"
            case .rate, .volume, .minimumRate, .maximumRate: "d"
            case .metadata: "a{sv}"
            case .position: "x"
            default: "b"
            }
        }

        /// LoopStatus, Rate and Volume.
        public var isWritable: Bool { [.loopStatus, .rate, .volume].contains(self) }
    }

    /// `LoopStatus` values (MPRIS `Loop_Status`).
    public enum LoopStatus: String, CaseIterable, Sendable {
        /// Reading stops after the last text.
        case none = "None"
        /// The sentence being read repeats.
        case track = "Track"
        /// The whole text and the queue repeat.
        case playlist = "Playlist"
    }

    /// The player interface's signals.
    public enum PlayerSignal: String, WireSignal {
        /// The position jumped (µs).
        case seeked = "Seeked"

        /// The new position in µs.
        public var signature: String { "x" }
    }

    /// The values of PlaybackStatus.
    public enum PlaybackStatus: String, Sendable {
        /// Reading.
        case playing = "Playing"
        /// Paused.
        case paused = "Paused"
        /// Stopped.
        case stopped = "Stopped"
    }

    /// The Metadata keys Lector sets (MPRIS v2 metadata guidelines; `lector:` is Lector's own namespace).
    public enum MetadataKey: String, CaseIterable, Sendable {
        /// The track id, an object path (`noTrack` when nothing is loaded).
        case trackID = "mpris:trackid"
        /// The length in µs.
        case length = "mpris:length"
        /// A `file://` URI of the icon.
        case artURL = "mpris:artUrl"
        /// The sentence being read.
        case title = "xesam:title"
        /// What is being read: the document's or file's title, else the text's first words.
        case album = "xesam:album"
        /// The sentence being read (as `title`).
        case asText = "xesam:asText"
        /// The BCP 47 tag of the sentence being read.
        case language = "xesam:language"
        /// The authors where known, else `[album]`: the line widgets show under the title names the text.
        case artist = "xesam:artist"
        /// The `file://` URI the text came from.
        case url = "xesam:url"
        /// When the sleep timer pauses (`SleepTimerText`).
        case sleepTimer = "lector:sleepTimer"
        /// The name of the voice reading the sentence (e.g. "English (Great Britain)").
        case voice = "lector:voice"
        /// The title of the chapter the sentence is in (documents with chapters only).
        case chapter = "lector:chapter"
    }
}
