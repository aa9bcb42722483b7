import CGio
import SystemKit

/// How a child process ended (`g_subprocess_get_if_exited` / `g_subprocess_get_if_signaled`).
public enum ExitStatus: Equatable, Sendable {
    /// It exited with this status code (0–255).
    case exited(Int32)
    /// A signal killed it (e.g. 9 for SIGKILL).
    case signaled(Int32)
}

/// A child process started through `GSubprocess` (GIO Reference Manual, "GSubprocess"), with stdin and
/// stdout connected to pipes and stderr inherited from this process.
///
/// The pipes are in blocking mode and close-on-exec. Writing to `stdinFD` after the child exited raises
/// SIGPIPE unless the process ignores it (GIO's socket code sets SIGPIPE to SIG_IGN once a D-Bus connection
/// exists). Dropping the object neither kills the child nor cancels `onExit`.
public final class ChildProcess {
    private let process: OpaquePointer
    private let stdinStream: UnsafeMutablePointer<GOutputStream>?
    private let stdoutStream: UnsafeMutablePointer<GInputStream>

    /// The write end of the child's stdin pipe; owned by this object (closed by `closeStdin()` or when the
    /// object goes away); -1 for a child started with `init(argv:standardInput:)`.
    public let stdinFD: FileDescriptor
    /// The read end of the child's stdout pipe; owned by this object (closed when the object goes away).
    public let stdoutFD: FileDescriptor

    /// Starts `argv` (`g_subprocess_newv`); `argv[0]` is looked up in `PATH` when it has no slash.
    ///
    /// - Throws: `GLibError` in the `G_SPAWN_ERROR` domain when the program cannot be started (e.g.
    ///   "Failed to execute child process “x” (No such file or directory)").
    public init(argv: [String]) throws(GLibError) {
        guard !argv.isEmpty else {
            throw GLibError(domain: "g-exec-error-quark", code: 0, message: "No program to start")
        }
        let flags = GSubprocessFlags(G_SUBPROCESS_FLAGS_STDIN_PIPE.rawValue | G_SUBPROCESS_FLAGS_STDOUT_PIPE.rawValue)
        var error: UnsafeMutablePointer<GError>?
        let created = withCStringArray(argv) { g_subprocess_newv($0, flags, &error) }
        guard let created else { throw GLibError(consuming: error!) }
        process = created
        let input = g_object_ref(g_subprocess_get_stdin_pipe(created)).assumingMemoryBound(to: GOutputStream.self)
        stdinStream = input
        stdoutStream = g_object_ref(g_subprocess_get_stdout_pipe(created)).assumingMemoryBound(to: GInputStream.self)
        stdinFD = FileDescriptor(rawValue: g_unix_output_stream_get_fd(UnsafeMutableRawPointer(input).assumingMemoryBound(to: GUnixOutputStream.self)))
        stdoutFD = FileDescriptor(rawValue: g_unix_input_stream_get_fd(UnsafeMutableRawPointer(stdoutStream).assumingMemoryBound(to: GUnixInputStream.self)))
    }

    /// Starts `argv` as `init(argv:)` does, but with `standardInput` (a descriptor this object takes and closes,
    /// e.g. an open file) as the child's stdin instead of a pipe (`g_subprocess_launcher_take_stdin_fd`), and
    /// `environment` set in the child's environment besides this process's.
    ///
    /// - Throws: `GLibError` when the program cannot be started; `standardInput` is closed then too.
    public init(argv: [String], standardInput: Int32, environment: [String: String] = [:]) throws(GLibError) {
        guard !argv.isEmpty else {
            close(standardInput)
            throw GLibError(domain: "g-exec-error-quark", code: 0, message: "No program to start")
        }
        let launcher = g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDOUT_PIPE)!
        defer { g_object_unref(UnsafeMutableRawPointer(launcher)) }
        g_subprocess_launcher_take_stdin_fd(launcher, standardInput)
        for (name, value) in environment { g_subprocess_launcher_setenv(launcher, name, value, 1) }
        var error: UnsafeMutablePointer<GError>?
        let created = withCStringArray(argv) { g_subprocess_launcher_spawnv(launcher, $0, &error) }
        guard let created else { throw GLibError(consuming: error!) }
        process = created
        stdinStream = nil
        stdoutStream = g_object_ref(g_subprocess_get_stdout_pipe(created)).assumingMemoryBound(to: GInputStream.self)
        stdinFD = FileDescriptor(rawValue: -1)
        stdoutFD = FileDescriptor(rawValue: g_unix_input_stream_get_fd(UnsafeMutableRawPointer(stdoutStream).assumingMemoryBound(to: GUnixInputStream.self)))
    }

    deinit {
        if let stdinStream { g_object_unref(stdinStream) }
        g_object_unref(stdoutStream)
        g_object_unref(UnsafeMutableRawPointer(process))
    }

    /// The child's process ID, or 0 once it has exited and been reaped (`g_subprocess_get_identifier`).
    public var pid: Int32 {
        guard let identifier = g_subprocess_get_identifier(process) else { return 0 }
        return Int32(String(cString: identifier)) ?? 0
    }

    /// Calls `body` once on the main loop when the child ends (`g_subprocess_wait_async`). May be called
    /// more than once; each body is called.
    public func onExit(_ body: @escaping (ExitStatus) -> Void) {
        let box = Unmanaged.passRetained(ExitWaiter(body)).toOpaque()
        g_subprocess_wait_async(process, nil, { source, result, pointer in
            let waiter = Unmanaged<ExitWaiter>.fromOpaque(pointer!).takeRetainedValue()
            let process = OpaquePointer(source)
            _ = g_subprocess_wait_finish(process, result, nil)
            let status: ExitStatus
            if g_subprocess_get_if_signaled(process) != 0 {
                status = .signaled(g_subprocess_get_term_sig(process))
            } else {
                status = .exited(g_subprocess_get_exit_status(process))
            }
            waiter.body(status)
        }, box)
    }

    /// Kills the child with SIGKILL (`g_subprocess_force_exit`); nothing happens if it already exited.
    public func kill() {
        g_subprocess_force_exit(process)
    }

    /// Closes the write end of the child's stdin (`g_output_stream_close`), so the child reads end of file.
    /// Safe to call twice.
    public func closeStdin() {
        if let stdinStream { _ = g_output_stream_close(stdinStream, nil, nil) }
    }
}

private final class ExitWaiter {
    let body: (ExitStatus) -> Void
    init(_ body: @escaping (ExitStatus) -> Void) { self.body = body }
}

/// Calls `body` with a NULL-terminated `char **` copy of `strings`, valid for the duration of the call.
func withCStringArray<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let copies = strings.map { g_strdup($0) }
    defer { copies.forEach { g_free($0) } }
    let pointers = copies.map { UnsafePointer($0) } + [nil]
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
