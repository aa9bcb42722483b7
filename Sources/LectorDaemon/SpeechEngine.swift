import SpeechCore
import Synthesis

/// The seam between the reading and a speech engine: what `ReadingEngine` asks of the process that
/// synthesizes (`SynthesisClient` runs eSpeak NG's worker; another engine's client plugs in here).
///
/// Requests carry tags chosen by the reading (`ReadingTimeline`); frames come back with them, on the GLib main
/// loop, through `onFrame`, in the order of the requests. The protocol of the frames is the worker protocol
/// (`Synthesis/WorkerProtocol.swift`).
protocol SpeechEngine: AnyObject {
    /// A frame of a request still wanted.
    var onFrame: ((WorkerFrame) -> Void)? { get set }
    /// The engine died or hung on request `tag`, which gets no more frames; with one line.
    var onLost: ((_ tag: UInt32, _ reason: String) -> Void)? { get set }
    /// The engine cannot be started at all: reading cannot go on.
    var onUnavailable: ((_ reason: String) -> Void)? { get set }
    /// The rate of the audio in `onFrame`'s audio frames, in Hz (mono, signed 16-bit), fixed for the engine's
    /// lifetime: the playback stream and every position in samples use it.
    var sampleRate: Int { get }
    /// Whether the reader has enough audio for now (the engine's output is left unread, back-pressure).
    var holding: Bool { get set }

    /// Selects voice, rate (wpm) and pitch for the requests that follow.
    func configure(voice: String, rate: Int, pitch: Int)
    /// Asks for `text` (an SSML document when `ssml`), answered with frames that carry `tag`.
    func synthesize(_ text: String, tag: UInt32, ssml: Bool)
    /// Gives up the requests `tags`: none of their frames is delivered any more.
    func cancel(_ tags: [UInt32])
    /// Starts the engine now if it does not run, so that its start overlaps with preparing a text.
    func startEarly()
    /// Ends the engine (at shutdown).
    func terminate()
}

extension SynthesisClient: SpeechEngine {}

extension SynthesisFrame {
    /// The frame for the reading core; nil for `ready`, which the client handles.
    init?(_ frame: WorkerFrame) {
        switch frame {
        case .ready: return nil
        case let .audio(tag, samples): self = .audio(tag: tag, samples: samples)
        case let .word(tag, start, length, sample): self = .word(tag: tag, start: start, length: length, sample: sample)
        case let .end(tag, samples): self = .end(tag: tag, samples: samples)
        case let .failed(tag, message): self = .failed(tag: tag, message: message)
        }
    }
}
