import Foundation
import Testing

/// A private desktop session for end-to-end tests: its own D-Bus session bus and its own sound server
/// whose only sink is a null sink (`lector_test`, 22050 Hz, mono), all in a fresh temporary folder,
/// following the recipe in PITFALLS.md (no system bus, no realtime, anonymous native socket). The server is
/// PulseAudio with `module-stream-restore` (as every PulseAudio desktop loads it), or, with
/// `LECTOR_TEST_SOUND_SERVER=pipewire`, PipeWire + WirePlumber + pipewire-pulse started headless (see
/// `SoundServerKind`).
///
/// Child processes get `environment`: this process's environment with DBUS_SESSION_BUS_ADDRESS,
/// PULSE_SERVER, XDG_RUNTIME_DIR, XDG_CONFIG_HOME and XDG_STATE_HOME pointing into the folder
/// (HOME is left alone), LC_ALL=C.UTF-8, and no DISPLAY or WAYLAND_DISPLAY, so that nothing reaches the real session,
/// the real home or the real screen.
///
/// `shutdown()` ends every process connected to the private bus (a Lector daemon started by
/// `lector read` included), the recorder, PulseAudio and the bus, and removes the folder. A watchdog
/// shell does the same if this test process dies first.
final class PrivateSession: @unchecked Sendable {
    /// The null sink's name; its monitor source is `lector_test.monitor`.
    static let sinkName = "lector_test"
    /// The sample rate of the sink, the recorder and Lector's stream, Hz.
    static let sampleRate = 22050

    /// The session of the suite being run (set by the `.privateSession` trait).
    @TaskLocal static var current: PrivateSession?

    /// The session of the running suite, or an error when the suite lacks the `.privateSession` trait.
    static func require() throws -> PrivateSession {
        guard let current else { throw HarnessError("no private session: add .privateSession to the suite") }
        return current
    }

    let directory: URL
    let busAddress: String
    let pulseServer: String
    let environment: [String: String]
    /// A recorder of the null sink's monitor, started with the session and running until shutdown.
    let recorder: Recorder

    private let bus: BackgroundProcess
    /// The sound server's processes (PulseAudio; or PipeWire, WirePlumber, pipewire-pulse), the one clients
    /// connect to last.
    private var pulse: [BackgroundProcess]
    private let watchdog: BackgroundProcess?
    private let lock = NSLock()
    private var daemons: [BackgroundProcess] = []
    private var daemonCount = 0

    private init(
        directory: URL, busAddress: String, pulseServer: String, environment: [String: String],
        recorder: Recorder, bus: BackgroundProcess, pulse: [BackgroundProcess], watchdog: BackgroundProcess?
    ) {
        self.directory = directory
        self.busAddress = busAddress
        self.pulseServer = pulseServer
        self.environment = environment
        self.recorder = recorder
        self.bus = bus
        self.pulse = pulse
        self.watchdog = watchdog
    }

    /// Starts the bus, PulseAudio and the recorder, and waits until each works.
    /// - Throws: `HarnessError` with the server's log when one does not come up within 10 s.
    static func start() async throws -> PrivateSession {
        let dir = try Paths.makeTemporaryDirectory(prefix: "lector-it")
        let fm = FileManager.default
        for sub in ["config", "state"] {
            try fm.createDirectory(at: dir.appendingPathComponent(sub), withIntermediateDirectories: true)
        }
        let pidsFile = dir.appendingPathComponent("pids")
        func remember(_ pid: Int32) {
            if let handle = try? FileHandle(forWritingTo: pidsFile) {
                handle.seekToEndOfFile()
                handle.write(Data("\(pid)\n".utf8))
                try? handle.close()
            }
        }
        _ = fm.createFile(atPath: pidsFile.path, contents: nil)

        var started: [BackgroundProcess] = []
        func fail(_ message: String) -> HarnessError {
            for process in started.reversed() { process.stopNow(grace: 1) }
            try? fm.removeItem(at: dir)
            return HarnessError(message)
        }

        // The watchdog: if this process dies without shutdown(), end what the session started.
        // In its own session (setsid), so that signals sent to this process group do not end it first.
        let watchdog = try? BackgroundProcess(
            "setsid", ["/bin/sh", "-c", watchdogScript, "lector-it-watchdog", String(getpid()), dir.path],
            stdoutURL: nil, stderrURL: nil)
        if let watchdog { started.append(watchdog) }

        // The session bus: --nofork keeps it our child; it prints its address once it listens.
        let bus = try BackgroundProcess(
            "dbus-daemon",
            ["--session", "--nofork", "--nopidfile", "--address=unix:path=\(dir.path)/bus", "--print-address=1"],
            stdoutURL: dir.appendingPathComponent("bus-address"), stderrURL: dir.appendingPathComponent("dbus.log"))
        started.append(bus)
        remember(bus.pid)
        let busAddress = await poll(timeout: 10, every: .milliseconds(10),
                                    { bus.stdout.trimmingCharacters(in: .whitespacesAndNewlines) },
                                    until: { !$0.isEmpty || !bus.isRunning })
        guard !busAddress.isEmpty else {
            throw fail("dbus-daemon did not come up: \(bus.stderr)")
        }

        let pulseServer = "unix:\(dir.path)/native"
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SESSION_BUS_ADDRESS"] = busAddress
        env.removeValue(forKey: "DBUS_SESSION_BUS_PID")
        env["PULSE_SERVER"] = pulseServer
        env["XDG_RUNTIME_DIR"] = dir.path
        env["XDG_CONFIG_HOME"] = dir.appendingPathComponent("config").path
        env["XDG_STATE_HOME"] = dir.appendingPathComponent("state").path
        env["LC_ALL"] = "C.UTF-8"
        env.removeValue(forKey: "LECTOR_BIN")
        // No display: a window (MPRIS Raise starts one) appears only on a test's own X server.
        env.removeValue(forKey: "DISPLAY")
        env.removeValue(forKey: "WAYLAND_DISPLAY")

        let pulse: [BackgroundProcess]
        do {
            pulse = try await launchSoundServer(directory: dir, environment: env, remember: remember)
        } catch {
            throw fail("\(error)")
        }
        started += pulse

        let recorder = Recorder(
            environment: env, file: dir.appendingPathComponent("monitor.raw"), device: "\(sinkName).monitor")
        do {
            try await recorder.start()
        } catch {
            throw fail("the recorder did not start: \(error)")
        }
        if let pid = recorder.pid { remember(pid) }

        return PrivateSession(
            directory: dir, busAddress: busAddress, pulseServer: pulseServer, environment: env,
            recorder: recorder, bus: bus, pulse: pulse, watchdog: watchdog)
    }

    /// Starts the sound server `SoundServerKind.current` names and waits until it answers.
    private static func launchSoundServer(
        directory dir: URL, environment env: [String: String], remember: (Int32) -> Void
    ) async throws -> [BackgroundProcess] {
        switch SoundServerKind.current {
        case .pulseAudio: [try await launchPulseAudio(directory: dir, environment: env, remember: remember)]
        case .pipeWire: try await launchPipeWire(directory: dir, environment: env, remember: remember)
        }
    }

    /// Starts PulseAudio with only a null sink, `module-stream-restore` (its database under the session's
    /// XDG_CONFIG_HOME) and the native protocol on the session's socket, waits until `pactl info` answers and
    /// makes the null sink the default.
    /// - Throws: `HarnessError` with the server's log when it does not come up within 10 s.
    private static func launchPulseAudio(
        directory dir: URL, environment env: [String: String], remember: (Int32) -> Void
    ) async throws -> BackgroundProcess {
        let pulse = try BackgroundProcess(
            "pulseaudio",
            [
                "-n", "--daemonize=no", "--exit-idle-time=-1", "--use-pid-file=no", "--realtime=no",
                // POSIX shm, not memfd: PulseAudio 16 can abort when it forwards a playback stream's memfd
                // block to a client recording the monitor (PulseAudio issue 824; see scripts/with-session).
                "--high-priority=no", "--enable-memfd=no", "--log-target=stderr",
                "-L", "module-null-sink sink_name=\(sinkName) rate=\(sampleRate) channels=1",
                "-L", "module-native-protocol-unix auth-anonymous=1 socket=\(dir.path)/native",
                "-L", "module-stream-restore",
            ],
            environment: env, stdoutURL: dir.appendingPathComponent("pulseaudio.out"),
            stderrURL: dir.appendingPathComponent("pulseaudio.log"))
        remember(pulse.pid)
        var ready = false
        _ = await eventually(timeout: 10, every: .milliseconds(100)) {
            let info = try? await IntegrationTests.run("pactl", ["info"], environment: env, timeout: 5, scratchDirectory: dir)
            ready = info?.status == 0
            return ready || !pulse.isRunning
        }
        guard ready else {
            pulse.stopNow(grace: 1)
            throw HarnessError("PulseAudio did not come up: \(pulse.stderr.suffix(2000))")
        }
        _ = try? await IntegrationTests.run(
            "pactl", ["set-default-sink", sinkName], environment: env, timeout: 5, scratchDirectory: dir)
        return pulse
    }

    /// The process id of the session's PulseAudio server (the current one, after a restart).
    var soundServerPID: Int32 { lock.withLock { pulse.last?.pid ?? 0 } }

    /// Ends the session's PulseAudio server with `signal` (SIGKILL: a crash) and waits until it is gone;
    /// the recorder ends with it.
    func stopSoundServer(signal: Int32 = SIGKILL) async {
        let pulse = lock.withLock { self.pulse }
        for process in pulse.reversed() { await process.stop(signal: signal, grace: 3) }
        _ = await recorder.stop()
    }

    /// Starts PulseAudio again on the same socket (same PULSE_SERVER and XDG_RUNTIME_DIR), then the recorder,
    /// whose file grows on from where it stopped.
    /// - Throws: `HarnessError` when the server or the recorder does not come up.
    func restartSoundServer() async throws {
        let dir = directory
        let pulse = try await Self.launchSoundServer(directory: dir, environment: environment) { pid in
            if let handle = try? FileHandle(forWritingTo: dir.appendingPathComponent("pids")) {
                handle.seekToEndOfFile()
                handle.write(Data("\(pid)\n".utf8))
                try? handle.close()
            }
        }
        lock.withLock { self.pulse = pulse }
        try await recorder.start()
    }

    /// Runs a tool (`pactl`, `gdbus`, `playerctl`, …) in this session and returns its result.
    func run(
        _ tool: String, _ arguments: [String], stdin: Data? = nil, timeout: Double = 30,
        environment overrides: [String: String] = [:]
    ) async throws -> ProcessResult {
        try await IntegrationTests.run(
            tool, arguments, environment: environment.merging(overrides) { $1 }, stdin: stdin, timeout: timeout,
            scratchDirectory: directory)
    }

    /// Starts a long-running child (a `lector daemon`, a `lector read --wait`) in this session.
    /// Its output goes to files in the session folder, named after `tag`.
    func spawn(_ tool: String, _ arguments: [String], tag: String, environment overrides: [String: String] = [:]) throws -> BackgroundProcess {
        let process = try BackgroundProcess(
            tool, arguments, environment: environment.merging(overrides) { $1 },
            stdoutURL: directory.appendingPathComponent("\(tag).out"),
            stderrURL: directory.appendingPathComponent("\(tag).log"))
        if let handle = try? FileHandle(forWritingTo: directory.appendingPathComponent("pids")) {
            handle.seekToEndOfFile()
            handle.write(Data("\(process.pid)\n".utf8))
            try? handle.close()
        }
        return process
    }

    /// Starts `lector daemon ARGUMENTS…` in the foreground of a child process (its log kept in the session folder),
    /// with the session's environment plus `overrides`, and waits until it owns its bus name. While a daemon it
    /// started earlier still runs, it first waits up to 5 s for that name to be free.
    /// - Throws: `HarnessError` with its log when it exits or does not own the name within 10 s.
    @discardableResult
    func startDaemon(_ arguments: [String] = [], environment overrides: [String: String] = [:]) async throws -> BackgroundProcess {
        // A daemon of an earlier test may still be exiting (tests end theirs with a detached `stop()`): a new
        // daemon started now would find the name taken, and the test would talk to the old one.
        if lock.withLock({ daemons.contains(where: \.isRunning) }) {
            _ = await eventually(timeout: 5, every: .milliseconds(20)) { await nameOwner(Lector.busName) == nil }
        }
        let n = lock.withLock { () -> Int in
            daemonCount += 1
            return daemonCount
        }
        let daemon = try spawn(Paths.lectorBinary, ["daemon"] + arguments, tag: "daemon-\(n)", environment: overrides)
        lock.withLock { daemons.append(daemon) }
        var owned = false
        _ = await eventually(timeout: 10, every: .milliseconds(20)) {
            owned = await nameOwner(Lector.busName) != nil
            return owned || !daemon.isRunning
        }
        if owned { return daemon }
        throw HarnessError(
            "lector daemon did not take \(Lector.busName) (exit \(daemon.exitStatus.map(String.init) ?? "none")): "
                + daemon.stderr.suffix(2000))
    }

    /// The end of every Lector daemon log of this session (daemons started by `startDaemon()`, and the
    /// log of one started by `lector read`), for failure messages.
    func daemonLogs(limit: Int = 1500) -> String {
        var parts: [String] = []
        for daemon in lock.withLock({ daemons }) {
            let status = daemon.exitStatus.map { "exited \($0)" } ?? "running"
            parts.append("[\(daemon.stderrURL.lastPathComponent), pid \(daemon.pid), \(status)] \(daemon.stderr.suffix(limit))")
        }
        let started = directory.appendingPathComponent("state/lector/daemon.log")
        if let log = try? String(contentsOf: started, encoding: .utf8) {
            parts.append("[state/lector/daemon.log] \(log.suffix(limit))")
        }
        return parts.isEmpty ? "(no daemon log)" : parts.joined(separator: "\n")
    }

    /// The daemon started by `startDaemon()` most recently, if it still runs.
    var runningDaemon: BackgroundProcess? {
        lock.withLock { daemons.last(where: { $0.isRunning }) }
    }

    /// Makes sure a Lector daemon owns its name: starts one when none does.
    func ensureDaemon() async throws {
        if await nameOwner(Lector.busName) == nil {
            try await startDaemon()
        }
    }

    /// The unique name owning `name` on the private bus, nil when nobody owns it.
    func nameOwner(_ name: String) async -> String? {
        guard let result = try? await run(
            "gdbus",
            ["call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
             "--method", "org.freedesktop.DBus.GetNameOwner", name], timeout: 10),
            result.status == 0
        else { return nil }
        // ('org.freedesktop.DBus' answers "(':1.4',)")
        return result.stdout.split(separator: "'").dropFirst().first.map(String.init)
    }

    /// The process ids of every connection on the private bus but the bus itself and this process.
    func busClientPIDs() async -> [Int32] {
        guard let names = try? await run(
            "gdbus",
            ["call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
             "--method", "org.freedesktop.DBus.ListNames"], timeout: 5),
            names.status == 0
        else { return [] }
        var pids: Set<Int32> = []
        for name in names.stdout.split(separator: "'") where name.hasPrefix(":") {
            guard let answer = try? await run(
                "gdbus",
                ["call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
                 "--method", "org.freedesktop.DBus.GetConnectionUnixProcessID", String(name)], timeout: 5),
                answer.status == 0,
                let pid = answer.stdout.split(separator: " ").last.flatMap({ Int32($0.filter(\.isNumber)) })  // "(uint32 1234,)"
            else { continue }
            if pid != getpid() { pids.insert(pid) }
        }
        return Array(pids)
    }

    /// Ends everything the session started, then removes its folder.
    func shutdown() async {
        for daemon in lock.withLock({ daemons }) {
            await daemon.stop(grace: 3)
        }
        // Daemons that `lector read` started detached, and anything else left on the bus.
        let strays = await busClientPIDs()
        for pid in strays { kill(pid, SIGTERM) }
        _ = await eventually(timeout: 3, every: .milliseconds(20)) { !strays.contains(where: processExists) }
        for pid in strays where processExists(pid) { kill(pid, SIGKILL) }
        _ = await recorder.stop()
        for process in lock.withLock({ pulse }).reversed() { await process.stop(grace: 3) }
        await bus.stop(grace: 3)
        try? FileManager.default.removeItem(at: directory)
        if let watchdog { await watchdog.stop(signal: SIGKILL, grace: 1) }
    }
}

/// Whether `pid` names a live process (a zombie counts as gone).
func processExists(_ pid: Int32) -> Bool {
    guard kill(pid, 0) == 0 else { return false }
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
    else { return true }
    let state = stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).prefix(1)
    return state != "Z" && state != "X"
}

/// Runs in `sh -c` with $1 = the test process id and $2 = the session folder: once the test process is
/// gone while the folder still exists, it ends the bus clients, the listed processes, and removes the folder.
private let watchdogScript = #"""
trap '' INT HUP
parent=$1 dir=$2
while kill -0 "$parent" 2>/dev/null && [ -d "$dir" ]; do sleep 1; done
[ -d "$dir" ] || exit 0
addr=$(head -n 1 "$dir/bus-address" 2>/dev/null)
if [ -n "$addr" ]; then
    for name in $(DBUS_SESSION_BUS_ADDRESS=$addr dbus-send --session --print-reply --dest=org.freedesktop.DBus \
            /org/freedesktop/DBus org.freedesktop.DBus.ListNames 2>/dev/null | sed -n 's/^ *string "\(:[^"]*\)"$/\1/p'); do
        pid=$(DBUS_SESSION_BUS_ADDRESS=$addr dbus-send --session --print-reply --dest=org.freedesktop.DBus \
            /org/freedesktop/DBus org.freedesktop.DBus.GetConnectionUnixProcessID string:"$name" 2>/dev/null \
            | sed -n 's/^ *uint32 //p')
        [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null
    done
    sleep 1
fi
for pid in $(cat "$dir/pids" 2>/dev/null); do kill -TERM "$pid" 2>/dev/null; done
sleep 1
rm -rf "$dir"
"""#

/// Runs a suite inside a fresh `PrivateSession` (one per suite, torn down after its last test).
struct PrivateSessionTrait: SuiteTrait, TestScoping {
    var isRecursive: Bool { false }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let session = try await PrivateSession.start()
        do {
            try await PrivateSession.$current.withValue(session) {
                try await function()
            }
        } catch {
            await session.shutdown()
            throw error
        }
        await session.shutdown()
    }
}

extension Trait where Self == PrivateSessionTrait {
    /// Gives the suite its own private session bus and PulseAudio null sink (see `PrivateSession`).
    static var privateSession: Self { Self() }
}
