import GLibKit
import LectorCommon
import SpeechCore
import Synthesis

/// The synthesis of one utterance by several workers at once, for offline rendering: each worker is a
/// `SynthesisClient` (its own process, watchdog, restarts and retry), sentences go to whichever worker has
/// room, and their audio is handed on strictly in order. Each request carries its own voice, rate and pitch,
/// so a sentence sounds the same whichever worker reads it, and the audio is the one a single worker gives.
///
/// Memory is bounded: a worker has at most ``inFlight`` requests, and no sentence is asked for more than
/// ``window`` sentences ahead of the first one not yet handed on.
final class ParallelSynthesis {
    /// Requests a worker has at once (the next is queued while one is synthesized: no round trip between them).
    static let inFlight = 2
    /// How far ahead of the first sentence not handed on a sentence may be asked for, per worker.
    static let windowPerWorker = 16

    /// Called on the main loop with each sentence's index and audio, in order (empty for a skipped one);
    /// returns false to stop (the output failed).
    var onSentence: ((_ index: Int, _ pcm: [Int16]) -> Bool)?

    private let utterance: Utterance
    private let clients: [SynthesisClient]
    private let loop: MainLoop
    private var nextToSend = 0
    private var nextToHand = 0
    /// Audio of sentences being synthesized, and of those done but waiting for an earlier one.
    private var partial: [Int: [Int16]] = [:]
    private var done: [Int: [Int16]] = [:]
    /// The sentences each worker has been asked for and not yet answered.
    private var assigned: [[Int]]
    private var failure: RenderError?

    /// Readies `jobs` workers (started on the first request) started with `argv`, on `loop`.
    init(_ utterance: Utterance, jobs: Int, workerArgv: [String], loop: MainLoop) {
        self.utterance = utterance
        self.loop = loop
        let count = max(1, min(jobs, max(1, utterance.sentences.count)))
        clients = (0..<count).map { _ in SynthesisClient(argv: workerArgv) }
        assigned = Array(repeating: [], count: count)
    }

    /// Runs the loop until every sentence has been handed on, the output refused one, or `stop` was called.
    /// - Throws: `RenderError` when no worker can be started.
    func run() throws(RenderError) {
        guard !utterance.sentences.isEmpty else { return }
        for (w, client) in clients.enumerated() {
            client.onFrame = { [unowned self] frame in received(frame, worker: w) }
            client.onLost = { [unowned self] tag, reason in
                let index = Int(tag) - 1
                printError("warning: \(reason) on sentence \(index + 1) (“\(utterance.sentences[index].excerpt)”); skipped it")
                finished(index, worker: w, keep: false)
            }
            client.onUnavailable = { [unowned self] reason in
                failure = RenderError(message: reason)
                loop.quit()
            }
        }
        _ = MainContext.idle { [unowned self] in send() }
        loop.run()
        for client in clients { client.terminate() }
        if let failure { throw failure }
    }

    /// Ends the run at the next turn of the loop (the workers are terminated).
    func stop() { loop.quit() }

    private func received(_ frame: WorkerFrame, worker: Int) {
        switch frame {
        case .audio(let tag, let pcm):
            partial[Int(tag) - 1, default: []].append(contentsOf: pcm)
        case .end(let tag, _):
            finished(Int(tag) - 1, worker: worker, keep: true)
        case .failed(let tag, let message):
            printError("warning: sentence \(Int(tag)) not read: \(message)")
            finished(Int(tag) - 1, worker: worker, keep: false)
        default:
            break
        }
    }

    private func finished(_ index: Int, worker: Int, keep: Bool) {
        guard let slot = assigned[worker].firstIndex(of: index) else { return }
        assigned[worker].remove(at: slot)
        let pcm = partial.removeValue(forKey: index) ?? []
        done[index] = keep ? pcm : []
        while let next = done.removeValue(forKey: nextToHand) {
            guard onSentence?(nextToHand, next) ?? true else { return loop.quit() }
            nextToHand += 1
        }
        if nextToHand == utterance.sentences.count { return loop.quit() }
        send()
    }

    /// Gives each worker with room the next sentences, within the window.
    private func send() {
        let limit = min(utterance.sentences.count, nextToHand + ParallelSynthesis.windowPerWorker * clients.count)
        var progressed = true
        while progressed {
            progressed = false
            for (w, client) in clients.enumerated() where nextToSend < limit && assigned[w].count < ParallelSynthesis.inFlight {
                let index = nextToSend
                nextToSend += 1
                assigned[w].append(index)
                let sentence = utterance.sentences[index]
                client.configure(voice: utterance.voice(ofSentence: index).engineVoice, rate: utterance.rate, pitch: utterance.pitch)
                client.synthesize(sentence.markup ?? sentence.text, tag: UInt32(truncatingIfNeeded: index + 1), ssml: sentence.markup != nil)
                progressed = true
            }
        }
    }
}
