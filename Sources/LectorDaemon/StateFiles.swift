import GLibKit
import LectorCommon

/// The limits and the line format of the files the daemon keeps in `$XDG_STATE_HOME/lector/` and reads back
/// when it starts (`reading`, `text`, `bookmarks`, `ducked`), and of the configuration file.
///
/// Every one of them is read with `readRegularFile`: not through a symbolic link (the configuration
/// excepted, see `Configuration`), never blocking on a FIFO, a regular file only, at most the limit below.
/// What is refused is one log line, and the daemon starts without it. Each limit is also what the daemon
/// writes at most, so that what it writes, it reads back.
enum StateFiles {
    /// Largest `reading` file read back, in bytes (4 MiB): a dozen short lines, and `title` and `url`, each at
    /// most `maximumFieldBytes` once escaped.
    static let maximumReadingBytes = 4 << 20

    /// Largest value of `title` or `url` written to `reading`, in bytes once escaped (1 MiB): a longer one is
    /// shortened on write, at a Unicode scalar's boundary (the text and its position are still kept whole).
    static let maximumFieldBytes = 1 << 20

    /// Largest `text` file read back, in bytes: its first line (`lector-text 1 KEY`, at most 4 KiB) and the
    /// cleaned text. A text read from a file or standard input is at most `Input.maximumBytes` (32 MiB) as
    /// given, and cleaning can make it at most 3 times longer (each invalid byte becomes U+FFFD, 3 bytes).
    /// A longer text (only `Speak` can pass one) is not kept, with one log line.
    static let maximumTextBytes = 3 * Input.maximumBytes + 4096

    /// Largest configuration file read, in bytes (1 MiB).
    static let maximumConfigurationBytes = 1 << 20

    /// `value` with what would break a line-based file escaped: `\` as `\\`, line feed as `\n`, carriage
    /// return as `\r`, tab as `\t`, and every other C0 control character and DEL as `\xHH`; everything else
    /// as is. At most `maximumBytes` of UTF-8: the value is cut before the first scalar that does not fit.
    static func escape(_ value: String, maximumBytes: Int = .max) -> String {
        var result = ""
        var bytes = 0
        for scalar in value.unicodeScalars {
            let piece: String
            switch scalar {
            case "\\": piece = "\\\\"
            case "\n": piece = "\\n"
            case "\r": piece = "\\r"
            case "\t": piece = "\\t"
            case "\u{0}"..."\u{1F}", "\u{7F}":
                let hex = String(scalar.value, radix: 16, uppercase: true)
                piece = "\\x" + (hex.count < 2 ? "0" : "") + hex
            default: piece = String(scalar)
            }
            bytes += piece.utf8.count
            if bytes > maximumBytes { break }
            result += piece
        }
        return result
    }

    /// The value `escape` was given: `\\`, `\n`, `\r`, `\t` and `\xHH` decoded; a backslash that starts none
    /// of them is kept as it is (files written before values were escaped read back unchanged).
    static func unescape<S: StringProtocol>(_ escaped: S) -> String {
        guard escaped.contains("\\") else { return String(escaped) }
        let scalars = Array(escaped.unicodeScalars)
        var result = String.UnicodeScalarView()
        var i = 0
        while i < scalars.count {
            let scalar = scalars[i]
            i += 1
            guard scalar == "\\", i < scalars.count else {
                result.append(scalar)
                continue
            }
            switch scalars[i] {
            case "\\": result.append("\\")
            case "n": result.append("\n")
            case "r": result.append("\r")
            case "t": result.append("\t")
            case "x" where i + 2 < scalars.count:
                let digits = String(String.UnicodeScalarView(scalars[(i + 1)...(i + 2)]))
                guard let value = UInt8(digits, radix: 16), digits.allSatisfy(\.isHexDigit) else {
                    result.append(scalar)
                    continue
                }
                result.append(Unicode.Scalar(value))
                i += 2
            default:
                result.append(scalar)
                continue
            }
            i += 1
        }
        return String(result)
    }

    /// The `key value` lines of `bytes` (UTF-8, invalid sequences repaired): each line split at its first
    /// space (a line without one has the value ""), values unescaped when `escaped` (see `unescape`); the
    /// last line with a key wins. Lines are separated by line feeds only.
    static func fields(_ bytes: [UInt8], escaped: Bool) -> [String: String] {
        var fields: [String: String] = [:]
        for line in bytes.split(separator: 10) {
            let space = line.firstIndex(of: 32) ?? line.endIndex
            let key = String(decoding: line[..<space], as: UTF8.self)
            let raw = space < line.endIndex ? String(decoding: line[(space + 1)...], as: UTF8.self) : ""
            fields[key] = escaped ? unescape(raw) : raw
        }
        return fields
    }

    /// Reads a file Lector keeps, at most `maximumBytes` (see `readRegularFile`): nil when it does not exist.
    /// - Throws: `GLibError` when it exists but cannot be read back, its message one line naming the file.
    static func read(_ path: String, maximumBytes: Int) throws(GLibError) -> [UInt8]? {
        do { return try readRegularFile(path, maximumBytes: maximumBytes) } catch {
            if error.isFileNotFound { return nil }
            throw error
        }
    }
}
