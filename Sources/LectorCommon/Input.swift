@preconcurrency import Glibc
import GLibKit
import SpeechCore

/// Where `lector read` gets its text: arguments, `--file`, or standard input (`-`, or no text and a
/// standard input that is not a terminal). Bytes are decoded as UTF-8 with invalid sequences repaired
/// (U+FFFD) before anything reaches GLib or D-Bus.
public enum Input {
    /// Largest text accepted from a file or standard input (32 MiB).
    public static let maximumBytes = 32 << 20

    /// A text to read: `text` cleaned (`TextCleaner.clean`), `title` the file's name, `url` its `file://`
    /// URI, `ssml` whether it is an SSML document (its name ends in `.ssml`, or it starts with an XML prolog or
    /// `<speak>`; see `looksLikeSSML`).
    public struct Text {
        public var text: String
        public var title: String?
        public var url: String?
        public var ssml = false
    }
    /// Why there is no text: one line; `usage` when the command line was wrong (exit status 2).
    public struct Failure: Error {
        public var message: String
        public var usage = false
    }

    /// The text of `lector read`: `file`'s (see `readFile`), else standard input's when `arguments` is `["-"]`
    /// or empty with a standard input that is not a terminal, else the arguments joined by spaces.
    public static func text(arguments: [String], file: String?) -> Result<Text, Failure> {
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

    /// Mount points of the kernel's pseudo file systems (proc, sysfs, devtmpfs, debugfs, tracefs, cgroup,
    /// securityfs): a file on the same device as one of them is not a user's text.
    static let pseudoFileSystems = ["/proc", "/sys", "/dev", "/sys/kernel/debug", "/sys/kernel/tracing",
                                    "/sys/fs/cgroup", "/sys/kernel/security"]

    /// The text of the regular file at `path` (at most `maximumBytes`), cleaned, titled with its name, with
    /// its `file://` URI. Shared by `lector read --file` and MPRIS `OpenUri` (which reads in the daemon, so
    /// this is what stands between a D-Bus client and the daemon's files and devices).
    ///
    /// Refused, each with one line: paths in or resolving into `/proc`, `/sys` or `/dev`; anything that is
    /// not a regular file once opened (directories, FIFOs, sockets, devices: opened with `O_NONBLOCK`, so a
    /// FIFO without a writer cannot block, then checked with `fstat` on the open descriptor, so the file
    /// cannot be swapped between the check and the read); files on the device of a pseudo file system;
    /// files larger than `maximumBytes` (checked before and while reading).
    public static func readFile(_ path: String) -> Result<Text, Failure> {
        func refuse(_ why: String) -> Result<Text, Failure> { .failure(Failure(message: "cannot read \(path): \(why)")) }
        let absolute = path.hasPrefix("/") ? path : currentDirectory() + "/" + path
        var candidates = [absolute]
        if let resolved = realpath(absolute, nil) {
            candidates.append(String(cString: resolved))
            free(resolved)
        }
        for candidate in candidates {
            let normalized = "/" + candidate.split(separator: "/").filter { $0 != "." }.joined(separator: "/")
            for root in ["/proc", "/sys", "/dev"] where normalized == root || normalized.hasPrefix(root + "/") {
                return refuse("not a regular file (\(root) is not read)")
            }
        }
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { return refuse(String(cString: strerror(errno))) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { return refuse(String(cString: strerror(errno))) }
        guard (st.st_mode & S_IFMT) == S_IFREG else { return refuse("not a regular file") }
        for mount in pseudoFileSystems {
            var pseudo = stat(), parent = stat()
            let up = String(mount[..<mount.lastIndex(of: "/")!])
            // Only a mount point of its own counts (in some containers /dev is a plain folder of the root).
            if stat(mount, &pseudo) == 0, stat(up.isEmpty ? "/" : up, &parent) == 0, pseudo.st_dev != parent.st_dev,
               pseudo.st_dev == st.st_dev {
                return refuse("not a regular file (a kernel pseudo file)")
            }
        }
        guard st.st_size <= maximumBytes else { return refuse("larger than \(maximumBytes >> 20) MiB") }

        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(st.st_size))
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return refuse(String(cString: strerror(errno))) }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
            if bytes.count > maximumBytes { return refuse("larger than \(maximumBytes >> 20) MiB") }
        }
        let base = path.split(separator: "/").last.map(String.init) ?? path
        let text = TextCleaner.clean(utf8: bytes)
        let ssml = base.lowercased().hasSuffix(".ssml") || looksLikeSSML(text)
        return .success(Text(text: text, title: base, url: pathToFileURI(absolute), ssml: ssml))
    }

    /// Whether `text` is an SSML document rather than plain text: it starts (after a byte order mark and white
    /// space) with `<speak`, or with an XML prolog, comment or DOCTYPE followed by `<speak` within 4 KiB
    /// (SSML 1.1, W3C Recommendation, section 2.1: the root element is `speak`).
    public static func looksLikeSSML(_ text: String) -> Bool {
        var head = Substring(text.prefix(4096))
        head = head.drop { $0 == "\u{FEFF}" || $0.isWhitespace }
        guard head.hasPrefix("<") else { return false }
        if head.hasPrefix("<speak") { return true }
        guard head.hasPrefix("<?xml") || head.hasPrefix("<!--") || head.hasPrefix("<!DOCTYPE") else { return false }
        return head.contains("<speak")
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
