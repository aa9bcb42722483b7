@preconcurrency import Glibc
import GLibKit
import SpeechCore
import SystemKit

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

    /// Where `lector read`'s text is: a text in hand, or a regular file still to be read (see `source`).
    public enum Source {
        case text(Text)
        case file(OpenFile)
    }

    /// Like `text(arguments:file:)`, but a file given with `--file`, or a standard input redirected from a
    /// regular file (`< book.txt`), is opened and checked, not read: the daemon reads it from the descriptor
    /// (D-Bus SpeakFile), so a long text does not travel over the bus. A pipe (`cat book.epub | lector read`,
    /// `curl … | lector read --format html`) is read here into an unlinked temporary file (`pipedFile`) that is
    /// handed over the same way, so that a binary document on a pipe is told by its content and read as the
    /// file would be. Terminals are read here as text.
    public static func source(arguments: [String], file: String?) -> Result<Source, Failure> {
        if let file {
            guard arguments.isEmpty else { return .failure(Failure(message: "give either TEXT or --file, not both", usage: true)) }
            return openFile(file).map { .file($0) }
        }
        if arguments == ["-"] || (arguments.isEmpty && isatty(0) == 0) {
            let (size, problem) = inspect(0)
            if problem == nil {
                let fd = fcntl(0, F_DUPFD_CLOEXEC, 3)
                if fd >= 0 { return .success(.file(OpenFile(descriptor: fd, size: size, title: nil, url: nil))) }
            }
            if isatty(0) == 0 { return pipedFile().map { .file($0) } }
        }
        return text(arguments: arguments, file: nil).map { .text($0) }
    }

    /// Standard input (a pipe), read to its end (at most `maximumBytes`) into a temporary file that is unlinked
    /// at once (in `$XDG_RUNTIME_DIR`, else `$TMPDIR`, else /tmp; only this process and the daemon it is handed
    /// to hold it), open at its start. Its bytes are not decoded: a document (EPUB, PDF, …) stays intact.
    static func pipedFile() -> Result<OpenFile, Failure> {
        let bytes: [UInt8]
        switch readToEnd(0) {
        case .success(let read): bytes = read
        case .failure(.tooLarge): return .failure(Failure(message: "standard input is larger than \(maximumBytes >> 20) MiB"))
        case .failure(.failed(let why)): return .failure(Failure(message: "cannot read standard input: \(why)"))
        }
        func refuse(_ why: String) -> Result<OpenFile, Failure> { .failure(Failure(message: "cannot keep standard input: \(why)")) }
        let folders = ["XDG_RUNTIME_DIR", "TMPDIR"].compactMap { (name: String) -> String? in getenv(name).map { String(cString: $0) } }
        let folder = folders.first { !$0.isEmpty && access($0, W_OK) == 0 } ?? "/tmp"
        var template = Array((folder + "/lector-stdin-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { return refuse(String(cString: strerror(errno))) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = template.withUnsafeBufferPointer { unlink($0.baseAddress!) }
        let file = OpenFile(descriptor: fd, size: bytes.count, title: nil, url: nil)
        do throws(Errno) { try FileDescriptor(rawValue: fd).writeAll(bytes) } catch {
            return refuse(error.description)
        }
        guard lseek(fd, 0, SEEK_SET) == 0 else { return refuse(String(cString: strerror(errno))) }
        return .success(file)
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
        openFile(path).flatMap { read($0, what: path) }
    }

    /// The text of a file opened and checked by `openFile`, read from its current offset as `readFile` reads
    /// it (at most `maximumBytes`, cleaned, titled with its name, with its URI); `what` names it in the
    /// failure's message.
    public static func read(_ file: OpenFile, what: String) -> Result<Text, Failure> {
        contents(file.descriptor, size: file.size, what: what).map { decoded in
            let text = TextCleaner.clean(decoded)
            let ssml = file.title?.lowercased().hasSuffix(".ssml") == true || looksLikeSSML(text)
            return Text(text: text, title: file.title, url: file.url, ssml: ssml)
        }
    }

    /// A regular file opened for reading and checked by `openFile`, not yet read; its descriptor is closed
    /// when this is freed.
    public final class OpenFile {
        /// The open descriptor, read from its current offset (0 for a file opened by `openFile`).
        public let descriptor: Int32
        /// Its size in bytes when it was opened and checked (`fstat`).
        public let size: Int
        /// The file's name, without its folder (nil for standard input).
        public let title: String?
        /// Its `file://` URI (nil for standard input).
        public let url: String?

        init(descriptor: Int32, size: Int, title: String?, url: String?) {
            self.descriptor = descriptor
            self.size = size
            self.title = title
            self.url = url
        }

        deinit { close(descriptor) }

        /// The file's first bytes (at most `count`), read with `pread`, so the descriptor's offset does not
        /// move; empty when it cannot be read.
        public func head(_ count: Int) -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: count)
            let n = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
            return Array(bytes.prefix(max(0, n)))
        }

        /// The path of the file actually opened, symbolic links resolved: the kernel's name of the open
        /// descriptor (`/proc/self/fd/N`), which no change to the links after opening can alter; nil when it
        /// cannot be read.
        public var resolvedPath: String? {
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let n = readlink("/proc/self/fd/\(descriptor)", &buffer, buffer.count - 1)
            guard n > 0 else { return nil }
            return String(decoding: buffer.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }

        /// Whether the file is an SSML document: its name ends in `.ssml`, or its first 4 KiB look like one
        /// (`looksLikeSSML`); read with `pread`, so the descriptor's offset does not move.
        public var isSSML: Bool {
            if title?.lowercased().hasSuffix(".ssml") == true { return true }
            var head = [UInt8](repeating: 0, count: 4096)
            let offset = lseek(descriptor, 0, SEEK_CUR)
            let n = head.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, max(0, offset)) }
            guard n > 0 else { return false }
            return looksLikeSSML(String(decoding: head[0..<n], as: UTF8.self))
        }
    }

    /// Opens the file at `path` and checks it (see `readFile`) without reading it, for `lector read --file`,
    /// which hands the descriptor to the daemon (D-Bus SpeakFile) instead of sending the text.
    public static func openFile(_ path: String) -> Result<OpenFile, Failure> {
        func refuse(_ why: String) -> Result<OpenFile, Failure> { .failure(Failure(message: "cannot read \(path): \(why)")) }
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
        let (size, problem) = inspect(fd)
        if let problem {
            close(fd)
            return refuse(problem)
        }
        let base = path.split(separator: "/").last.map(String.init) ?? path
        return .success(OpenFile(descriptor: fd, size: size, title: base, url: pathToFileURI(absolute)))
    }

    /// Why the open descriptor `fd` is not a user's text, or nil: not a regular file (`fstat`), on the device
    /// of a kernel pseudo file system, or larger than `maximumBytes`.
    public static func unreadable(_ fd: Int32) -> String? {
        inspect(fd).problem
    }

    /// `unreadable`'s answer, with the file's size in bytes (`fstat`) when it is readable.
    private static func inspect(_ fd: Int32) -> (size: Int, problem: String?) {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return (0, String(cString: strerror(errno))) }
        guard (st.st_mode & S_IFMT) == S_IFREG else { return (0, "not a regular file") }
        for mount in pseudoFileSystems {
            var pseudo = stat(), parent = stat()
            let up = String(mount[..<mount.lastIndex(of: "/")!])
            // Only a mount point of its own counts (in some containers /dev is a plain folder of the root).
            if stat(mount, &pseudo) == 0, stat(up.isEmpty ? "/" : up, &parent) == 0, pseudo.st_dev != parent.st_dev,
               pseudo.st_dev == st.st_dev {
                return (0, "not a regular file (a kernel pseudo file)")
            }
        }
        guard st.st_size <= maximumBytes else { return (0, "larger than \(maximumBytes >> 20) MiB") }
        return (Int(st.st_size), nil)
    }

    /// The text of the regular file open at `fd`, read from its current offset to its end (at most
    /// `maximumBytes`) and decoded as UTF-8 with invalid sequences repaired (U+FFFD), not cleaned: the daemon
    /// cleans every text it is given (`TextCleaner.clean`); `what` names it in the failure's message. Checks
    /// `fd` with `unreadable` first, so a D-Bus client cannot hand the daemon a pipe, socket or device (whose
    /// read could block it).
    public static func read(_ fd: Int32, what: String) -> Result<String, Failure> {
        readStart(fd, what: what, limit: .max).map(\.text)
    }

    /// The start of a regular file: its whole text when it is short, else its first bytes (up to and including
    /// their last line feed) and what is needed to read the whole text later (see `readStart`).
    public struct FileStart {
        /// The text read, decoded as `read` decodes it (not cleaned).
        public var text: String
        /// When `text` is only the start of the file: the file, to read whole later (nil: `text` is all of it).
        public var rest: FileRest?
    }

    /// A file whose start was read (`readStart`), to be read whole later. Holds a duplicate of its descriptor
    /// (`F_DUPFD_CLOEXEC`), closed when this is freed.
    public final class FileRest {
        private let descriptor: Int32
        private let offset: Int
        private let what: String
        /// Bytes of the file after its start when the start was read (the file may change meanwhile).
        public let remainingBytes: Int

        init(descriptor: Int32, offset: Int, what: String, remainingBytes: Int) {
            self.descriptor = descriptor
            self.offset = offset
            self.what = what
            self.remainingBytes = remainingBytes
        }

        deinit { close(descriptor) }

        /// The whole text, read again from where the start was read (`read`: checked again, at most
        /// `maximumBytes`, UTF-8 repaired, not cleaned).
        public func readWhole() -> Result<String, Failure> {
            guard lseek(descriptor, off_t(offset), SEEK_SET) >= 0 else {
                return .failure(Failure(message: "cannot read \(what): \(String(cString: strerror(errno)))"))
            }
            return Input.read(descriptor, what: what)
        }
    }

    /// Like `read`, but of a file longer than `limit` bytes (from the descriptor's offset) only the first
    /// `limit` bytes, cut after their last line feed, are read now (with `pread`: the offset does not move), so
    /// that a long text starts being read before all of it is: the daemon reads the rest later (`FileRest`).
    /// A file whose first `limit` bytes hold no line feed is read whole. Cut after a line feed, the start
    /// decodes and cleans (`TextCleaner`) as the same bytes of the whole text do: UTF-8 sequences and CR LF
    /// pairs do not span it, ANSI CSI sequences end at a line feed (only an OSC sequence, which ends at BEL,
    /// could span it).
    public static func readStart(_ fd: Int32, what: String, limit: Int) -> Result<FileStart, Failure> {
        let (size, problem) = inspect(fd)
        if let problem { return .failure(Failure(message: "cannot read \(what): \(problem)")) }
        let offset = Int(lseek(fd, 0, SEEK_CUR))
        if offset >= 0 && size - offset > limit {
            var head = [UInt8](repeating: 0, count: limit)
            let n = head.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(offset)) }
            if n == limit, let lineFeed = head.lastIndex(of: 0x0A) {
                let copy = fcntl(fd, F_DUPFD_CLOEXEC, 3)
                if copy >= 0 {
                    let rest = FileRest(descriptor: copy, offset: offset, what: what, remainingBytes: size - offset - lineFeed - 1)
                    return .success(FileStart(text: String(decoding: head[...lineFeed], as: UTF8.self), rest: rest))
                }
            }
        }
        return contents(fd, size: size, what: what).map { FileStart(text: $0, rest: nil) }
    }

    /// `read` of a descriptor already checked, `size` bytes long when checked: straight into the string's storage
    /// (validated and repaired there: SE-0263); a file that grew since is read again in chunks.
    private static func contents(_ fd: Int32, size: Int, what: String) -> Result<String, Failure> {
        func refuse(_ why: String) -> Result<String, Failure> { .failure(Failure(message: "cannot read \(what): \(why)")) }
        var failure: String?
        var complete = false
        let file = FileDescriptor(rawValue: fd)
        let text = String(unsafeUninitializedCapacity: max(size, 1)) { buffer -> Int in
            var count = 0
            do throws(Errno) {
                while count < size {
                    let n = try file.read(into: UnsafeMutableRawBufferPointer(UnsafeMutableBufferPointer(rebasing: buffer[count..<size])))
                    if n == 0 { break }
                    count += n
                }
            } catch {
                failure = error.description
                return 0
            }
            var probe: [UInt8] = [0]
            let n = (try? file.read(into: &probe)) ?? -1
            complete = n == 0
            if n > 0 { _ = try? file.seek(offset: -Int64(count) - 1, from: .current) }
            return count
        }
        if let failure { return refuse(failure) }
        if complete { return .success(text) }
        switch readToEnd(fd) {
        case .success(let bytes): return .success(String(decoding: bytes, as: UTF8.self))
        case .failure(.tooLarge): return refuse("larger than \(maximumBytes >> 20) MiB")
        case .failure(.failed(let why)): return refuse(why)
        }
    }

    /// Why `readToEnd` stopped.
    private enum ReadFailure: Error {
        case tooLarge
        case failed(String)
    }

    /// The bytes of `fd` from its offset to its end, in 64 KiB reads; fails past `maximumBytes`.
    private static func readToEnd(_ fd: Int32) -> Result<[UInt8], ReadFailure> {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n: Int
            do throws(Errno) { n = try FileDescriptor(rawValue: fd).read(into: &chunk) } catch { return .failure(.failed(error.description)) }
            if n == 0 { return .success(bytes) }
            bytes.append(contentsOf: chunk[0..<n])
            if bytes.count > maximumBytes { return .failure(.tooLarge) }
        }
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
        switch readToEnd(0) {
        case .success(let bytes): return .success(Text(text: TextCleaner.clean(utf8: bytes)))
        case .failure(.tooLarge): return .failure(Failure(message: "standard input is larger than \(maximumBytes >> 20) MiB"))
        case .failure(.failed(let why)): return .failure(Failure(message: "cannot read standard input: \(why)"))
        }
    }

    private static func currentDirectory() -> String {
        guard let cwd = getcwd(nil, 0) else { return "" }
        defer { free(cwd) }
        return String(cString: cwd)
    }
}
