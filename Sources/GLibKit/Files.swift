@preconcurrency import Glibc
import CGio
import SystemKit

/// Takes ownership of a `g_malloc`ed C string: copies it into a `String` and frees it.
func takeString(_ pointer: UnsafeMutablePointer<CChar>?) -> String? {
    guard let pointer else { return nil }
    defer { g_free(pointer) }
    return String(cString: pointer)
}

/// Reads a whole file into memory (`g_file_get_contents`).
///
/// - Throws: `GLibError` in the `G_FILE_ERROR` domain ("g-file-error-quark") when the file cannot be
///   opened or read; its message names the file.
public func readFile(_ path: String) throws(GLibError) -> [UInt8] {
    var contents: UnsafeMutablePointer<CChar>?
    var length: Int = 0
    var error: UnsafeMutablePointer<GError>?
    guard g_file_get_contents(path, &contents, &length, &error) != 0, let contents else {
        throw GLibError(consuming: error!)
    }
    defer { g_free(contents) }
    return contents.withMemoryRebound(to: UInt8.self, capacity: length) {
        Array(UnsafeBufferPointer(start: $0, count: length))
    }
}

/// Reads back a file Lector keeps or is configured by, without trusting what is at `path`: opened with
/// `O_NOFOLLOW` (a symbolic link is refused, unless `followLinks`), `O_NONBLOCK` (a FIFO cannot block the
/// caller), `O_CLOEXEC` and `O_NOCTTY`; the open descriptor is checked with `fstat` (a regular file, so no
/// device such as `/dev/zero`, no FIFO, socket or directory, and no file swapped in after a check) and its
/// size capped at `maximumBytes`, before and while it is read (a file that grows meanwhile is refused too).
///
/// - Parameters:
///   - maximumBytes: the largest file accepted, in bytes; each kind of file names its own limit.
///   - followLinks: follow a symbolic link at `path` itself (for a file the user writes, such as the
///     configuration, which dotfile managers install as a link); the target is checked the same way.
///     Links in the folders above `path` are always followed.
/// - Returns: the file's bytes, at most `maximumBytes` of them.
/// - Throws: `GLibError` in the `G_FILE_ERROR` domain ("g-file-error-quark"), its message one line naming
///   the file and why: `G_FILE_ERROR_NOENT` when it does not exist (see `GLibError.isFileNotFound`),
///   `G_FILE_ERROR_LOOP` for a link that is not followed, `G_FILE_ERROR_FAILED` for what is not a regular
///   file and for a file larger than `maximumBytes`, the code of `errno` (`g_file_error_from_errno`) for
///   any other failure to open or read.
public func readRegularFile(_ path: String, maximumBytes: Int, followLinks: Bool = false) throws(GLibError) -> [UInt8] {
    func failure(_ message: String, errno code: Errno? = nil) -> GLibError {
        let fileError = code.map { g_file_error_from_errno($0.rawValue) } ?? G_FILE_ERROR_FAILED
        return GLibError(domain: "g-file-error-quark", code: Int32(fileError.rawValue), message: "\(path): \(message)")
    }
    func failure(_ code: Errno) -> GLibError {
        failure(String(cString: g_strerror(code.rawValue)), errno: code)
    }
    let flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | (followLinks ? 0 : O_NOFOLLOW)
    let fd: FileDescriptor
    do throws(Errno) { fd = try FileDescriptor.open(path, flags) } catch {
        if error == .tooManySymbolicLinks && !followLinks { throw failure("a symbolic link, which is not followed", errno: error) }
        throw failure(error)
    }
    defer { try? fd.close() }
    let status: FileStatus
    do throws(Errno) { status = try fd.status() } catch { throw failure(error) }
    let kind: String? = switch status.kind {
    case .regular: nil
    case .directory: "a directory"
    case .fifo: "a FIFO"
    case .characterDevice: "a character device"
    case .blockDevice: "a block device"
    case .socket: "a socket"
    case .symbolicLink, .unknown: "of an unknown kind"
    }
    if let kind { throw failure("not a regular file (\(kind))") }
    let limit = "larger than the \(byteCount(maximumBytes)) this file may have"
    guard status.size <= maximumBytes else { throw failure(limit) }

    // One byte more than expected, to see the end; grown only for a file that grows (or a kernel file that
    // reports no size), up to one byte past the limit.
    var buffer = [UInt8](repeating: 0, count: Int(status.size) + 1)
    var filled = 0
    while true {
        if filled == buffer.count {
            guard buffer.count <= maximumBytes else { throw failure(limit) }
            buffer.append(contentsOf: repeatElement(0, count: min(max(buffer.count, 4096), maximumBytes + 1 - buffer.count)))
        }
        let n: Int
        do throws(Errno) { n = try fd.read(into: &buffer, at: filled) } catch {
            throw error == .wouldBlock ? failure("reading it would block", errno: error) : failure(error)
        }
        if n == 0 { break }
        filled += n
    }
    buffer.removeLast(buffer.count - filled)
    return buffer
}

/// `bytes` for people: "512 bytes", "64 KiB", "32 MiB" (whole units only when exact, else bytes).
func byteCount(_ bytes: Int) -> String {
    if bytes >= 1 << 20 && bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
    if bytes >= 1 << 10 && bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
    return "\(bytes) bytes"
}

/// Replaces the file at `path` with `contents` atomically: the data goes to a new temporary file in the same
/// folder (`path` + `.XXXXXX`, `g_mkstemp_full`), which is then renamed over `path` (`rename(2)` is atomic),
/// so a reader, or a crash of this process, sees the old file or the new one, never a part of either.
/// The temporary file is created new (`O_CREAT | O_EXCL | O_NOFOLLOW`: never through a link or a file planted
/// in advance), and `rename(2)` replaces a link at `path` itself rather than writing where it points.
/// The file gets permissions `mode` (e.g. 0o600). A missing parent folder is made first (mode 0700,
/// `g_mkdir_with_parents`).
///
/// Unlike `g_file_set_contents_full` with `G_FILE_SET_CONTENTS_CONSISTENT`, it does not `fsync` unless
/// `durable` is set: an fsync can take a long time on a busy disk, and callers on the main loop must not
/// block. Without it, a power loss (not a crash of the process) may lose the latest version.
///
/// - Throws: `GLibError` in the `G_FILE_ERROR` domain when the folder is missing or not writable, or a
///   write fails; its message names the file.
public func writeFileAtomically(_ path: String, contents: [UInt8], mode: Int32 = 0o600, durable: Bool = false) throws(GLibError) {
    func failure(_ what: String, _ code: Errno = .current) -> GLibError {
        GLibError(domain: "g-file-error-quark", code: Int32(g_file_error_from_errno(code.rawValue).rawValue),
                  message: "cannot \(what) \(path): \(String(cString: g_strerror(code.rawValue)))")
    }
    if let slash = path.lastIndex(of: "/"), slash != path.startIndex {
        _ = g_mkdir_with_parents(String(path[..<slash]), 0o700)
    }
    var template = Array((path + ".XXXXXX").utf8CString)
    let fd = FileDescriptor(rawValue: template.withUnsafeMutableBufferPointer {
        g_mkstemp_full($0.baseAddress, O_WRONLY | O_CLOEXEC | O_NOFOLLOW, mode)
    })
    guard fd.rawValue >= 0 else { throw failure("create a temporary file for") }
    let temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    func abandon(_ what: String, _ code: Errno) -> GLibError {
        try? fd.close()
        unlink(temporary)
        return failure(what, code)
    }
    do throws(Errno) { try fd.writeAll(contents) } catch { throw abandon("write", error) }
    if durable && fsync(fd.rawValue) != 0 { throw abandon("sync", .current) }
    do throws(Errno) { try fd.close() } catch {
        unlink(temporary)
        throw failure("write", error)
    }
    guard rename(temporary, path) == 0 else {
        let error = failure("replace")
        unlink(temporary)
        throw error
    }
}

/// What `fileTest(_:_:)` checks (`GFileTest`).
public enum FileTest: Sendable {
    /// `G_FILE_TEST_EXISTS`: the path exists (following symbolic links).
    case exists
    /// `G_FILE_TEST_IS_REGULAR`: a regular file (following symbolic links).
    case isRegular
    /// `G_FILE_TEST_IS_DIR`: a directory (following symbolic links).
    case isDirectory
    /// `G_FILE_TEST_IS_EXECUTABLE`: executable by the current user.
    case isExecutable
    /// `G_FILE_TEST_IS_SYMLINK`: a symbolic link itself.
    case isSymlink
}

/// Tests a path (`g_file_test`); false when the path does not exist.
public func fileTest(_ path: String, _ test: FileTest) -> Bool {
    let flag: GFileTest = switch test {
    case .exists: G_FILE_TEST_EXISTS
    case .isRegular: G_FILE_TEST_IS_REGULAR
    case .isDirectory: G_FILE_TEST_IS_DIR
    case .isExecutable: G_FILE_TEST_IS_EXECUTABLE
    case .isSymlink: G_FILE_TEST_IS_SYMLINK
    }
    return g_file_test(path, flag) != 0
}

/// The XDG base directories of the user (XDG Base Directory Specification, via GLib).
/// Paths are absolute; the directories may not exist yet.
public enum UserDirs {
    /// `$XDG_RUNTIME_DIR`, or GLib's fallback (the cache directory) when unset (`g_get_user_runtime_dir`).
    public static var runtime: String { String(cString: g_get_user_runtime_dir()) }
    /// `$XDG_STATE_HOME` or `~/.local/state` (`g_get_user_state_dir`).
    public static var state: String { String(cString: g_get_user_state_dir()) }
    /// `$XDG_CONFIG_HOME` or `~/.config` (`g_get_user_config_dir`).
    public static var config: String { String(cString: g_get_user_config_dir()) }
    /// `$XDG_CACHE_HOME` or `~/.cache` (`g_get_user_cache_dir`).
    public static var cache: String { String(cString: g_get_user_cache_dir()) }
    /// `$XDG_DATA_HOME` or `~/.local/share` (`g_get_user_data_dir`).
    public static var data: String { String(cString: g_get_user_data_dir()) }
    /// The home folder (`g_get_home_dir`).
    public static var home: String { String(cString: g_get_home_dir()) }
}

/// The names in the folder at `path`, without `.` and `..`, in no particular order (`g_dir_open`,
/// `g_dir_read_name`); empty when it does not exist or cannot be read.
public func directoryEntries(_ path: String) -> [String] {
    guard let dir = g_dir_open(path, 0, nil) else { return [] }
    defer { g_dir_close(dir) }
    var names: [String] = []
    while let name = g_dir_read_name(dir) { names.append(String(cString: name)) }
    return names
}

/// Creates the folder at `path` and its parents, mode 0700 for new ones (`g_mkdir_with_parents`).
/// - Throws: `Errno` when a folder cannot be made.
public func makeDirectories(_ path: String) throws(Errno) {
    guard g_mkdir_with_parents(path, 0o700) == 0 else { throw Errno(rawValue: errno) }
}

/// The value of the environment variable `name`, or nil when unset (`g_getenv`).
public func environment(_ name: String) -> String? {
    g_getenv(name).map { String(cString: $0) }
}

/// The local path of a `file://` URI, percent-decoded (`g_filename_from_uri`); nil for other schemes, a
/// remote host, or a malformed URI.
public func fileURIToPath(_ uri: String) -> String? {
    takeString(g_filename_from_uri(uri, nil, nil))
}

/// The host a `file:` URI names (`file://host/path`, `g_filename_from_uri`'s hostname); nil for none
/// (`file:///path`) or for a URI that is not a valid `file:` URI.
public func fileURIHost(_ uri: String) -> String? {
    var host: UnsafeMutablePointer<gchar>?
    guard let path = g_filename_from_uri(uri, &host, nil) else { return nil }
    g_free(path)
    return takeString(host)
}

/// The `file://` URI of an absolute path, percent-encoded (`g_filename_to_uri`); nil for a relative path.
public func pathToFileURI(_ path: String) -> String? {
    takeString(g_filename_to_uri(path, nil, nil))
}

/// The absolute path of the running executable: `/proc/self/exe` resolved (`g_file_read_link`), or
/// `argv[0]` when that fails.
public func executablePath() -> String {
    takeString(g_file_read_link("/proc/self/exe", nil)) ?? CommandLine.arguments.first ?? ""
}

/// The absolute path of the program `name` as a shell would find it on `PATH` (`g_find_program_in_path`);
/// nil when there is none.
public func findProgramInPath(_ name: String) -> String? {
    takeString(g_find_program_in_path(name))
}

/// `text` quoted for a shell (`g_shell_quote`: in single quotes, a quote inside written `'\''`), so that
/// `g_shell_parse_argv` and /bin/sh read it back as one word.
public func shellQuoted(_ text: String) -> String {
    takeString(g_shell_quote(text)) ?? "''"
}

/// The folder of the running executable (`executablePath()` without its last component; "." when it has none).
public func executableDirectory() -> String {
    let exe = executablePath()
    return exe.lastIndex(of: "/").map { String(exe[..<$0]) } ?? "."
}

/// Where Lector's executable `name` (`lector-daemon`, `lector-window`, `lector-document`) is looked for, in
/// order: beside the running one (a build folder, or both installed in PREFIX/libexec/lector), then
/// `../libexec/lector/` from it (where `meson install` puts them, with `lector` in PREFIX/bin).
public func siblingExecutableCandidates(_ name: String) -> [String] {
    let dir = executableDirectory()
    return [dir + "/" + name, dir + "/../libexec/lector/" + name]
}

/// The first of `siblingExecutableCandidates(name)` that is an executable regular file; nil when none is.
public func siblingExecutable(_ name: String) -> String? {
    siblingExecutableCandidates(name).first { access($0, X_OK) == 0 && fileTest($0, .isRegular) }
}

/// Removes the file at `path` (`unlink(2)`); true when it was removed, false when it did not exist or could not be.
@discardableResult
public func removeFile(_ path: String) -> Bool {
    unlink(path) == 0
}
