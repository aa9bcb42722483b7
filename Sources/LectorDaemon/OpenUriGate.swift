@preconcurrency import Glibc
import GLibKit
import LectorCommon

/// Gathers what `OpenPolicy` judges for MPRIS `OpenUri`: who the caller is (its credentials, asked of the bus
/// without blocking) and what the named file is (opened and checked by `Input.openFile`, then its resolved
/// path, content type and first bytes), and reads the file when the policy allows it.
final class OpenUriGate {
    /// Asks the bus for the credentials of a unique name (`GetConnectionCredentials`) and calls back on the
    /// main loop with its answer's out-arguments, or the error.
    typealias CredentialsLookup = (_ sender: String, _ done: @escaping (Result<[Variant], DBusError>) -> Void) -> Void

    private let lookup: CredentialsLookup
    /// The daemon's user id.
    private let ownUserID = UInt32(getuid())
    /// The daemon's own LSM label (`/proc/self/attr/current`), nil when no LSM labels processes.
    private let ownLabel: String? = (try? readFile("/proc/self/attr/current")).flatMap(CallerCredentials.label)

    init(lookup: @escaping CredentialsLookup) {
        self.lookup = lookup
    }

    /// The D-Bus error for a refusal by the policy.
    static func denied(_ message: String) -> DBusError {
        DBusError(name: "org.freedesktop.DBus.Error.AccessDenied", message: message)
    }

    /// Finds out who `sender` is and calls `done` with it, on the main loop, later (never from within this
    /// call). A caller whose credentials the bus does not give is `.unidentified`.
    func identify(_ sender: String, _ done: @escaping (Caller) -> Void) {
        guard !sender.isEmpty else {
            MainContext.idle { done(.unidentified("the call has no sender")) }
            return
        }
        lookup(sender) { [ownUserID, ownLabel] answer in
            switch answer {
            case .failure(let error):
                done(.unidentified("the bus gave no credentials: \(error.message)"))
            case .success(let arguments):
                let credentials = CallerCredentials(arguments.first?.dictionary ?? [:])
                done(Caller.classify(credentials, ownUserID: ownUserID, ownLabel: ownLabel, root: Self.inspectRoot))
            }
        }
    }

    /// What the root of process `pid` holds: `/.flatpak-info`, which Flatpak mounts read-only into every app's
    /// sandbox (and its D-Bus proxy's), is how xdg-desktop-portal recognises a Flatpak app; the app cannot
    /// remove it. Looked at through `/proc/PID/root`, so it is the root the process sees.
    static func inspectRoot(_ pid: UInt32) -> Caller.RootFacts {
        let root = "/proc/\(pid)/root/"
        var st = stat()
        guard stat(root, &st) == 0 else {
            return .unreadable("cannot look at its process \(pid): \(String(cString: strerror(errno)))")
        }
        if access(root + ".flatpak-info", F_OK) == 0 { return .flatpakInfo }
        guard errno == ENOENT else {
            return .unreadable("cannot look at its process \(pid): \(String(cString: strerror(errno)))")
        }
        return .plain
    }

    /// The text of the file at `path` if the policy allows a caller that may name files to read it: opened
    /// and checked by `Input.openFile` (regular, not in /proc, /sys, /dev, at most 32 MiB), then judged by
    /// `OpenPolicy.decide(file:)` from the open descriptor, then read from it (so what is judged is what is
    /// read).
    /// - Returns: the text, or the D-Bus error: Failed for a file that cannot be read, AccessDenied for one
    ///   the policy refuses.
    static func read(path: String) -> Result<Input.Text, DBusError> {
        open(path: path).flatMap { file in Input.read(file, what: path).mapError { .failed($0.message) } }
    }

    /// The file at `path`, opened and checked by `Input.openFile` and allowed by the policy, not yet read (a
    /// document is read from it by the document worker).
    static func open(path: String) -> Result<Input.OpenFile, DBusError> {
        let file: Input.OpenFile
        switch Input.openFile(path) {
        case .success(let opened): file = opened
        case .failure(let failure): return .failure(.failed(failure.message))
        }
        let facts = self.facts(of: file, path: path)
        if case .refused(let why) = OpenPolicy.decide(file: facts) { return .failure(denied(why)) }
        return .success(file)
    }

    /// The facts of an open file that the policy judges.
    static func facts(of file: Input.OpenFile, path: String) -> FileFacts {
        let absolute = file.url.flatMap(fileURIToPath) ?? path
        let head = file.head(OpenPolicy.sniffedBytes)
        let byName = ContentType.guess(fileName: file.title, data: head)
        let byData = head.isEmpty ? byName : ContentType.guess(fileName: nil, data: head)
        var st = stat()
        let links = fstat(file.descriptor, &st) == 0 ? Int(st.st_nlink) : Int.max
        return FileFacts(path: absolute, resolvedPath: file.resolvedPath,
                         contentType: byName, contentTypeIsText: ContentType.isA(byName, "text/plain"),
                         dataContentType: byData, dataContentTypeIsText: ContentType.isA(byData, "text/plain"),
                         holdsPrivateKey: OpenPolicy.holdsPrivateKey(head), linkCount: links)
    }
}
