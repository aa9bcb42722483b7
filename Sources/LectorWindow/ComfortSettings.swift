@preconcurrency import Glibc
import GLibKit
import SpeechCore

/// How the text looks: font family, size, line spacing, width, contrast and style, kept in
/// `$XDG_CONFIG_HOME/lector/window.ini` (a GKeyFile, group `[window]`), and what is read of web addresses,
/// symbols, emoji, … in the texts the window reads, where the person chose otherwise than the daemon's
/// configuration (group `[reading]`, `ReadingSettings` names and values). Values out of range are clamped;
/// a missing or unreadable file gives the defaults.
public struct ComfortSettings: Equatable, Sendable {
    /// The font families offered (OpenDyslexic from Debian's fonts-opendyslexic).
    public static let families = ["Sans", "Serif", "Monospace", "OpenDyslexic"]
    /// Font sizes offered, points.
    public static let sizes = 8...48
    /// Line spacings offered, times the font's line height.
    public static let spacings = 1.0...3.0
    /// Widths of the text column offered, pixels.
    public static let widths = 300...2400
    /// Light or dark: "system" follows the desktop, "light" or "dark" force one.
    public static let styles = ["system", "light", "dark"]

    public var family = "Sans"
    public var size = 14
    public var spacing = 1.4
    public var width = 720
    public var highContrast = false
    public var style = "system"
    /// Reading settings chosen in the panel (`ReadingSettings.names` → a value); the others are the daemon's.
    public var reading: [String: String] = [:]

    public init() {}

    /// The `reading` option of the texts the window reads (`SpeakOptions.reading`); nil: the daemon's settings.
    public var readingOption: String? {
        let pairs = ReadingSettings.names.compactMap { name in reading[name].map { "\(name)=\($0)" } }
        return pairs.isEmpty ? nil : pairs.joined(separator: ",")
    }

    /// The settings in `text` (a key file); unknown keys and bad values are left at their defaults.
    public init(keyFile text: String) {
        guard let file = try? KeyFile(text: text) else { return }
        let g = "window"
        if let f = file.string("font", inGroup: g), Self.families.contains(f) { family = f }
        if let s = (try? file.integer("size", inGroup: g)) ?? nil { size = min(max(s, Self.sizes.lowerBound), Self.sizes.upperBound) }
        if let s = (try? file.double("spacing", inGroup: g)) ?? nil {
            spacing = min(max(s, Self.spacings.lowerBound), Self.spacings.upperBound)
        }
        if let w = (try? file.integer("width", inGroup: g)) ?? nil { width = min(max(w, Self.widths.lowerBound), Self.widths.upperBound) }
        highContrast = file.string("high-contrast", inGroup: g) == "true"
        if let s = file.string("style", inGroup: g), Self.styles.contains(s) { style = s }
        for name in ReadingSettings.names {
            if let v = file.string(name, inGroup: "reading"), ReadingSettings.values(of: name)?.contains(v) == true { reading[name] = v }
        }
    }

    /// The settings as a key file.
    public var keyFile: String {
        var text = "[window]\nfont=\(family)\nsize=\(size)\nspacing=\(spacing)\nwidth=\(width)\nhigh-contrast=\(highContrast)\nstyle=\(style)\n"
        let chosen = ReadingSettings.names.compactMap { name in reading[name].map { "\(name)=\($0)\n" } }
        if !chosen.isEmpty { text += "\n[reading]\n" + chosen.joined() }
        return text
    }

    /// Where they are kept.
    public static var path: String { UserDirs.config + "/lector/window.ini" }

    /// The settings kept, or the defaults.
    public static func load() -> ComfortSettings {
        guard let bytes = try? readRegularFile(path, maximumBytes: 64 * 1024) else { return ComfortSettings() }
        return ComfortSettings(keyFile: String(decoding: bytes, as: UTF8.self))
    }

    /// Keeps them (written atomically); nil, or one line saying why they could not be written.
    public func save() -> String? {
        _ = UserDirs.config.withCString { mkdirOwner($0) }
        _ = (UserDirs.config + "/lector").withCString { mkdirOwner($0) }
        do { try writeFileAtomically(Self.path, contents: Array(keyFile.utf8)) } catch { return "cannot keep the settings: \(error.message)" }
        return nil
    }

    /// The CSS for the text view (class `lector-text`): font, size, and the high-contrast colours.
    public var css: String {
        var css = "textview.lector-text { font-family: \"\(family)\"; font-size: \(size)pt; }\n"
        if highContrast {
            css += "textview.lector-text, textview.lector-text text { background-color: #000000; color: #ffffff; }\n"
        }
        return css
    }

    /// Extra pixels between the lines of a paragraph for the line spacing (a point is 4/3 pixels at 96 dpi).
    public var pixelsBetweenLines: Int { Int((spacing - 1) * Double(size) * 4 / 3 * 1.2) }
}


private func mkdirOwner(_ path: UnsafePointer<CChar>) -> Int32 { mkdir(path, 0o700) }
