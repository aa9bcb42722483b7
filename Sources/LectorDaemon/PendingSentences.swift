import GLibKit
import SpeechCore

/// Cuts the rest of a long text into sentences while its start is already being read.
///
/// `Speak` prepares only the first slice of a text (`UtterancePreparer.prepareStart`), so that a 1 MB text is
/// heard as soon as one sentence is. The rest is cut here in idle callbacks on the main loop
/// (`G_PRIORITY_DEFAULT_IDLE`), about a millisecond of work each, so that audio, Pause and Stop never wait
/// longer; each step's sentences are appended to the current utterance with `SpeechManager.extend`. What
/// needs every sentence at once (a seek, Next, a bookmark, the end of a paragraph) calls `finish()` first.
final class PendingSentences {
    /// Scalars cut in one step: a small fraction of the time between two writes to the stream.
    static let sliceLength = 2048
    /// Steps are taken in one idle callback until this much time has passed, µs, so that the audio (whose
    /// stream holds ~100 ms) is fed between callbacks whatever the build.
    static let sliceMicroseconds: Int64 = 1000
    /// Scalars cut before reading starts: about 15 s of speech, little enough not to delay the first sound
    /// (bench/analysis.md).
    static let firstSliceLength = 1024
    /// The slices start this long after the text, in ms, so that they do not compete with its first audio.
    static let delayMilliseconds: UInt32 = 50

    private let engine: ReadingEngine
    private var utterance: UInt64 = 0
    private var cutter: SentenceCutter?
    /// Reads the whole text of a file whose start is being read, and gives the cutter for the rest of it.
    private var completion: (() -> SentenceCutter?)?
    private var source: Source?

    init(engine: ReadingEngine) {
        self.engine = engine
    }

    /// Whether some text is still waiting to be cut.
    var isActive: Bool { cutter != nil || completion != nil }

    /// Cuts the rest of utterance `id`, which must be the current one, with `cutter`; whatever was left of an
    /// earlier text is dropped. With no cutter (a text prepared whole), only drops that. With a `completion`
    /// (a file of which only the start was read), the first step calls it instead, and goes on with the cutter
    /// it returns (nil: nothing is left to cut).
    func begin(_ cutter: SentenceCutter?, utterance id: UInt64, completion: (() -> SentenceCutter?)? = nil) {
        cancel()
        guard cutter != nil || completion != nil else { return }
        self.cutter = cutter
        self.completion = completion
        utterance = id
        source = MainContext.timeout(milliseconds: Self.delayMilliseconds) { [unowned self] in
            self.source = MainContext.idle { [unowned self] in self.slice() }
            return false
        }
    }

    /// Cuts everything that is left now, when the current utterance is the one being cut.
    func finish() {
        complete()
        while cutter != nil { step(Int.max) }
    }

    /// Drops what is left to cut.
    func cancel() {
        source?.cancel()
        source = nil
        cutter = nil
        completion = nil
    }

    /// Runs the completion, if any, for the current utterance.
    private func complete() {
        guard let completion else { return }
        self.completion = nil
        guard engine.manager.current?.id == utterance else {
            cancel()
            return
        }
        cutter = completion()
        if cutter == nil { engine.extend(utterance: utterance, with: [], pendingText: 0) }
    }

    private func slice() {
        source = nil
        complete()
        let start = MainContext.monotonicMicroseconds
        repeat { step(Self.sliceLength) } while cutter != nil && MainContext.monotonicMicroseconds - start < Self.sliceMicroseconds
        if cutter != nil {
            source = MainContext.idle { [unowned self] in self.slice() }
        }
    }

    /// Cuts about `length` scalars and hands the sentences to the engine; stops when the text is done or is
    /// no longer the current one (replaced by another Speak).
    private func step(_ length: Int) {
        guard let cutter, engine.manager.current?.id == utterance else {
            cancel()
            return
        }
        let sentences = cutter.next(approximately: length)
        let pending = cutter.pendingText
        if cutter.isDone { cancel() }
        guard !sentences.isEmpty || pending == 0 else { return }
        engine.extend(utterance: utterance, with: sentences, voices: cutter.takeNewVoices(), pendingText: pending)
        if pending == 0 {
            // What receiving and cutting a long text left free goes back to the system (glibc keeps it).
            Memory.returnFreeMemory()
        }
    }
}
