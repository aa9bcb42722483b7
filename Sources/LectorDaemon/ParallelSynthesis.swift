import GLibKit
import LectorCommon
import SpeechCore
import Synthesis

/// The synthesis of one utterance by several workers at once, for offline rendering.
///
/// The sentences are cut into segments of ``segmentLength``; each segment is read, in order, by a worker
/// started for it alone (an `EngineRouter`: eSpeak NG's worker and, for Piper voices, Piper's, each a
/// `SynthesisClient` with its own process, watchdog, restarts and retry). eSpeak NG
/// carries state from one text to the next inside a process (its wave generator's phase and pitch flutter),
/// so a sentence sounds a few samples different after another one: a fresh engine per segment makes the
/// audio depend on the text only, identical whatever the number of workers. Segments go to whichever
/// worker is free; the audio is handed on strictly in order.
///
/// Memory is bounded: a worker has at most ``inFlight`` requests, and no segment starts more than
/// ``segmentsAhead`` segments per worker after the first one not yet handed on whole.
final class ParallelSynthesis {
    /// Sentences per segment: a worker start (~20 ms) per 40 sentences (~2 min of speech).
    static let segmentLength = 40
    /// Requests a worker has at once (the next is queued while one is synthesized: no round trip between them).
    static let inFlight = 2
    /// How many segments per worker may be under way or waiting ahead of the one being handed on.
    static let segmentsAhead = 2

    /// How long a worker may send nothing before it is taken for hung, µs: 5 s, ten times the daemon's
    /// (``SynthesisClient/stallLimit``). No one hears a rendering live, and a machine busy writing gigabytes
    /// of audio can starve a worker (page faults, CPU) for more than half a second.
    static let stallLimit: Int64 = 5_000_000

    /// The rate of the audio handed on, in Hz: what each worker must announce (eSpeak NG's).
    static let sampleRate = WorkerFrame.eSpeakSampleRate

    /// Called on the main loop with each sentence's index and audio, in order (empty for a skipped one);
    /// returns false to stop (the output failed).
    var onSentence: ((_ index: Int, _ pcm: [Int16]) -> Bool)?

    /// One worker and the segment it reads.
    private final class Slot {
        var client: (any SpeechEngine)?
        var segment: Range<Int> = 0..<0
        var nextToSend = 0
        var assigned: [Int] = []
    }

    private let utterance: Utterance
    private let slots: [Slot]
    private let workerArgv: [String]
    /// The voices, listed once for every segment's engines.
    private let catalog = EngineRouter.Catalog()
    private let loop: MainLoop
    private var nextSegmentStart = 0
    private var nextToHand = 0
    /// Audio of sentences being synthesized, and of those done but waiting for an earlier one.
    private var partial: [Int: [Int16]] = [:]
    private var done: [Int: [Int16]] = [:]
    private var failure: RenderError?

    /// Readies `jobs` workers (each started for its segment) started with `argv`, on `loop`.
    init(_ utterance: Utterance, jobs: Int, workerArgv: [String], loop: MainLoop) {
        self.utterance = utterance
        self.loop = loop
        self.workerArgv = workerArgv
        let segments = (utterance.sentences.count + Self.segmentLength - 1) / Self.segmentLength
        slots = (0..<max(1, min(jobs, segments))).map { _ in Slot() }
    }

    /// Runs the loop until every sentence has been handed on, the output refused one, or `stop` was called.
    /// - Throws: `RenderError` when no worker can be started.
    func run() throws(RenderError) {
        guard !utterance.sentences.isEmpty else { return }
        _ = MainContext.idle { [unowned self] in schedule() }
        loop.run()
        for slot in slots { slot.client?.terminate() }
        if let failure { throw failure }
    }

    /// Leaves the workers' output in their pipes (``SynthesisClient/holding``) until as many `release`s:
    /// while the main thread is busy elsewhere (writing sentences, waiting for encoders), so that the
    /// watchdog does not take the workers' unread output for a hang (a write to a disk busy flushing can
    /// block for longer than ``SynthesisClient/stallLimit``).
    func hold() {
        holds += 1
        for slot in slots { slot.client?.holding = true }
    }

    /// Ends one `hold`; the workers are read again after the last.
    func release() {
        holds = max(0, holds - 1)
        for slot in slots { slot.client?.holding = holds > 0 }
    }

    private var holds = 0

    /// Ends the run at the next turn of the loop (the workers are terminated).
    func stop() { loop.quit() }

    private func startSegment(_ slot: Slot) {
        slot.client?.terminate()
        let end = min(nextSegmentStart + Self.segmentLength, utterance.sentences.count)
        slot.segment = nextSegmentStart..<end
        slot.nextToSend = nextSegmentStart
        nextSegmentStart = end
        // eSpeak NG's worker, and Piper's for Piper voices (`EngineRouter`), both at eSpeak NG's rate.
        let client = EngineRouter.standalone(argv: workerArgv, stallLimit: Self.stallLimit, catalog: catalog)
        client.onFrame = { [unowned self, unowned slot] frame in received(frame, slot: slot) }
        client.onLost = { [unowned self, unowned slot] tag, reason in
            let index = Int(tag) - 1
            printError("warning: \(reason) on sentence \(index + 1) (“\(utterance.sentences[index].excerpt)”); skipped it")
            finished(index, slot: slot, keep: false)
        }
        client.onUnavailable = { [unowned self] reason in
            failure = RenderError(message: reason)
            loop.quit()
        }
        client.holding = holds > 0
        slot.client = client
    }

    private func received(_ frame: WorkerFrame, slot: Slot) {
        switch frame {
        case .audio(let tag, let pcm):
            partial[Int(tag) - 1, default: []].append(contentsOf: pcm)
        case .end(let tag, _):
            finished(Int(tag) - 1, slot: slot, keep: true)
        case .failed(let tag, let message):
            printError("warning: sentence \(Int(tag)) not read: \(message)")
            finished(Int(tag) - 1, slot: slot, keep: false)
        default:
            break
        }
    }

    private func finished(_ index: Int, slot: Slot, keep: Bool) {
        guard let position = slot.assigned.firstIndex(of: index) else { return }
        slot.assigned.remove(at: position)
        let pcm = partial.removeValue(forKey: index) ?? []
        done[index] = keep ? pcm : []
        // Held only when something is handed on: a worker stuck on the next sentence must still be caught.
        if done[nextToHand] != nil {
            hold()
            defer { release() }
            while let next = done.removeValue(forKey: nextToHand) {
                guard onSentence?(nextToHand, next) ?? true else { return loop.quit() }
                nextToHand += 1
            }
        }
        if nextToHand == utterance.sentences.count { return loop.quit() }
        schedule()
    }

    /// Gives free workers a segment (within the bound) and each worker the next sentences of its segment.
    private func schedule() {
        let limit = (nextToHand / Self.segmentLength + Self.segmentsAhead * slots.count) * Self.segmentLength
        for slot in slots {
            if slot.nextToSend == slot.segment.upperBound && slot.assigned.isEmpty
                && nextSegmentStart < min(limit, utterance.sentences.count) {
                startSegment(slot)
            }
            guard let client = slot.client else { continue }
            while slot.nextToSend < slot.segment.upperBound && slot.assigned.count < Self.inFlight {
                let index = slot.nextToSend
                slot.nextToSend += 1
                slot.assigned.append(index)
                let sentence = utterance.sentences[index]
                client.configure(voice: utterance.voice(ofSentence: index).engineVoice, rate: utterance.rate, pitch: utterance.pitch)
                client.synthesize(sentence.markup ?? sentence.heard, tag: UInt32(truncatingIfNeeded: index + 1), ssml: sentence.markup != nil)
            }
        }
    }
}
