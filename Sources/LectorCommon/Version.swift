/// Lector's release: the one place its version is written. `lector --version` prints it; meson.build (the
/// project's version), the AppStream metainfo's release (data/meson.build) and the Debian package with its
/// changelog (scripts/package) read it from this file through `scripts/version`.
public enum LectorVersion {
    /// The version, MAJOR.MINOR.PATCH (Semantic Versioning 2.0.0).
    public static let string = "0.1.0"
    /// The day this version was released, YYYY-MM-DD (ISO 8601): the metainfo's release date and the date of
    /// the Debian changelog's entry.
    public static let date = "2026-12-03"
}
