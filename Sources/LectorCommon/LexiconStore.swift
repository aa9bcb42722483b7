import GLibKit
import SpeechCore

/// The user's pronunciation lexicon on disk: `$XDG_CONFIG_HOME/lector/lexicon` (`~/.config/lector/lexicon`),
/// in `LexiconFile`'s format. The command line edits it; the daemon watches it (`FileMonitor`) and reads it
/// again on every change.
public enum LexiconStore {
    /// The largest lexicon file read: 4 MiB (a larger one is refused in one line).
    public static let maximumBytes = 4 << 20

    /// `$XDG_CONFIG_HOME/lector/lexicon`.
    public static var defaultPath: String { UserDirs.config + "/lector/lexicon" }

    /// The lexicon in the file at `path` (empty when there is none), and one line per problem found in it
    /// (each problem's entry was left out; a file that cannot be read at all is one problem).
    public static func load(path: String = defaultPath) -> (Lexicon, problems: [String]) {
        let bytes: [UInt8]
        do {
            bytes = try readRegularFile(path, maximumBytes: maximumBytes, followLinks: true)
        } catch {
            return (Lexicon(), error.isFileNotFound ? [] : ["lexicon not read: \(error)"])
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            return (Lexicon(), ["lexicon not read: \(path) is not UTF-8 text"])
        }
        return LexiconFile.parse(text)
    }

    /// Writes `lexicon` to the file at `path` (its folder made if needed), replacing it at once as a whole.
    /// - Throws: `LexiconError` naming the file and why.
    public static func save(_ lexicon: Lexicon, path: String = defaultPath) throws(LexiconError) {
        let folder = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        do {
            if !folder.isEmpty { try makeDirectories(folder) }
            try writeFileAtomically(path, contents: Array(LexiconFile.encode(lexicon).utf8), mode: 0o644)
        } catch {
            throw LexiconError("cannot write \(path): \(error)")
        }
    }
}
