@preconcurrency import Glibc
import GLibKit

/// Why `SynthesisClient` killed a worker.
enum WorkerKill: Equatable, Sendable {
    /// It sent nothing for the client's stall limit while it had a request (a failure).
    case stalled
    /// It kept synthesizing a cancelled request (not a failure: nothing wanted is lost).
    case stuckOnCancel
    /// It sent a malformed frame (a failure).
    case malformed(String)
    /// It sent nothing but signs of life past its request's allowance (a failure; `SynthesisBudget`).
    case noProgress
    /// It sent more audio than its request's text can take (a failure), with the line saying so.
    case overran(String)
}

/// What the end of a worker means for the request it was on, pure: the one line that says why, whether it
/// counts as a failure (towards ``SynthesisClient/restartDelay(afterFailures:)``), and whether it came from
/// outside (so that a request not begun is sent once more).
struct WorkerExit: Equatable, Sendable {
    /// The line for the log and for the lost request.
    var reason: String
    /// Whether it counts as a failure.
    var failure = true
    /// A worker killed from outside (the OOM killer, a user) or frozen says nothing about the request it had
    /// not begun: that one is sent once more. A crash (SIGABRT, SIGSEGV) is the engine's own, on this input.
    var fromOutside = false

    /// The end of a worker that the client killed for `killed` (nil: it was not killed by the client) and that
    /// exited with `status`; `stallLimit` (µs) and `engine` (e.g. "eSpeak NG") are named in the line.
    init(killed: WorkerKill?, status: ExitStatus, stallLimit: Int64, engine: String) {
        switch (killed, status) {
        case (.stalled?, _):
            reason = "the synthesis engine stopped responding (nothing for \(stallLimit / 1_000) ms)"
            fromOutside = true
        case (.stuckOnCancel?, _):
            reason = "the synthesis worker was replaced"
            failure = false
        case (.malformed(let problem)?, _):
            reason = "the synthesis worker sent a malformed frame (\(problem))"
        case (.noProgress?, _):
            reason = "the synthesis worker made no progress (only empty audio frames, past the time its text may take)"
        case (.overran(let line)?, _):
            reason = line
        case (nil, .exited(let code)):
            reason = "the synthesis worker exited with status \(code)"
        case (nil, .signaled(let sig)):
            reason = sig == SIGKILL ? "the synthesis worker was killed" : "\(engine) crashed (signal \(sig))"
            fromOutside = sig == SIGKILL
        }
    }
}
