/// What is read of the parts of a text a listener may not want to hear, the way a screen reader's verbosity
/// level decides it: web addresses, e-mail addresses, citation markers, long numbers and hashes, runs of
/// symbols, emoji. Set in the configuration file (`[reading]`), by `lector read` options, by the reader window's
/// comfort panel, and for one text by Speak's `reading` option; `SpokenForm` applies it.
public struct ReadingSettings: Equatable, Sendable {
    /// Web addresses (`https://…`, `www.…`).
    public enum Links: String, Sendable, CaseIterable {
        /// Their host alone: "https://www.example.org/a/b?c" is read "example.org" ("example dot org").
        case host
        /// As written.
        case full
        /// Not read.
        case skip
    }

    /// Whether a kind of clutter is read as written or left out.
    public enum Choice: String, Sendable, CaseIterable {
        /// As written (e-mail addresses: "jane at example.org").
        case read
        /// Not read.
        case skip
    }

    /// Emoji.
    public enum Emoji: String, Sendable, CaseIterable {
        /// A run of the same emoji is read once ("🎉🎉🎉" as one "party popper").
        case once
        /// Every one, as written.
        case all
        /// Not read.
        case skip
    }

    /// Web addresses; default: their host.
    public var links: Links = .host
    /// E-mail addresses; default: read ("jane at example.org").
    public var emails: Choice = .read
    /// Bracketed citation markers ("[12]", "[1, 3]", "[4–6]"); default: skipped.
    public var citations: Choice = .skip
    /// Numbers of 16 digits or more, and hexadecimal hashes and identifiers (a commit id, a UUID); default:
    /// skipped.
    public var numbers: Choice = .skip
    /// Runs of symbols (`=====`, `-----`, `*****`, box drawing); default: skipped.
    public var symbols: Choice = .skip
    /// Emoji; default: a run of the same one read once.
    public var emoji: Emoji = .once

    /// The defaults.
    public init() {}

    /// The setting names, as in the configuration file and `lector read --reading`.
    public static let names = ["links", "emails", "citations", "numbers", "symbols", "emoji"]

    /// The values setting `name` takes, or nil for an unknown name.
    public static func values(of name: String) -> [String]? {
        switch name {
        case "links": Links.allCases.map(\.rawValue)
        case "emails", "citations", "numbers", "symbols": Choice.allCases.map(\.rawValue)
        case "emoji": Emoji.allCases.map(\.rawValue)
        default: nil
        }
    }

    /// Sets setting `name` to `value`.
    /// - Throws: `ReadingSettingsError` naming the setting or value and what is allowed.
    public mutating func set(_ name: String, to value: String) throws(ReadingSettingsError) {
        guard let allowed = Self.values(of: name) else {
            throw ReadingSettingsError(message: "unknown reading setting '\(name)'; one of: \(Self.names.joined(separator: ", "))")
        }
        guard allowed.contains(value) else {
            throw ReadingSettingsError(message: "reading setting \(name) is one of \(allowed.joined(separator: ", ")), not '\(value)'")
        }
        switch name {
        case "links": links = Links(rawValue: value)!
        case "emails": emails = Choice(rawValue: value)!
        case "citations": citations = Choice(rawValue: value)!
        case "numbers": numbers = Choice(rawValue: value)!
        case "symbols": symbols = Choice(rawValue: value)!
        default: emoji = Emoji(rawValue: value)!
        }
    }

    /// The value of setting `name` (one of `names`).
    public func value(of name: String) -> String? {
        switch name {
        case "links": links.rawValue
        case "emails": emails.rawValue
        case "citations": citations.rawValue
        case "numbers": numbers.rawValue
        case "symbols": symbols.rawValue
        case "emoji": emoji.rawValue
        default: nil
        }
    }

    /// These settings changed by `list`: `name=value` pairs separated by commas ("links=skip,emoji=all").
    /// - Throws: `ReadingSettingsError` for a pair without `=`, an unknown name or value.
    public func changed(by list: String) throws(ReadingSettingsError) -> ReadingSettings {
        var settings = self
        for pair in list.split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingSpaces }
            guard parts.count == 2 else {
                throw ReadingSettingsError(message: "reading settings are name=value pairs separated by commas, not '\(pair)'")
            }
            try settings.set(parts[0], to: parts[1])
        }
        return settings
    }

    /// Every setting as `name=value` pairs separated by commas, which `changed(by:)` reads back.
    public var encoded: String {
        Self.names.map { "\($0)=\(value(of: $0)!)" }.joined(separator: ",")
    }
}

/// A reading setting that does not exist or a value it does not take: one line saying what is allowed.
public struct ReadingSettingsError: Error, CustomStringConvertible, Equatable {
    /// The line.
    public var message: String
    /// The line.
    public var description: String { message }
}

private extension Substring {
    var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
