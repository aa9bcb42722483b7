import Foundation
import Testing

/// How much of the private world an end-to-end test needs ready before its first step.
enum Readiness {
    /// The bus, the sound server and the recorder; no daemon is started (tests of the command line alone,
    /// of the harness, or that start their own daemon).
    case bare
    /// A Lector daemon owns its bus name (started when none does); whatever it is doing goes on.
    case daemon
    /// A daemon owns its name, nothing is being read and the sink has been quiet for 0.2 s.
    case quiet
    /// As `.daemon`, and the daemon owns the MPRIS name too.
    case mpris
    /// As `.quiet`, and the daemon owns the MPRIS name too.
    case mprisQuiet
}

/// The private world of the running suite (its bus, sound server, recorder and Lector daemon, see
/// `PrivateSession`), made ready as `readiness` says. Every end-to-end test starts here.
/// - Throws: `HarnessError` when the suite lacks the `.privateSession` trait or the daemon does not come up.
func world(_ readiness: Readiness = .quiet) async throws -> PrivateSession {
    let session = try PrivateSession.require()
    switch readiness {
    case .bare:
        break
    case .daemon:
        try await session.ensureDaemon()
    case .quiet:
        try await session.ensureDaemon()
        try await session.quiesce()
    case .mpris:
        try await session.ensureMPRIS()
    case .mprisQuiet:
        try await session.ensureMPRIS()
        try await session.quiesce()
    }
    return session
}

/// Polls `condition` every `interval` until it holds or `timeout` seconds have passed; returns whether it held
/// (checked once more at the deadline). The one way end-to-end tests wait for something to happen.
func eventually(
    timeout: Double, every interval: Duration = .milliseconds(50), _ condition: () async throws -> Bool
) async rethrows -> Bool {
    try await poll(timeout: timeout, every: interval, condition, until: { $0 })
}

/// Polls `probe` every `interval` until its value satisfies `done` or `timeout` seconds have passed; returns the
/// last value seen (probed once more at the deadline), for messages and for checks on that value.
func poll<Value>(
    timeout: Double, every interval: Duration = .milliseconds(50), _ probe: () async throws -> Value,
    until done: (Value) -> Bool
) async rethrows -> Value {
    let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
    while ContinuousClock.now < deadline {
        let value = try await probe()
        if done(value) { return value }
        try? await Task.sleep(for: interval)
    }
    return try await probe()
}
