/// When a Piper voice is read by Piper, when it falls back to eSpeak NG, and when the Piper worker is given
/// back, pure: `EngineRouter` gives it what happened (a request for a voice, a voice that cannot be used, a
/// request lost, the Piper requests still pending, the idle timer) and carries out the actions returned.
///
/// - **Fallback.** A voice that cannot be used (the worker answers `failed`: no piper-tts, a missing or broken
///   model; or a voice not installed) falls back at once; a voice whose requests are lost
///   ``failuresAllowed`` times (the worker crashed, hung, sent only signs of life or more audio than a text
///   can take, exited) falls back at the last of them, and that request is read by eSpeak NG. Either gives one
///   log line, and from then on the voice's language is read with its eSpeak NG voice. A voice that fell back
///   is tried again once its files change (`Piper.files(of:)`: the model or its `.onnx.json` replaced or
///   added), as a voice newly installed.
/// - **Piper as a whole.** A Piper worker that cannot be started gives up Piper for the daemon's life, with one
///   line.
/// - **Idle.** The worker is ended ``idle`` ms (``idleMilliseconds``) after the last Piper request left (answered, cancelled,
///   lost or sent to eSpeak NG instead: whatever ended it).
struct PiperSupervisor: Sendable {
    /// How long the Piper worker stays with nothing to do before it is ended, ms: it holds its model (about
    /// 200 MB), and a start costs about a second (bench: Piper rows).
    static let idleMilliseconds: UInt32 = 60_000
    /// The idle time of this supervisor, ms (``idleMilliseconds`` but in tests).
    let idle: UInt32
    /// A voice whose requests are lost this many times falls back to eSpeak NG at the last of them.
    static let failuresAllowed = 2

    /// What `EngineRouter` carries out.
    enum Action: Equatable, Sendable {
        /// One warning line for the log.
        case log(String)
        /// End the Piper worker after `milliseconds` unless told otherwise (replacing any earlier timer).
        case armIdle(milliseconds: UInt32)
        /// A Piper request is pending: the idle timer is off.
        case cancelIdle
        /// End the Piper worker now.
        case endWorker
    }

    /// Why a voice is read by eSpeak NG, and its files then (`Piper.files(of:)`; nil when it was not installed).
    struct Refusal: Equatable, Sendable {
        var reason: String
        var files: String?
    }

    /// Voices read by eSpeak NG instead, by identifier.
    private(set) var refused: [String: Refusal] = [:]
    /// Requests lost per voice (cleared when its files change).
    private(set) var failures: [String: Int] = [:]
    /// Why Piper cannot be used at all; nil while it may.
    private(set) var piperProblem: String?

    /// A supervisor whose worker is ended `idle` ms after its last request.
    init(idle: UInt32 = PiperSupervisor.idleMilliseconds) { self.idle = idle }

    /// Whether a request for `voice`, whose files are `files` now, goes to Piper. A voice refused for files
    /// that have changed since is tried again (nothing is logged until it fails again).
    mutating func usesPiper(_ voice: String, files: String?) -> Bool {
        guard piperProblem == nil else { return false }
        guard let refusal = refused[voice] else { return true }
        guard files != nil, refusal.files != files else { return false }
        refused[voice] = nil
        failures[voice] = nil
        return true
    }

    /// `voice` cannot be used (`reason`, one line; its files `files`): its language is read with eSpeak NG's
    /// `fallback` from now on. One log line the first time.
    mutating func unusable(_ voice: String, reason: String, files: String?, fallback: String) -> [Action] {
        guard refused[voice] == nil else { return [] }
        refused[voice] = Refusal(reason: reason, files: files)
        return [.log("\(reason); reading with eSpeak NG's \(fallback) instead")]
    }

    /// A request of `voice` was lost (`reason`). Returns whether that request is to be read by eSpeak NG's
    /// `fallback` (the voice has now failed ``failuresAllowed`` times and falls back, with one line) rather
    /// than skipped.
    mutating func lost(_ voice: String, reason: String, files: String?, fallback: String) -> (reread: Bool, actions: [Action]) {
        guard refused[voice] == nil, piperProblem == nil else { return (true, []) }
        let count = failures[voice, default: 0] + 1
        failures[voice] = count
        guard count >= Self.failuresAllowed else { return (false, []) }
        let line = "the Piper worker failed \(count) times with \(voice) (last: \(reason))"
        return (true, unusable(voice, reason: line, files: files, fallback: fallback))
    }

    /// The Piper worker cannot be started (`reason`): no Piper voice is read by Piper again.
    mutating func piperUnavailable(_ reason: String) -> [Action] {
        guard piperProblem == nil else { return [] }
        piperProblem = reason
        return [.log("Piper voices cannot be used: \(reason); reading with eSpeak NG voices instead"), .endWorker]
    }

    /// Piper requests pending now (the router's count: sent to the Piper worker and not answered).
    private(set) var pending = 0

    /// The router now has `count` Piper requests pending (`workerRuns`: it has a Piper worker). The idle timer
    /// is armed when the last one left, and only then: eSpeak NG's requests do not keep the worker.
    mutating func piperRequests(_ count: Int, workerRuns: Bool) -> [Action] {
        defer { pending = count }
        if count > 0 { return pending == 0 ? [.cancelIdle] : [] }
        return pending > 0 && workerRuns ? [.armIdle(milliseconds: idle)] : []
    }

    /// The idle timer fired with `pending` Piper requests.
    func idleFired(pending: Int) -> [Action] {
        pending == 0 ? [.endWorker] : []
    }
}
