/// Lector's names on the session bus and for the desktop (the MPRIS names: `MPRIS`).
public enum Names {
    /// Lector's own well-known bus name.
    public static let bus = "org.lector.Lector"
    /// The object implementing `interface`.
    public static let path = "/org/lector/Lector"
    /// Lector's own interface (data/org.lector.Lector1.xml; its members: `Lector1`).
    public static let interface = "org.lector.Lector1"
    /// The application id: desktop entry (org.lector.Lector.desktop), icon name, PulseAudio application.id.
    public static let applicationID = "org.lector.Lector"
}
