import GLibKit
import LectorCommon
import SpeechCore
import Synthesis

/// eSpeak NG and Piper behind one `SpeechEngine`: each request goes to the engine of the voice configured
/// for it (`piper:NAME` to the Piper worker, anything else to eSpeak NG's), and the frames come back in the
/// order of the requests, as the reading core expects, whichever engine answers first (frames of a request
/// behind one still being synthesized wait here; a sentence's worth at most, two requests are in flight).
///
/// - **One worker per engine.** Each is a `SynthesisClient` with its own watchdog, restarts and retries:
///   a crash or hang of the Piper worker costs one sentence, exactly as eSpeak NG's does. The Piper worker's
///   client is budgeted (`SynthesisBudget`): a request's audio is bounded by its text, and signs of life count
///   only within an allowance.
/// - **Policy** (`PiperSupervisor`): a Piper voice that cannot be used (no `piper-tts` or ONNX Runtime, a
///   missing, truncated or mismatched model; the worker answers `failed`), an unknown Piper voice, and a voice
///   whose requests were lost twice fall back to eSpeak NG with one log line (the request that found out is
///   read with eSpeak NG at once); a Piper worker that cannot start gives up Piper. The Piper worker holds its
///   model (about 200 MB): it is ended a minute after the last Piper request left, whatever ended it.
/// - **Pitch** is not a Piper control: asking a Piper voice for another pitch gives one log line per voice.
final class EngineRouter: SpeechEngine {
    var onFrame: ((WorkerFrame) -> Void)?
    var onLost: ((_ tag: UInt32, _ reason: String) -> Void)?
    var onUnavailable: ((_ reason: String) -> Void)?
    var holding = false {
        didSet {
            espeak.holding = holding
            piper?.holding = holding
        }
    }

    /// How long the Piper worker may stay idle before it is ended, ms: `PiperSupervisor.idleMilliseconds`, or
    /// `LECTOR_TEST_PIPER_IDLE_MS` (for the end-to-end tests; nothing in Lector sets it).
    static let piperIdleMilliseconds: UInt32 = environment("LECTOR_TEST_PIPER_IDLE_MS").flatMap { UInt32($0) }
        ?? PiperSupervisor.idleMilliseconds
    /// The Piper worker is taken for hung after this long without a frame while it has work, µs: it sends an
    /// empty audio frame every 100 ms while it loads a model or synthesizes (see data/lector-piper-worker).
    static let piperStallLimit: Int64 = 2_000_000

    private enum Route { case espeak, piper }
    private enum Event {
        case frame(WorkerFrame)
        case lost(String)
        var isLast: Bool {
            switch self {
            case .lost, .frame(.end), .frame(.failed): return true
            case .frame: return false
            }
        }
    }
    private struct Request {
        let tag: UInt32
        var route: Route
        let text: String
        let ssml: Bool
        let voice: String
        let rate: Int
        let pitch: Int
    }

    private let espeak: SynthesisClient
    private var piper: SynthesisClient?
    /// The rate of all audio delivered, in Hz: eSpeak NG's; the Piper worker is asked to resample to it.
    let sampleRate: Int
    /// The Piper voice with an identifier (`piper:NAME`), if installed.
    private let piperVoice: (String) -> Voice?
    /// The eSpeak NG voice identifier to read a BCP 47 language with.
    private let espeakVoice: (String) -> String
    /// Requests not answered yet, in the order asked.
    private var order: [Request] = []
    /// Frames of requests behind the first, by tag, waiting for their turn.
    private var waiting: [UInt32: [Event]] = [:]
    private var configured = (voice: "", rate: SpeakOptions.defaultRate, pitch: SpeakOptions.defaultPitch)
    /// When Piper reads, falls back, and is given back.
    private var supervisor = PiperSupervisor(idle: EngineRouter.piperIdleMilliseconds)
    private var pitchWarned: Set<String> = []
    private let idle = OneShotTimer()

    /// A router over eSpeak NG's worker (`espeak`) and, when a Piper voice is first asked for, the Piper
    /// worker (`Piper.workerArgv`), asked to produce eSpeak NG's rate (`espeak.sampleRate`). `piperVoice`
    /// finds an installed Piper voice by identifier; `espeakVoice` gives the eSpeak NG voice identifier for a
    /// language tag.
    init(espeak: SynthesisClient, piperVoice: @escaping (String) -> Voice?,
         espeakVoice: @escaping (String) -> String) {
        self.espeak = espeak
        self.sampleRate = espeak.sampleRate
        self.piperVoice = piperVoice
        self.espeakVoice = espeakVoice
        espeak.onFrame = { [unowned self] frame in self.received(frame, from: .espeak) }
        espeak.onLost = { [unowned self] tag, reason in self.arrived(.lost(reason), tag: tag, from: .espeak) }
        espeak.onUnavailable = { [unowned self] reason in self.onUnavailable?(reason) }
    }

    func configure(voice: String, rate: Int, pitch: Int) {
        configured = (voice, rate, pitch)
    }

    func synthesize(_ text: String, tag: UInt32, ssml: Bool) {
        let request = Request(tag: tag, route: .espeak, text: text, ssml: ssml, voice: configured.voice,
                              rate: configured.rate, pitch: configured.pitch)
        order.append(request)
        dispatch(order.count - 1)
        notePiperRequests()
    }

    func cancel(_ tags: [UInt32]) {
        var byRoute: (espeak: [UInt32], piper: [UInt32]) = ([], [])
        for tag in tags {
            guard let i = order.firstIndex(where: { $0.tag == tag }) else { continue }
            if order[i].route == .piper { byRoute.piper.append(tag) } else { byRoute.espeak.append(tag) }
            order.remove(at: i)
            waiting[tag] = nil
        }
        if !byRoute.espeak.isEmpty { espeak.cancel(byRoute.espeak) }
        if !byRoute.piper.isEmpty { piper?.cancel(byRoute.piper) }
        deliverWaiting()
        notePiperRequests()
    }

    func startEarly() { espeak.startEarly() }

    func terminate() {
        idle.cancel()
        espeak.terminate()
        piper?.terminate()
        piper = nil
        order.removeAll()
        waiting.removeAll()
    }

    // MARK: routing

    /// Sends request `index` of `order` to its engine: Piper for a usable Piper voice, else eSpeak NG (with
    /// the eSpeak NG voice of the Piper voice's language).
    private func dispatch(_ index: Int) {
        let r = order[index]
        if r.voice.hasPrefix("piper:"), let (model, client) = piperRoute(for: r.voice) {
            if r.pitch != SpeakOptions.defaultPitch, pitchWarned.insert(r.voice).inserted {
                Log.warning("pitch is not a Piper control: \(r.voice) speaks at its own pitch (pitch \(r.pitch) is ignored)")
            }
            order[index].route = .piper
            client.configure(voice: model, rate: r.rate, pitch: r.pitch)
            client.synthesize(r.text, tag: r.tag, ssml: r.ssml)
            return
        }
        order[index].route = .espeak
        espeak.configure(voice: r.voice.hasPrefix("piper:") ? fallback(for: r.voice) : r.voice, rate: r.rate, pitch: r.pitch)
        espeak.synthesize(r.text, tag: r.tag, ssml: r.ssml)
    }

    /// The model and the client for a Piper voice, or nil (with one log line the first time) when it cannot be used.
    private func piperRoute(for identifier: String) -> (String, SynthesisClient)? {
        guard supervisor.piperProblem == nil else { return nil }
        guard let voice = piperVoice(identifier), let model = voice.model else {
            giveUp(identifier, "unknown Piper voice '\(identifier)' (`lector voices` lists them)")
            return nil
        }
        guard supervisor.usesPiper(identifier, files: Piper.files(of: voice)) else { return nil }
        if let piper { return (model, piper) }
        guard let argv = Piper.workerArgv(sampleRate: sampleRate) else {
            giveUpPiper("the Piper worker (lector-piper-worker) is not installed")
            return nil
        }
        let client = SynthesisClient(argv: argv, sampleRate: sampleRate, stallLimit: Self.piperStallLimit, engine: "Piper",
                                     budgeted: true)
        client.holding = holding
        client.onFrame = { [unowned self] frame in self.received(frame, from: .piper) }
        client.onLost = { [unowned self] tag, reason in self.piperLost(tag, reason) }
        client.onUnavailable = { [unowned self] reason in self.giveUpPiper(reason) }
        piper = client
        return (model, client)
    }

    /// The eSpeak NG voice for a Piper voice's language (from its name when it is not installed).
    private func fallback(for identifier: String) -> String {
        let language = piperVoice(identifier)?.languages.first
            ?? Voice.piper(model: String(identifier.dropFirst("piper:".count)) + ".onnx")?.languages.first ?? "en"
        return espeakVoice(language)
    }

    /// Voice `identifier` is not used again (until its files change); its waiting requests go to eSpeak NG.
    private func giveUp(_ identifier: String, _ reason: String) {
        let files = piperVoice(identifier).flatMap(Piper.files(of:))
        perform(supervisor.unusable(identifier, reason: reason, files: files, fallback: fallback(for: identifier)))
        reroute { $0.voice == identifier }
    }

    /// Piper is not used again; its waiting requests go to eSpeak NG.
    private func giveUpPiper(_ reason: String) {
        perform(supervisor.piperUnavailable(reason))
        reroute { _ in true }
    }

    /// The Piper worker lost request `tag` (it crashed, hung, misbehaved): skipped with its line, or, when its
    /// voice has now failed too often, read by eSpeak NG with the voice's other requests (one line).
    private func piperLost(_ tag: UInt32, _ reason: String) {
        guard let request = order.first(where: { $0.tag == tag && $0.route == .piper }) else { return }
        let voice = request.voice
        let (reread, actions) = supervisor.lost(voice, reason: reason, files: piperVoice(voice).flatMap(Piper.files(of:)),
                                                fallback: fallback(for: voice))
        perform(actions)
        if reread { reroute { $0.voice == voice } } else { arrived(.lost(reason), tag: tag, from: .piper) }
        notePiperRequests()
    }

    /// Carries out the supervisor's actions.
    private func perform(_ actions: [PiperSupervisor.Action]) {
        for action in actions {
            switch action {
            case .log(let line): Log.warning(line)
            case .armIdle(let milliseconds):
                idle.arm(milliseconds: milliseconds) { [weak self] in
                    guard let self else { return }
                    self.perform(self.supervisor.idleFired(pending: self.piperPending))
                }
            case .cancelIdle: idle.cancel()
            case .endWorker:
                idle.cancel()
                piper?.terminate()
                piper = nil
            }
        }
    }

    /// Requests sent to the Piper worker and not answered.
    private var piperPending: Int { order.reduce(0) { $1.route == .piper ? $0 + 1 : $0 } }

    /// Tells the supervisor how many Piper requests are pending (it arms the idle timer when the last leaves).
    private func notePiperRequests() {
        perform(supervisor.piperRequests(piperPending, workerRuns: piper != nil))
    }

    /// Sends the Piper requests that match again, to eSpeak NG.
    private func reroute(_ matching: (Request) -> Bool) {
        let moved = order.indices.filter { order[$0].route == .piper && matching(order[$0]) }
        piper?.cancel(moved.map { order[$0].tag })
        for i in moved {
            waiting[order[i].tag] = nil
            dispatch(i)
        }
        deliverWaiting()
    }

    // MARK: frames, in the order of the requests

    private func received(_ frame: WorkerFrame, from route: Route) {
        switch frame {
        case .ready:
            break  // the client checked the rate it announces (SynthesisClient.sampleRate)
        case .failed(let tag, let message) where route == .piper:
            // The worker fails a request only when the voice cannot be used (see data/lector-piper-worker); its
            // line may name the model's file: one line, cleaned.
            guard let request = order.first(where: { $0.tag == tag && $0.route == .piper }) else { return }
            giveUp(request.voice, TextCleaner.field(message))
            notePiperRequests()
        case .audio(let tag, _), .word(let tag, _, _, _), .end(let tag, _), .failed(let tag, _):
            arrived(.frame(frame), tag: tag, from: route)
        }
    }

    private func arrived(_ event: Event, tag: UInt32, from route: Route) {
        guard let i = order.firstIndex(where: { $0.tag == tag && $0.route == route }) else { return }
        guard i == 0 else {
            waiting[tag, default: []].append(event)
            return
        }
        deliver(event, tag: tag)
        if event.isLast { deliverWaiting() }
        if event.isLast { notePiperRequests() }
    }

    private func deliver(_ event: Event, tag: UInt32) {
        if event.isLast, let i = order.firstIndex(where: { $0.tag == tag }) {
            order.remove(at: i)
        }
        switch event {
        case .frame(let frame): onFrame?(frame)
        case .lost(let reason): onLost?(tag, reason)
        }
    }

    /// Delivers what waited for the requests now first in line.
    private func deliverWaiting() {
        while let head = order.first, let events = waiting.removeValue(forKey: head.tag) {
            for event in events { deliver(event, tag: head.tag) }
            if events.last?.isLast != true { break }
        }
    }
}
