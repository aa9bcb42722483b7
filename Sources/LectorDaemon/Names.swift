/// Lector's names on the session bus and for the desktop.
enum Names {
    /// Lector's own well-known bus name.
    static let bus = "org.lector.Lector"
    /// The object implementing `interface`.
    static let path = "/org/lector/Lector"
    /// Lector's own interface (data/org.lector.Lector1.xml).
    static let interface = "org.lector.Lector1"
    /// The application id: desktop entry (org.lector.Lector.desktop), icon name, PulseAudio application.id.
    static let applicationID = "org.lector.Lector"
}
