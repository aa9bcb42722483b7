/// What one request may take of a worker that must show its progress (the Piper worker), pure: the inputs are
/// the worker's frames for the request, with the client's work clock (`WorkClock`); each returns whether it is
/// progress, so that `SynthesisClient`'s watchdog can tell a worker at work from one that only seems alive.
///
/// - **Audio.** A request gets at most ``audioLimit(text:rate:sampleRate:)`` samples: a worker that sends more
///   is misbehaving (it reads one sentence for ever otherwise), and is replaced.
/// - **Signs of life.** The Piper worker sends an empty audio frame every 100 ms while it loads a model or
///   synthesizes a clause. Such a frame is progress only while the request's time at work is within
///   ``heartbeatAllowance(scalars:loadsModel:)``: a worker that sends nothing else stays "alive" no longer, and
///   the watchdog's stall limit then applies to it.
///
/// A request's time at work runs from its first frame, on the work clock: time during which the reader held
/// the worker's output (back-pressure) is not counted, as the worker cannot send then.
struct SynthesisBudget: Equatable, Sendable {
    /// What a frame of the request is.
    enum Verdict: Equatable, Sendable {
        /// It shows progress: the watchdog's stall limit starts again.
        case progress
        /// It shows no progress (a sign of life after the allowance).
        case notProgress
        /// The request has had more audio than its text can take; with one line saying so.
        case overrun(String)
    }

    /// The rate a request is read at when no configuration says, wpm (eSpeak NG's and Lector's default).
    static let defaultRate = 175
    /// Allowed for loading a model (the first request of a worker, or of another voice), µs: as much as the
    /// worker gives itself (data/lector-piper-worker: 20 s plus its per-character part).
    static let loadAllowance: Int64 = 20_000_000
    /// Allowed to every request for synthesizing its first clause, µs.
    static let baseAllowance: Int64 = 2_000_000
    /// Allowed per scalar of the request's text, µs: about 6 times what Piper takes on one busy core (a
    /// real-time factor of 0.3 at 57 ms of speech per character, at 175 wpm).
    static let allowancePerScalar: Int64 = 100_000

    /// How long signs of life count as progress for a request of `scalars` scalars, µs of time at work.
    static func heartbeatAllowance(scalars: Int, loadsModel: Bool) -> Int64 {
        (loadsModel ? loadAllowance : 0) + baseAllowance + Int64(scalars) * allowancePerScalar
    }

    /// Seconds of speech a scalar may take at 175 wpm, at most: letters, digits, spaces and punctuation 0.4 s
    /// (capitals spelled out, numbers read digit by digit, pauses at commas), symbols 3 s (an emoji or `∑` is
    /// read by its name). About 7 times `SentenceDurations`' estimate (6 scalars a word) for ordinary text.
    static func secondsAtMost(_ scalar: Unicode.Scalar) -> Double {
        switch scalar.properties.generalCategory {
        case .mathSymbol, .currencySymbol, .modifierSymbol, .otherSymbol: return 3
        default: return 0.4
        }
    }

    /// The most audio a request for `text` read at `rate` wpm may have, in samples at `sampleRate` Hz: 5 s and
    /// the sentence pause (0.2 s), plus ``secondsAtMost(_:)`` for each scalar, at the rate's length scale (Piper
    /// takes 80 to 450 wpm, as the worker clamps it; 175 is the model's own pace).
    static func audioLimit(text: some StringProtocol, rate: Int, sampleRate: Int) -> Int {
        var seconds = 5.2
        for scalar in text.unicodeScalars { seconds += secondsAtMost(scalar) }
        let scale = 175 / Double(max(80, min(450, rate)))
        return Int(min(seconds * scale * Double(sampleRate), Double(Int32.max)))
    }

    /// When a request's first frame came (work clock µs), and how long signs of life count from then (µs).
    struct Start: Equatable, Sendable {
        var at: Int64
        var allowance: Int64
    }

    /// The most audio the request may have, samples.
    let audioLimit: Int
    /// The rate of its audio, Hz.
    let sampleRate: Int
    /// The scalars of its text.
    let scalars: Int
    /// The samples received so far.
    private(set) var samples = 0
    /// When its first frame came; nil before.
    private(set) var begun: Start?

    /// The budget of a request for `text` at `rate` wpm, audio at `sampleRate` Hz.
    init(text: some StringProtocol, rate: Int, sampleRate: Int) {
        audioLimit = Self.audioLimit(text: text, rate: rate, sampleRate: sampleRate)
        self.sampleRate = sampleRate
        scalars = text.unicodeScalars.count
    }

    /// Whether the request has had a frame since `restart()`.
    var hasBegun: Bool { begun != nil }

    /// The request's first frame (from a new worker, see `restart`) comes at work clock `now`; `loadsModel`:
    /// the worker must load a model for it. Later calls change nothing.
    mutating func begin(at now: Int64, loadsModel: Bool) {
        guard begun == nil else { return }
        begun = Start(at: now, allowance: Self.heartbeatAllowance(scalars: scalars, loadsModel: loadsModel))
    }

    /// The request is sent to a new worker: it begins again (its audio so far was never delivered whole: the
    /// request had not started, or it was lost).
    mutating func restart() {
        begun = nil
        samples = 0
    }

    /// An empty audio frame at work clock `now`: progress within the allowance (or before `begin`).
    func heartbeat(at now: Int64) -> Verdict {
        guard let begun else { return .progress }
        return now - begun.at <= begun.allowance ? .progress : .notProgress
    }

    /// `count` samples of audio: progress, or an overrun once the request has had more than `audioLimit`.
    mutating func audio(_ count: Int) -> Verdict {
        samples += count
        guard samples > audioLimit else { return .progress }
        let seconds = (audioLimit + sampleRate / 2) / max(1, sampleRate)
        return .overrun("the synthesis worker sent more audio than its text can take (over \(seconds) s for \(scalars) characters)")
    }
}

/// The time during which a worker could send: monotonic µs, less the spans during which the reader held its
/// output (`SynthesisClient.holding`). Pure.
struct WorkClock: Equatable, Sendable {
    private var total: Int64 = 0
    /// When the current span of not holding began; nil while holding.
    private var since: Int64?

    /// A clock at 0 at monotonic `now`, running.
    init(now: Int64) { since = now }

    /// The reader holds the worker's output from monotonic `now` (again: nothing changes).
    mutating func hold(at now: Int64) {
        guard let since else { return }
        total += now - since
        self.since = nil
    }

    /// The reader takes the worker's output again from monotonic `now`.
    mutating func release(at now: Int64) {
        if since == nil { since = now }
    }

    /// The clock's reading at monotonic `now`, µs.
    func reading(at now: Int64) -> Int64 { total + (since.map { now - $0 } ?? 0) }
}
