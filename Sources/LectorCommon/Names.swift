/// Lector's names on the session bus and for the desktop.
public enum Names {
    /// Lector's own well-known bus name.
    public static let bus = "org.lector.Lector"
    /// The object implementing `interface`.
    public static let path = "/org/lector/Lector"
    /// Lector's own interface (data/org.lector.Lector1.xml).
    public static let interface = "org.lector.Lector1"
    /// The application id: desktop entry (org.lector.Lector.desktop), icon name, PulseAudio application.id.
    public static let applicationID = "org.lector.Lector"
    /// The MPRIS object (MPRIS2 specification: "/org/mpris/MediaPlayer2").
    public static let mprisPath = "/org/mpris/MediaPlayer2"
    /// The MPRIS player interface (MPRIS2 specification, org.mpris.MediaPlayer2.Player).
    public static let mprisPlayerInterface = "org.mpris.MediaPlayer2.Player"
    /// The track id meaning "no track" (MPRIS2 specification, Track_Id).
    public static let mprisNoTrack = "/org/mpris/MediaPlayer2/TrackList/NoTrack"
}
