@preconcurrency import Glibc
import CESpeakNG
import SystemKit

/// The synthesis worker: a child process of the daemon that owns eSpeak NG.
///
/// eSpeak NG keeps process-global state, is not thread-safe, and aborts the process on some inputs
/// (eSpeak NG 1.51: a word with about 65 or more embedded apostrophes, `s's's…`, trips the stack protector),
/// so it runs here, one request at a time, and a crash costs one sentence.
public enum Worker {
    /// Exit code: input reached end of file between frames.
    public static let exitSuccess: Int32 = 0
    /// Exit code: the output pipe or the input failed (e.g. EPIPE: the daemon closed its end), or eSpeak NG
    /// could not be loaded or initialized.
    public static let exitIOError: Int32 = 1
    /// Exit code: a malformed request (see ``WorkerProtocolError``) or input cut in the middle of a frame.
    public static let exitProtocolError: Int32 = 2

    /// The length of the audio chunks asked of eSpeak NG, in ms (`buflength` of `espeak_Initialize`).
    /// Small chunks make the first audio leave early; 20 ms is 441 samples at 22,050 Hz.
    static let chunkMilliseconds: Int32 = 20

    /// Runs the worker's main loop until end of input.
    ///
    /// Loads eSpeak NG (libespeak-ng.so.1, see `lector_espeak`), initializes it (`espeak_Initialize` in
    /// `AUDIO_OUTPUT_SYNCHRONOUS` mode, speak_lib.h), sends ``WorkerFrame/ready(sampleRate:)``, then reads
    /// ``WorkerRequest`` frames from `input` and answers each `synthesize` on `output` with frames written as
    /// the engine produces them (blocking writes, EINTR and short writes handled; a slow reader slows
    /// synthesis down). SIGPIPE is ignored so that a closed output is an error return, not a signal. SIGABRT
    /// gets its default action back, so an engine abort kills the process at once instead of running the
    /// Swift runtime's backtracer (Swift's own traps are SIGILL and keep their backtraces). Diagnostics go to
    /// standard error, one line each.
    ///
    /// - Parameters:
    ///   - input: file descriptor to read requests from (the daemon's pipe).
    ///   - output: file descriptor to write frames to.
    /// - Returns: the process exit code: ``exitSuccess`` (0) at end of input, ``exitIOError`` (1),
    ///   or ``exitProtocolError`` (2).
    public static func run(input: FileDescriptor, output: FileDescriptor) -> Int32 {
        _ = signal(SIGPIPE, SIG_IGN)
        _ = signal(SIGABRT, SIG_DFL)
        // Ctrl-C on a terminal goes to the whole foreground process group: the daemon or the renderer decides
        // what becomes of its workers (it ends them, and a worker ends at its input's end), so a worker
        // interrupted with it is not taken for a crashed engine.
        _ = signal(SIGINT, SIG_IGN)
        guard let espeak = lector_espeak()?.pointee else { return exitIOError }  // it said why
        let rate = espeak.Initialize(AUDIO_OUTPUT_SYNCHRONOUS, chunkMilliseconds, nil, espeakINITIALIZE_DONT_EXIT)
        guard rate > 0 else {
            diagnose("eSpeak NG could not be initialized (espeak_Initialize returned \(rate))")
            return exitIOError
        }
        espeak.SetSynthCallback { wav, count, events -> Int32 in
            guard let events, let context = events.pointee.user_data else { return 0 }
            let session = Unmanaged<WorkerSession>.fromOpaque(context).takeUnretainedValue()
            return session.deliver(wav: wav, count: Int(count), events: events)
        }
        let session = WorkerSession(input: input, output: output, espeak: espeak,
                                    fault: WorkerFault.fromEnvironment())
        guard session.send(.ready(sampleRate: Int(rate))) else { return exitIOError }
        return session.serve()
    }

    /// Writes one line to standard error (diagnostics of the worker process).
    static func diagnose(_ message: String) {
        try? FileDescriptor.standardError.writeAll(Array(("lector worker: " + message + "\n").utf8))
    }
}

/// A fault to inject into the worker, for tests of how the daemon survives its engine: the environment
/// variable ``environmentVariable`` set to `abort:TEXT` makes the worker abort (SIGABRT, as eSpeak NG's
/// own crashes do) on any request whose text contains TEXT; `hang:TEXT` makes it stop answering there for
/// good (an engine stuck in a loop), until it is killed. Unset or malformed: no fault.
struct WorkerFault {
    /// `LECTOR_TEST_WORKER_FAULT`: for tests only, read by debug builds only; nothing in Lector sets it.
    static let environmentVariable = "LECTOR_TEST_WORKER_FAULT"

    enum Kind { case abort, hang }
    let kind: Kind

    /// The fault ``environmentVariable`` asks for; always nil in release builds, which carry no test switch.
    static func fromEnvironment() -> WorkerFault? {
        #if DEBUG
        return WorkerFault(environment: getenv(environmentVariable))
        #else
        return nil
        #endif
    }
    let trigger: String

    init?(environment value: UnsafeMutablePointer<CChar>?) {
        guard let value else { return nil }
        let spec = String(cString: value)
        guard let colon = spec.firstIndex(of: ":") else { return nil }
        let trigger = String(spec[spec.index(after: colon)...])
        guard !trigger.isEmpty else { return nil }
        switch spec[..<colon] {
        case "abort": kind = .abort
        case "hang": kind = .hang
        default: return nil
        }
        self.trigger = trigger
    }

    /// Carries out the fault when `text` contains the trigger; returns otherwise.
    func strike(on text: String) {
        guard text.contains(trigger) else { return }
        switch kind {
        case .abort: abort()
        case .hang: while true { pause() }
        }
    }
}

/// The state of one worker process: requests received and not yet carried out, the request being
/// synthesized, and the pending output.
///
/// eSpeak NG calls ``deliver(wav:count:events:)`` synchronously from inside `espeak_Synth`, on the calling
/// thread, with this object as `user_data`; between chunks the session reads whatever requests have arrived,
/// so that a ``WorkerRequest/cancel(tag:)`` cuts the request being synthesized.
final class WorkerSession {
    private let input: FileDescriptor
    private let output: FileDescriptor
    private let espeak: lector_espeak_functions
    private let fault: WorkerFault?
    private var decoder = WorkerRequestDecoder()
    /// Requests decoded and not yet carried out, in order.
    private var queue: [WorkerRequest] = []
    private var queueHead = 0
    /// Tags of queued requests that were cancelled before their turn.
    private var cancelled: Set<UInt32> = []
    /// The input reached end of file, or failed (then `inputError` is the exit code).
    private var inputEnded = false
    private var inputError: Int32?
    private var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)
    /// The request being synthesized (0: none), and whether it was cancelled.
    private var tag: UInt32 = 0
    private var cancelCurrent = false
    private var scalarCount = 0
    /// For an SSML request: the text-content offset of each scalar of the markup (see `SSMLText`).
    private var contentOffsets: [Int]?
    private var samplesSent = 0
    private var pending: [UInt8] = []
    private var outputFailed = false
    /// The voice, rate and pitch last configured, applied again before every request (see `applySettings`).
    private var settings: (rate: Int32, pitch: Int32) = (175, 50)
    /// Set by a failed `configure`: every `synthesize` fails with it until a `configure` succeeds.
    private var voiceError: String?

    init(input: FileDescriptor, output: FileDescriptor, espeak: lector_espeak_functions, fault: WorkerFault?) {
        self.input = input
        self.output = output
        self.espeak = espeak
        self.fault = fault
    }

    /// Sends one frame at once. Returns false if the output failed.
    func send(_ frame: WorkerFrame) -> Bool {
        WorkerCodec.append(frame, to: &pending)
        return flush()
    }

    /// Carries out requests until the input ends. Returns the process exit code (see ``Worker/run``).
    func serve() -> Int32 {
        while true {
            if queueHead < queue.count {
                let request = queue[queueHead]
                queueHead += 1
                if queueHead == queue.count { queue.removeAll(keepingCapacity: true); queueHead = 0 }
                guard handle(request) else { return Worker.exitIOError }
                continue
            }
            if let inputError { return inputError }
            if inputEnded {
                if decoder.bufferedByteCount > 0 {
                    Worker.diagnose("input ended inside a frame (\(decoder.bufferedByteCount) bytes left)")
                    return Worker.exitProtocolError
                }
                return Worker.exitSuccess
            }
            readInput()
        }
    }

    /// Reads once from the input (blocking until something arrives) and queues the requests decoded.
    private func readInput() {
        let n: Int
        do throws(Errno) { n = try input.readWaiting(into: &readBuffer) } catch {
            Worker.diagnose("reading requests failed (errno \(error.rawValue))")
            inputError = Worker.exitIOError
            return
        }
        if n == 0 { inputEnded = true; return }
        decoder.append(readBuffer[0..<n])
        do {
            while let request = try decoder.next() { receive(request) }
        } catch {
            Worker.diagnose(error.description)
            inputError = Worker.exitProtocolError
        }
    }

    /// Queues one request; a cancel acts at once on the request it names.
    private func receive(_ request: WorkerRequest) {
        guard case .cancel(let target) = request else { queue.append(request); return }
        if target == tag && tag != 0 {
            cancelCurrent = true
        } else if queue[queueHead...].contains(where: { $0.tag == target }) {
            cancelled.insert(target)
        }
    }

    /// Reads the requests that have arrived while synthesizing, without blocking.
    private func pollInput() {
        guard !inputEnded, inputError == nil else { return }
        guard (try? input.wait(for: .readable, timeoutMilliseconds: 0)) == true else { return }
        readInput()
    }

    /// Carries out one request. Returns false if the output failed (the worker must exit).
    func handle(_ request: WorkerRequest) -> Bool {
        switch request {
        case let .configure(voice, rate, pitch):
            configure(voice: voice, rate: rate, pitch: pitch)
            return true
        case let .synthesize(tag, text):
            return synthesize(tag: tag, text: text, ssml: false)
        case let .synthesizeSSML(tag, markup):
            return synthesize(tag: tag, text: markup, ssml: true)
        case .cancel:
            return true // acted on when received
        }
    }

    private func configure(voice: String, rate: Int, pitch: Int) {
        if let problem = Self.unsafeVoiceName(voice) {
            voiceError = "unknown voice '\(Self.printable(voice))' (\(problem))"
        } else {
            let result = voice.withCString { espeak.SetVoiceByName($0) }
            if result == EE_OK {
                voiceError = nil
            } else {
                voiceError = "unknown voice '\(voice)' (eSpeak NG: \(Self.name(result)))"
            }
        }
        settings = (Int32(min(max(rate, 80), 450)), Int32(min(max(pitch, 0), 99)))
        applySettings()
    }

    /// Sets every parameter eSpeak NG keeps between calls to Lector's values: the configured rate and pitch,
    /// and the defaults of the others (speak_lib.h `espeak_PARAMETER`). Called after selecting a voice (which
    /// may reset the prosody) and before every request, so that nothing one text does to the engine (an
    /// embedded command, `espeak_SetParameter` semantics, speak_lib.h: "ctrl-A" commands) outlives it.
    private func applySettings() {
        _ = espeak.SetParameter(espeakRATE, settings.rate, 0)
        _ = espeak.SetParameter(espeakPITCH, settings.pitch, 0)
        _ = espeak.SetParameter(espeakVOLUME, 100, 0)
        _ = espeak.SetParameter(espeakRANGE, 50, 0)
        _ = espeak.SetParameter(espeakWORDGAP, 0, 0)
        _ = espeak.SetParameter(espeakPUNCTUATION, Int32(espeakPUNCT_NONE.rawValue), 0)
        _ = espeak.SetParameter(espeakCAPITALS, 0, 0)
    }

    /// Why eSpeak NG must not see this voice name, or nil if it may.
    ///
    /// eSpeak NG 1.51 aborts the process (buffer overflow) in `espeak_SetVoiceByName` when the variant part
    /// after `+` is longer than about 36 bytes; names of installed voices are at most 38 bytes.
    static func unsafeVoiceName(_ voice: String) -> String? {
        let bytes = Array(voice.utf8)
        if bytes.isEmpty { return "empty name" }
        if bytes.contains(0) { return "contains U+0000" }
        if bytes.count > 80 { return "name longer than 80 bytes" }
        if let plus = bytes.firstIndex(of: UInt8(ascii: "+")), bytes.count - plus - 1 > 32 {
            return "variant name longer than 32 bytes"
        }
        return nil
    }

    private static func printable(_ s: String) -> String {
        let scalars = s.unicodeScalars.prefix(40).map { $0.value < 0x20 ? "?" : Character($0) }
        return String(scalars) + (s.unicodeScalars.count > 40 ? "…" : "")
    }

    private static func name(_ error: espeak_ERROR) -> String {
        switch error {
        case EE_NOT_FOUND: return "EE_NOT_FOUND"
        case EE_BUFFER_FULL: return "EE_BUFFER_FULL"
        case EE_INTERNAL_ERROR: return "EE_INTERNAL_ERROR"
        default: return "error \(error.rawValue)"
        }
    }

    private func synthesize(tag: UInt32, text: String, ssml: Bool) -> Bool {
        if cancelled.remove(tag) != nil {
            return send(.end(tag: tag, samples: 0))
        }
        if let voiceError {
            return send(.failed(tag: tag, message: voiceError))
        }
        fault?.strike(on: text)
        applySettings()
        self.tag = tag
        cancelCurrent = false
        defer { self.tag = 0 }
        scalarCount = text.unicodeScalars.count
        contentOffsets = ssml ? SSMLText.content(of: text).offsets : nil
        samplesSent = 0
        // NUL-terminated UTF-8. A control character other than tab and line breaks is read as a space: an
        // embedded NUL would end the text early, and U+0001 starts an eSpeak NG embedded command.
        var bytes = [UInt8]()
        bytes.reserveCapacity(text.utf8.count + 1)
        for b in text.utf8 { bytes.append(b < 0x20 && b != 0x09 && b != 0x0A && b != 0x0D ? 0x20 : b) }
        bytes.append(0)
        let context = Unmanaged.passUnretained(self).toOpaque()
        let flags = UInt32(espeakCHARS_UTF8 | espeakENDPAUSE | (ssml ? espeakSSML : 0))
        let result = bytes.withUnsafeBufferPointer { text in
            espeak.Synth(text.baseAddress, text.count, 0, POS_CHARACTER, 0, flags, nil, context)
        }
        if outputFailed { return false }
        if cancelCurrent { return send(.end(tag: tag, samples: samplesSent)) }
        if result != EE_OK {
            return send(.failed(tag: tag, message: "eSpeak NG could not synthesize the text (\(Self.name(result)))"))
        }
        return send(.end(tag: tag, samples: samplesSent))
    }

    /// eSpeak NG's synth callback (speak_lib.h `t_espeak_callback`): word events, then the chunk's audio.
    /// Returns 1 to abort synthesis when the output is gone or the request was cancelled.
    func deliver(wav: UnsafeMutablePointer<Int16>?, count: Int, events: UnsafeMutablePointer<espeak_EVENT>) -> Int32 {
        if outputFailed { return 1 }
        pollInput()
        if cancelCurrent { return 1 }
        var event = events
        while event.pointee.type != espeakEVENT_LIST_TERMINATED {
            // eSpeak NG 1.51 also reports empty words (length 0, a stale text_position) at the end of a text
            // with several sentences: they mark no text and are dropped.
            if event.pointee.type == espeakEVENT_WORD && event.pointee.length > 0 {
                // text_position: 1-based, in code points; sample: from the start of this espeak_Synth call.
                var start = min(max(Int(event.pointee.text_position) - 1, 0), scalarCount)
                var length = min(max(Int(event.pointee.length), 0), scalarCount - start)
                let sample = max(Int(event.pointee.sample), 0)
                if let map = contentOffsets { // SSML: markup offsets → text-content offsets
                    let end = map[start + length]
                    start = map[start]
                    length = max(end - start, 0)
                }
                WorkerCodec.append(.word(tag: tag, start: start, length: length, sample: sample), to: &pending)
            }
            event += 1
        }
        if let wav, count > 0 {
            WorkerCodec.appendAudio(tag: tag, samples: UnsafeBufferPointer(start: wav, count: count), to: &pending)
            samplesSent += count
        }
        return flush() ? 0 : 1
    }

    private func flush() -> Bool {
        if outputFailed { return false }
        do throws(Errno) { try output.writeAll(pending) } catch {
            outputFailed = true
            // EPIPE: the reader has gone (it ended or replaced this worker); nothing to report.
            if error != .brokenPipe { Worker.diagnose("writing frames failed (errno \(error.rawValue))") }
        }
        pending.removeAll(keepingCapacity: true)
        return !outputFailed
    }
}

private extension WorkerRequest {
    /// The request's tag, 0 for `configure`.
    var tag: UInt32 {
        switch self {
        case .configure: return 0
        case .synthesize(let tag, _), .synthesizeSSML(let tag, _), .cancel(let tag): return tag
        }
    }
}
