import Foundation

// Child processes are started with posix_spawn and reaped with waitpid, not with Foundation's `Process`:
// under the test runner, `Process` did not notice children exiting (they stayed zombies and `isRunning`
// stayed true), and its children inherited a signal mask blocking SIGTERM, so servers could not be stopped.
// Here every child starts with an empty signal mask and default signal dispositions.

/// What a finished child process left: its exit status and its output.
struct ProcessResult: Sendable, CustomStringConvertible {
    /// The exit status; 128 + N when it was killed by signal N; -1 when it had to be killed after the timeout.
    var status: Int32
    var stdoutData: Data
    var stderrData: Data
    /// Wall-clock seconds from launch to exit.
    var seconds: Double
    var timedOut: Bool

    /// Standard output decoded as UTF-8 (invalid bytes repaired to U+FFFD).
    var stdout: String { String(decoding: stdoutData, as: UTF8.self) }
    /// Standard error decoded as UTF-8 (invalid bytes repaired to U+FFFD).
    var stderr: String { String(decoding: stderrData, as: UTF8.self) }
    /// The lines of standard error, without empty trailing ones.
    var stderrLines: [Substring] {
        Array(stderr.split(separator: "\n", omittingEmptySubsequences: false).reversed()
            .drop(while: { $0.isEmpty }).reversed())
    }

    var description: String {
        "status \(status)\(timedOut ? " (timed out)" : "") after \(String(format: "%.3f", seconds)) s; "
            + "stdout: \(stdout.debugDescription.prefix(400)); stderr: \(stderr.debugDescription.prefix(800))"
    }
}

/// A temporary file for a child's input or output, in `directory` (the system's temporary folder when nil).
private func scratchFile(_ tag: String, in directory: URL? = nil) -> URL {
    (directory ?? FileManager.default.temporaryDirectory).appendingPathComponent("lector-it-\(tag)-\(UUID().uuidString)")
}

/// Seconds in a `Duration`.
func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// Starts `executable` (looked up on PATH) with standard input from `stdinPath` and output appended to
/// `stdoutPath`/`stderrPath`, an empty signal mask and default signal handlers. Returns its pid.
private func spawn(
    _ executable: String, _ arguments: [String], environment: [String: String]?,
    stdinPath: String, stdoutPath: String, stderrPath: String
) throws -> pid_t {
    guard let path = Paths.executable(executable) else {
        throw HarnessError("\(executable): not found (PATH=\(ProcessInfo.processInfo.environment["PATH"] ?? ""))")
    }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, stdinPath, O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, O_WRONLY | O_CREAT | O_APPEND, 0o600)
    posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_APPEND, 0o600)

    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var empty = sigset_t()
    sigemptyset(&empty)
    posix_spawnattr_setsigmask(&attributes, &empty)
    var all = sigset_t()
    sigfillset(&all)
    posix_spawnattr_setsigdefault(&attributes, &all)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

    let env = environment ?? ProcessInfo.processInfo.environment
    let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
    let envp: [UnsafeMutablePointer<CChar>?] = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
        argv.forEach { free($0) }
        envp.forEach { free($0) }
    }
    var pid: pid_t = 0
    let rc = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
    guard rc == 0 else {
        throw HarnessError("posix_spawn \(path): \(String(cString: strerror(rc)))")
    }
    return pid
}

/// Decodes a waitpid status: the exit code, or 128 + N for signal N.
private func decodeWaitStatus(_ status: Int32) -> Int32 {
    let signal = status & 0x7f
    return signal == 0 ? (status >> 8) & 0xff : 128 + signal
}

/// Runs `executable` with `arguments` to its end and returns its status and output.
///
/// - Parameters:
///   - environment: the child's whole environment (nil: this process's).
///   - stdin: bytes for its standard input; nil gives it `/dev/null` (not a terminal).
///   - timeout: seconds after which it is killed (SIGKILL) and `timedOut` is set.
///   - scratchDirectory: where its input and output files are kept while it runs (default: the system's
///     temporary folder).
/// - Throws: `HarnessError` when the executable is missing or cannot be started.
func run(
    _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
    stdin: Data? = nil, timeout: Double = 30, scratchDirectory: URL? = nil
) async throws -> ProcessResult {
    let outURL = scratchFile("out", in: scratchDirectory), errURL = scratchFile("err", in: scratchDirectory)
    var inPath = "/dev/null"
    var inURL: URL?
    defer {
        try? FileManager.default.removeItem(at: outURL)
        try? FileManager.default.removeItem(at: errURL)
        if let inURL { try? FileManager.default.removeItem(at: inURL) }
    }
    if let stdin {
        let url = scratchFile("in", in: scratchDirectory)
        try stdin.write(to: url)
        inURL = url
        inPath = url.path
    }
    let start = ContinuousClock.now
    let pid = try spawn(
        executable, arguments, environment: environment, stdinPath: inPath, stdoutPath: outURL.path,
        stderrPath: errURL.path)
    var timedOut = false
    var status: Int32 = 0
    while true {
        let r = waitpid(pid, &status, WNOHANG)
        if r == pid || (r < 0 && errno != EINTR) { break }
        if ContinuousClock.now - start > .milliseconds(Int(timeout * 1000)) {
            kill(pid, SIGKILL)
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            timedOut = true
            break
        }
        try? await Task.sleep(for: .milliseconds(2))  // reaping without blocking a thread: polled
    }
    return ProcessResult(
        status: timedOut ? -1 : decodeWaitStatus(status),
        stdoutData: (try? Data(contentsOf: outURL)) ?? Data(),
        stderrData: (try? Data(contentsOf: errURL)) ?? Data(),
        seconds: seconds(ContinuousClock.now - start), timedOut: timedOut)
}

/// A long-running child (a server, a recorder, a daemon) whose output goes to files.
final class BackgroundProcess: @unchecked Sendable {
    let name: String
    let pid: pid_t
    let stdoutURL: URL
    let stderrURL: URL
    private let lock = NSLock()
    private var status: Int32?

    /// Starts `executable` with `arguments`; standard input is `/dev/null`.
    /// Output is appended to `stdoutURL`/`stderrURL` (`/dev/null` when nil).
    init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        stdoutURL: URL? = nil, stderrURL: URL? = nil
    ) throws {
        name = executable
        self.stdoutURL = stdoutURL ?? URL(fileURLWithPath: "/dev/null")
        self.stderrURL = stderrURL ?? URL(fileURLWithPath: "/dev/null")
        pid = try spawn(
            executable, arguments, environment: environment, stdinPath: "/dev/null",
            stdoutPath: self.stdoutURL.path, stderrPath: self.stderrURL.path)
    }

    /// The exit status once it has ended (128 + N for signal N), nil while it runs. Reaps it.
    var exitStatus: Int32? {
        lock.withLock {
            if status == nil {
                var raw: Int32 = 0
                if waitpid(pid, &raw, WNOHANG) == pid { status = decodeWaitStatus(raw) }
            }
            return status
        }
    }

    var isRunning: Bool { exitStatus == nil }
    var stdout: String { String(decoding: (try? Data(contentsOf: stdoutURL)) ?? Data(), as: UTF8.self) }
    var stderr: String { String(decoding: (try? Data(contentsOf: stderrURL)) ?? Data(), as: UTF8.self) }

    /// Sends `signal` to it while it runs.
    func signal(_ signal: Int32) {
        if isRunning { kill(pid, signal) }
    }

    /// Waits up to `timeout` seconds for it to end; returns its status, or nil when it still runs.
    func waitForExit(timeout: Double) async -> Int32? {
        _ = await eventually(timeout: timeout, every: .milliseconds(5)) { !isRunning }
        return exitStatus
    }

    /// Sends `signal`, waits up to `grace` seconds, then kills it (SIGKILL) if it still runs.
    @discardableResult
    func stop(signal: Int32 = SIGTERM, grace: Double = 3) async -> Int32 {
        if isRunning {
            kill(pid, signal)
            if await waitForExit(timeout: grace) == nil {
                kill(pid, SIGKILL)
                _ = await waitForExit(timeout: 5)
            }
        }
        return exitStatus ?? -1
    }

    /// The same as `stop` without suspending, for teardown paths that cannot await.
    func stopNow(signal: Int32 = SIGTERM, grace: Double = 3) {
        guard isRunning else { return }
        kill(pid, signal)
        let deadline = Date().addingTimeInterval(grace)
        while isRunning && Date() < deadline { usleep(5_000) }
        if isRunning {
            kill(pid, SIGKILL)
            let hard = Date().addingTimeInterval(5)
            while isRunning && Date() < hard { usleep(5_000) }
        }
    }
}
