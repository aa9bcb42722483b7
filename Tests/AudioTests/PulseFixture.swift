import Foundation
@testable import Audio

// GLib, reached through the libraries Audio links (libpulse-mainloop-glib pulls in libglib-2.0).
@_silgen_name("g_main_context_iteration") func g_main_context_iteration(_ ctx: OpaquePointer?, _ mayBlock: Int32) -> Int32
@_silgen_name("g_main_context_new") func g_main_context_new() -> OpaquePointer?
@_silgen_name("g_main_context_unref") func g_main_context_unref(_ ctx: OpaquePointer?)

let testRate = 22050

/// A child process started with posix_spawn (Foundation's Process loses track of exits when a long-lived child
/// such as the sound server is around). Its stdout is a pipe if `captureOutput`, else a file or /dev/null.
struct Child {
    let pid: pid_t
    let output: Int32

    init(_ path: String, _ arguments: [String], environment: [String: String],
         captureOutput: Bool, logFile: String? = nil) throws {
        var fds: [Int32] = [-1, -1]
        if captureOutput {
            guard pipe(&fds) == 0 else { throw FixtureError("pipe failed") }
            for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let sink = logFile ?? "/dev/null"
        if captureOutput {
            posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, sink, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        }
        posix_spawn_file_actions_addopen(&actions, 2, sink, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, nil, argv, envp)
        if captureOutput { close(fds[1]) }
        guard result == 0 else {
            if captureOutput { close(fds[0]) }
            throw FixtureError("cannot start \(path): \(result)")
        }
        self.pid = pid
        output = captureOutput ? fds[0] : -1
    }

    /// Closes our end of its output, sends `signal` and reaps the child.
    func stop(_ signal: Int32 = SIGTERM) {
        if output >= 0 { close(output) }
        kill(pid, signal)
        reap()
    }

    /// Waits for the child to exit and closes our end of its output.
    @discardableResult
    func wait() -> Int32 {
        let status = reap()
        if output >= 0 { close(output) }
        return status
    }

    @discardableResult
    private func reap() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : -1
    }
}

/// A private PulseAudio with a mono 22,050 Hz null sink called `test`, in a temporary directory
/// (never the user's home or runtime directory).
final class PrivatePulse {
    let dir: String
    let socket: String
    let environment: [String: String]
    private var daemon: Child?

    init() throws {
        var template = Array((NSTemporaryDirectory() + "lector-audio-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw FixtureError("mkdtemp failed") }
        dir = String(cString: made)
        chmod(dir, 0o700)
        socket = dir + "/native"
        var env = ProcessInfo.processInfo.environment
        env["XDG_RUNTIME_DIR"] = dir
        env["XDG_CONFIG_HOME"] = dir + "/config"
        env["HOME"] = dir
        env["PULSE_SERVER"] = "unix:" + socket
        environment = env
        // The SoundServer under test connects to $PULSE_SERVER.
        setenv("PULSE_SERVER", "unix:" + socket, 1)
        try start()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: dir)
    }

    func start() throws {
        daemon = try Child("/usr/bin/pulseaudio", [
            "-n", "--daemonize=no", "--exit-idle-time=-1", "--use-pid-file=no", "--realtime=no",
            // POSIX shm, not memfd: PulseAudio 16 can abort when it forwards a playback stream's memfd block to
            // a client recording the monitor (PulseAudio issue 824; see scripts/with-session).
            "--high-priority=no", "--enable-memfd=no", "--log-target=stderr",
            "-L", "module-null-sink sink_name=test rate=\(testRate) channels=1",
            "-L", "module-native-protocol-unix auth-anonymous=1 socket=\(socket)",
        ], environment: environment, captureOutput: false, logFile: dir + "/pulse.log")
        let deadline = now() + 10
        while now() < deadline {
            if run("pactl", ["info"]).status == 0 { return }
            usleep(50_000)
        }
        throw FixtureError("private PulseAudio did not start")
    }

    /// Kills the server outright (SIGKILL), as a crash would.
    func kill() {
        daemon?.stop(SIGKILL)
        daemon = nil
    }

    func stop() {
        daemon?.stop()
        daemon = nil
    }

    @discardableResult
    func run(_ tool: String, _ arguments: [String]) -> (status: Int32, output: String) {
        guard let child = try? Child("/usr/bin/" + tool, arguments, environment: environment, captureOutput: true)
        else { return (-1, "") }
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(child.output, $0.baseAddress, $0.count) }
            if n > 0 { data.append(contentsOf: buffer[0..<n]) } else if n < 0 && errno == EINTR { continue } else { break }
        }
        let status = child.wait()
        return (status, String(decoding: data, as: UTF8.self))
    }
}

struct FixtureError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// `parec` on `test.monitor` (raw s16le mono at the sink's rate, 5 ms latency), read without blocking from the
/// thread that drives the main loop.
final class MonitorRecorder {
    private let child: Child
    private var leftover: [UInt8] = []
    private(set) var samples: [Int16] = []
    /// When reads arrived: (monotonic seconds, samples recorded by then).
    private(set) var arrivals: [(time: Double, count: Int)] = []

    init(_ pulse: PrivatePulse) throws {
        child = try Child("/usr/bin/parec", ["--raw", "--format=s16le", "--rate=\(testRate)", "--channels=1",
                                             "--latency-msec=5", "-d", "test.monitor"],
                          environment: pulse.environment, captureOutput: true)
        _ = fcntl(child.output, F_SETFL, fcntl(child.output, F_GETFL) | O_NONBLOCK)
    }

    deinit { child.stop(SIGKILL) }

    func poll() {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(child.output, $0.baseAddress, $0.count) }
            guard n > 0 else { return }
            leftover.append(contentsOf: buffer[0..<n])
            let whole = leftover.count / 2 * 2
            for i in stride(from: 0, to: whole, by: 2) {
                samples.append(Int16(bitPattern: UInt16(leftover[i]) | UInt16(leftover[i + 1]) << 8))
            }
            leftover.removeFirst(whole)
            arrivals.append((now(), samples.count))
        }
    }

    /// When the recorder received sample `index`.
    func arrivalTime(of index: Int) -> Double? {
        arrivals.first { $0.count > index }?.time
    }
}

/// Drives a private GMainContext (and the recorder) until `condition` holds or `timeout` seconds pass.
final class Loop {
    let context: OpaquePointer?
    var recorder: MonitorRecorder?

    init() { context = g_main_context_new() }
    deinit { g_main_context_unref(context) }

    @discardableResult
    func run(timeout: Double, until condition: () -> Bool = { false }) -> Bool {
        let deadline = now() + timeout
        while true {
            while g_main_context_iteration(context, 0) != 0 {}
            recorder?.poll()
            if condition() { return true }
            if now() >= deadline { return false }
            usleep(300)
        }
    }
}

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// The test signal: a sine sweeping from 300 to 700 Hz over `count` samples, riding on a DC offset, so that no
/// sample of it is 0 (every tone sample can be told from the null sink's digital silence) and any 64 samples of
/// it occur at exactly one place (every piece of a recording can be located in it).
func testTone(_ count: Int) -> [Int16] {
    let rate = Double(testRate), total = Double(count)
    return (0..<count).map { i in
        let n = Double(i)
        let phase = 2 * Double.pi * (300 * n + 400 * n * n / (2 * total)) / rate
        return Int16(10000 + 6000 * sin(phase))
    }
}

/// Where each run of tone in a recording comes from in the signal.
struct Piece: CustomStringConvertible {
    /// Samples of the recording.
    let recorded: Range<Int>
    /// The signal samples it holds, or nil if it is not an exact copy of any part of the signal.
    let source: Range<Int>?
    var description: String { "rec \(recorded) ← sig \(source.map { "\($0)" } ?? "??")" }
}

func locate(_ recording: [Int16], in signal: [Int16]) -> [Piece] {
    let probe = 64
    return toneRuns(recording).map { run in
        guard run.count >= probe else { return Piece(recorded: run, source: nil) }
        let head = recording[run.lowerBound..<run.lowerBound + probe]
        for start in 0...max(0, signal.count - run.count) where signal[start] == head.first! {
            if signal[start..<start + probe] == head {
                let source = start..<start + run.count
                return Piece(recorded: run, source: signal[source] == recording[run] ? source : nil)
            }
        }
        return Piece(recorded: run, source: nil)
    }
}

/// Samples of `signal` missing from the pieces (gaps between them, before the first, after the last) and
/// samples heard twice (overlaps), given pieces in order.
func accounting(_ pieces: [Piece], signalCount: Int) -> (lost: [Int], repeated: Int) {
    var lost: [Int] = []
    var repeated = 0
    var expected = 0
    for piece in pieces {
        guard let source = piece.source else { continue }
        if source.lowerBound >= expected { lost.append(source.lowerBound - expected) } else { repeated += expected - source.lowerBound }
        expected = source.upperBound
    }
    lost.append(signalCount - expected)
    return (lost, repeated)
}

/// Runs of non-zero samples in a recording (the null sink outputs exact zeros when nothing plays).
func toneRuns(_ recording: [Int16]) -> [Range<Int>] {
    var runs: [Range<Int>] = []
    var start: Int?
    for (i, s) in recording.enumerated() {
        if s != 0, start == nil { start = i }
        if s == 0, let st = start { runs.append(st..<i); start = nil }
    }
    if let st = start { runs.append(st..<recording.count) }
    return runs
}

/// 10 ms windows (220 samples at 22,050 Hz): true where the window holds any tone.
func windows(_ recording: [Int16]) -> [Bool] {
    let size = testRate / 100
    return stride(from: 0, to: recording.count, by: size).map { start in
        recording[start..<min(start + size, recording.count)].contains { $0 != 0 }
    }
}

func ms(_ samples: Int) -> Double { Double(samples) * 1000 / Double(testRate) }
