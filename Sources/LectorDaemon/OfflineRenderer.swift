@preconcurrency import Glibc
import GLibKit
import LectorCommon
import SpeechCore
import Synthesis
import SystemKit

/// `lector read --output PATH.wav`: synthesizes an utterance with the daemon's own `SynthesisClient` (the
/// one client of the worker protocol: its restarts, watchdog and retry), on a GLib main loop run for the
/// duration of the rendering, with no daemon and no sound server, and writes what the daemon would play to
/// a RIFF/WAVE file (16-bit mono, at the engine's rate). A sentence the worker is lost on (an eSpeak NG crash, a hang)
/// is skipped with a one-line warning, as in the daemon.
struct OfflineRenderer {
    /// Renders `utterance` to `path`. Returns the number of samples written.
    /// - Throws: `RenderError` with a one-line message when the file cannot be written or the worker not started.
    static func render(_ utterance: Utterance, to path: String) throws(RenderError) -> Int {
        let synthesis = OfflineSynthesis(utterance)
        let samples = try synthesis.run()
        let file: FileDescriptor
        do throws(Errno) {
            file = try FileDescriptor.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC)
        } catch {
            throw RenderError(message: "cannot write \(path): \(error)")
        }
        do throws(Errno) {
            defer { try? file.close() }
            try file.writeAll(WAV.header(sampleRate: synthesis.sampleRate, samples: samples.count))
            try samples.withUnsafeBytes { raw in Result { () throws(Errno) in try file.writeAll(raw) } }.get()
        } catch {
            throw RenderError(message: "cannot write \(path): \(error)")
        }
        return samples.count
    }
}

/// The synthesis of one utterance for `OfflineRenderer`: one sentence at a time, each with its own voice (a
/// text given no language changes voice per paragraph), until the last has ended, failed or been lost.
private final class OfflineSynthesis {
    private let utterance: Utterance
    private let client: any SpeechEngine = EngineRouter.standalone()  // eSpeak NG's and Piper's workers
    private let loop = MainLoop()
    /// The sentence being synthesized, and the tag of its request.
    private var index = -1
    private var tag: UInt32 = 0
    private var sentenceAudio: [Int16] = []
    private var samples: [Int16] = []
    private var failure: RenderError?

    init(_ utterance: Utterance) {
        self.utterance = utterance
    }

    /// The rate of the audio `run` returns, in Hz.
    var sampleRate: Int { client.sampleRate }

    /// The audio of every sentence read, in order.
    /// - Throws: `RenderError` when the worker cannot be started.
    func run() throws(RenderError) -> [Int16] {
        guard !utterance.sentences.isEmpty else { return [] }
        client.onFrame = { [unowned self] frame in received(frame) }
        client.onLost = { [unowned self] lostTag, reason in
            guard lostTag == tag else { return }
            printError("warning: \(reason) on sentence \(index + 1) (“\(utterance.sentences[index].excerpt)”); skipped it")
            sentenceAudio = []
            next()
        }
        client.onUnavailable = { [unowned self] reason in
            failure = RenderError(message: reason)
            loop.quit()
        }
        // From the loop: a worker that cannot start quits it, which only a running loop notices.
        MainContext.idle { [unowned self] in next() }
        loop.run()
        client.terminate()
        if let failure { throw failure }
        return samples
    }

    private func received(_ frame: WorkerFrame) {
        switch frame {
        case .audio(let t, let pcm) where t == tag:
            sentenceAudio.append(contentsOf: pcm)
        case .end(let t, _) where t == tag:
            next()
        case .failed(let t, let message) where t == tag:
            printError("warning: sentence \(index + 1) not read: \(message)")
            next()
        default:
            break
        }
    }

    /// Keeps the audio of the sentence that ended and asks for the next one, or ends the loop after the last.
    private func next() {
        samples.append(contentsOf: sentenceAudio)
        sentenceAudio = []
        index += 1
        guard index < utterance.sentences.count else {
            tag = 0
            loop.quit()
            return
        }
        let sentence = utterance.sentences[index]
        client.configure(voice: utterance.voice(ofSentence: index).engineVoice, rate: utterance.rate, pitch: utterance.pitch)
        tag = UInt32(truncatingIfNeeded: index + 1) // one request at a time: the sentence's number tells it
        client.synthesize(sentence.markup ?? sentence.text, tag: tag, ssml: sentence.markup != nil)
    }
}

/// A failure of offline rendering, one line.
struct RenderError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
