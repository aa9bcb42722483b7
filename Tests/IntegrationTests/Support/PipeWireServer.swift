import Foundation
import Glibc
import Testing

/// The sound server the end-to-end tests run against, chosen by `LECTOR_TEST_SOUND_SERVER`: `pipewire` for
/// PipeWire + WirePlumber + pipewire-pulse, anything else (or nothing) for PulseAudio.
enum SoundServerKind: Sendable {
    case pulseAudio
    case pipeWire

    /// The kind this test process runs against.
    static let current: SoundServerKind =
        ProcessInfo.processInfo.environment["LECTOR_TEST_SOUND_SERVER"] == "pipewire" ? .pipeWire : .pulseAudio
}

extension PrivateSession {
    /// Starts PipeWire (with the null sink `lector_test` as a node of its own configuration, driving the graph),
    /// WirePlumber (its state, such as `wireplumber/restore-stream`, under the session's XDG_STATE_HOME) and
    /// pipewire-pulse (listening on the session's `native` socket, as PulseAudio does in the other world), all
    /// headless, with the session's XDG_RUNTIME_DIR and XDG_CONFIG_HOME. Waits until `pactl info` names the null
    /// sink the default, which WirePlumber's policy does once it runs.
    /// - Returns: the three processes, pipewire-pulse last.
    /// - Throws: `HarnessError` with the logs when the servers do not come up within 10 s.
    static func launchPipeWire(
        directory dir: URL, environment env: [String: String], remember: (Int32) -> Void
    ) async throws -> [BackgroundProcess] {
        let config = dir.appendingPathComponent("config")
        let fm = FileManager.default
        for (folder, file, text) in [
            ("pipewire/pipewire.conf.d", "10-lector-test.conf", pipeWireSink),
            ("pipewire/pipewire-pulse.conf.d", "10-lector-test.conf", pipeWirePulseSocket(dir)),
        ] {
            let folderURL = config.appendingPathComponent(folder)
            try fm.createDirectory(at: folderURL, withIntermediateDirectories: true)
            try Data(text.utf8).write(to: folderURL.appendingPathComponent(file))
        }
        // A PipeWire killed by SIGKILL leaves its socket behind: WirePlumber started against it gives up at once.
        for stale in ["pipewire-0", "pipewire-0.lock", "pipewire-0-manager", "pipewire-0-manager.lock"] {
            try? fm.removeItem(at: dir.appendingPathComponent(stale))
        }
        var processes: [BackgroundProcess] = []
        for (tool, arguments) in [("pipewire", [String]()), ("wireplumber", []), ("pipewire-pulse", [])] {
            let process = try BackgroundProcess(
                tool, arguments, environment: env, stdoutURL: dir.appendingPathComponent("\(tool).out"),
                stderrURL: dir.appendingPathComponent("\(tool).log"))
            remember(process.pid)
            processes.append(process)
            if tool == "pipewire" {
                // WirePlumber and pipewire-pulse give up when PipeWire's socket is not there yet.
                _ = await eventually(timeout: 5, every: .milliseconds(20)) {
                    unixSocketAccepts(dir.appendingPathComponent("pipewire-0").path) || !process.isRunning
                }
            }
        }
        var ready = false
        _ = await eventually(timeout: 10, every: .milliseconds(100)) {
            let info = try? await IntegrationTests.run("pactl", ["info"], environment: env, timeout: 5, scratchDirectory: dir)
            ready = info.map { $0.status == 0 && $0.stdout.contains("Default Sink: \(sinkName)") } ?? false
            return ready || processes.contains(where: { !$0.isRunning })
        }
        guard ready else {
            for process in processes.reversed() { process.stopNow(grace: 1) }
            let logs = processes.map { "[\($0.stderrURL.lastPathComponent)] \($0.stderr.suffix(800))" }
            throw HarnessError("PipeWire did not come up: \(logs.joined(separator: "\n"))")
        }
        return processes
    }

    /// WirePlumber's remembered stream state (`restore-stream` in the session's XDG_STATE_HOME): its lines
    /// `KEY=VALUE`, e.g. `Output/Audio:application.name:Music:channelVolumes` → `0.512;0.512;`.
    var wirePlumberStreamState: [String: String] {
        let url = directory.appendingPathComponent("state/wireplumber/restore-stream")
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return [:] }
        var state: [String: String] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("[") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            state[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return state
    }
}

/// The null sink, a driver of its own (no sound card drives the graph), 22050 Hz mono as in the PulseAudio world.
private let pipeWireSink = """
    context.objects = [
      { factory = adapter
        args = { factory.name = support.null-audio-sink node.name = \(PrivateSession.sinkName)
                 media.class = Audio/Sink audio.rate = \(PrivateSession.sampleRate) audio.channels = 1
                 audio.position = [ MONO ] object.linger = true node.driver = true priority.driver = 30000
                 monitor.channel-volumes = true } }
    ]
    """

/// pipewire-pulse listens on the session's socket too (besides `$XDG_RUNTIME_DIR/pulse/native`).
private func pipeWirePulseSocket(_ dir: URL) -> String {
    """
    pulse.properties = { server.address = [ "unix:\(dir.path)/native" ] }
    """
}

/// Whether a connection to the Unix socket at `path` is accepted now (the file alone may be a dead server's, or
/// bound but not yet listening).
private func unixSocketAccepts(_ path: String) -> Bool {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        raw.copyBytes(from: bytes)
        raw[bytes.count] = 0
    }
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
        }
    }
}
