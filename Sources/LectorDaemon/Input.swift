@preconcurrency import Glibc
import GLibKit
import SpeechCore

/// Where `lector read` gets its text: arguments, `--file`, or standard input (`-`, or no text and a
/// standard input that is not a terminal). Bytes are decoded as UTF-8 with invalid sequences repaired
/// (U+FFFD) before anything reaches GLib or D-Bus.
enum Input {
    /// Largest text accepted from a file or standard input (32 MiB).
    static let maximumBytes = 32 << 20

    /// `ssml`: the file is an SSML document (its name ends in `.ssml`, or it starts with an XML prolog or
    /// `<speak>`; see `SSMLDocument.looksLikeSSML`).
    struct Text { var text: String; var title: String?; var url: String?; var ssml = false }
    struct Failure: Error { var message: String; var usage = false }

    static func text(arguments: [String], file: String?) -> Result<Text, Failure> {
        if let file {
            guard arguments.isEmpty else { return .failure(Failure(message: "give either TEXT or --file, not both", usage: true)) }
            return readFile(file)
        }
        if arguments == ["-"] || (arguments.isEmpty && isatty(0) == 0) {
            return readStandardInput()
        }
        guard !arguments.isEmpty else {
            return .failure(Failure(message: "nothing to read: give TEXT, --file FILE, or text on standard input", usage: true))
        }
        return .success(Text(text: arguments.joined(separator: " ")))
    }

    /// The text of the regular file at `path` (at most `maximumBytes`), cleaned, titled with its name, with
    /// its `file://` URI. Shared by `lector read --file` and MPRIS `OpenUri`.
    static func readFile(_ path: String) -> Result<Text, Failure> {
        var st = stat()
        guard stat(path, &st) == 0 else {
            return .failure(Failure(message: "cannot read \(path): \(String(cString: strerror(errno)))"))
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else { return .failure(Failure(message: "cannot read \(path): not a regular file")) }
        guard st.st_size <= maximumBytes else {
            return .failure(Failure(message: "cannot read \(path): larger than \(maximumBytes >> 20) MiB"))
        }
        let bytes: [UInt8]
        do { bytes = try GLibKit.readFile(path) } catch {
            return .failure(Failure(message: "cannot read \(path): \(error)"))
        }
        let base = path.split(separator: "/").last.map(String.init) ?? path
        let absolute = path.hasPrefix("/") ? path : currentDirectory() + "/" + path
        let text = TextCleaner.clean(utf8: bytes)
        let ssml = base.lowercased().hasSuffix(".ssml") || SSMLDocument.looksLikeSSML(text)
        return .success(Text(text: text, title: base, url: pathToFileURI(absolute), ssml: ssml))
    }

    private static func readStandardInput() -> Result<Text, Failure> {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(0, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return .failure(Failure(message: "cannot read standard input: \(String(cString: strerror(errno)))")) }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
            if bytes.count > maximumBytes {
                return .failure(Failure(message: "standard input is larger than \(maximumBytes >> 20) MiB"))
            }
        }
        return .success(Text(text: TextCleaner.clean(utf8: bytes)))
    }

    private static func currentDirectory() -> String {
        guard let cwd = getcwd(nil, 0) else { return "" }
        defer { free(cwd) }
        return String(cString: cwd)
    }
}
