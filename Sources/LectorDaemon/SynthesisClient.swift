@preconcurrency import Glibc
import GLibKit
import Synthesis
import SystemKit

/// The daemon's side of the synthesis worker (`lector worker`, a child process over eSpeak NG).
///
/// Sends requests, decodes the frames the worker streams back on the GLib main loop, and outlives the worker:
/// - **One worker at a time.** A new worker is started only once the previous one has exited and been reaped
///   (`onExit`); a worker that is being replaced is killed first.
/// - **Death.** The request the worker was on is reported lost (`onLost`, one sentence skipped), and the
///   requests after it are sent again to a new worker. Restarts after consecutive failures wait
///   ``restartDelay(afterFailures:)``, so a worker that dies at once cannot make the daemon spin.
/// - **Hangs.** A watchdog kills a worker that sends nothing for ``stallLimit`` while it has work, and one
///   that has not given up a cancelled request after ``cancelLimit``.
/// - **Retry.** A request whose worker was killed from outside (SIGKILL: the OOM killer, a user) or froze
///   before it sent anything of it is sent once more to the new worker: that failure says nothing about the
///   request. A crash of the engine (SIGABRT, SIGSEGV), or a second failure, costs the request.
/// - **Cancel.** `cancel` drops requests the reader no longer wants: their frames are never delivered, and
///   the worker cuts the one it is on at its next audio chunk (``WorkerRequest/cancel(tag:)``).
/// - **Back-pressure.** While `holding`, the worker's audio is left in the pipe: the worker blocks writing,
///   so synthesis never runs further ahead of playback than the reader allows, whatever a request's size.
/// - **Budgets** (a `budgeted` client: the Piper worker's). Each request's audio is bounded by what its text can
///   take, and the worker's empty audio frames count as progress only within an allowance that grows with the
///   text (`SynthesisBudget`): a worker that sends more, or nothing but signs of life, is replaced and its
///   request lost, as one that hangs.
///
/// Nothing here blocks the loop: both pipes are non-blocking; requests that do not fit in the pipe wait in an
/// outbox for `G_IO_OUT` (a blocking write would deadlock daemon and worker, each waiting for the other).
final class SynthesisClient {
    /// A frame for a request that is still wanted (stale tags are the owner's to ignore).
    var onFrame: ((WorkerFrame) -> Void)?
    /// The worker died or hung while synthesizing request `tag`, which gets no more frames; with one line.
    var onLost: ((_ tag: UInt32, _ reason: String) -> Void)?
    /// The worker cannot be started at all: reading cannot go on.
    var onUnavailable: ((_ reason: String) -> Void)?

    /// A worker that sends nothing for this long while it has a request (and the reader is not holding its
    /// output) is taken for hung and replaced, µs. eSpeak NG sends a chunk for every 20 ms of audio, at
    /// hundreds of times real time, and its first chunk even for a 200,000-letter word within tens of ms, so
    /// a working engine stays far below it; a stuck one costs at most this much silence.
    static let stallLimit: Int64 = 500_000
    /// A worker that still synthesizes a cancelled request this long after the cancel is replaced, µs: it
    /// answers a cancel at its next chunk, so it is stuck, and a new text must not wait for it.
    static let cancelLimit: Int64 = 250_000

    /// How long to wait before starting a worker after `failures` consecutive failures (deaths and hangs
    /// with no request completed in between), ms: at once after the first, then 100 ms doubling up to 1 s.
    static func restartDelay(afterFailures failures: Int) -> UInt32 {
        guard failures > 1 else { return 0 }
        return UInt32(min(100 << min(failures - 2, 4), 1_000))
    }

    private struct Entry {
        let tag: UInt32
        let request: WorkerRequest
        /// The configuration (voice, rate, pitch) the request is to be read with.
        let configuration: WorkerRequest?
        /// When the reader gave it up (`cancel`), µs on the monotonic clock; nil while it is wanted.
        var abandonedAt: Int64?
        /// Whether a frame of it has been delivered.
        var started = false
        /// Whether it was sent again after its worker was lost before it began.
        var retried = false
        /// What it may take of the worker (a budgeted client only).
        var budget: SynthesisBudget?
    }

    /// One worker process and its pipes.
    private final class Process {
        let child: ChildProcess
        var readWatch: Source?
        var writeWatch: Source?
        /// Encoded requests not yet written to the worker's stdin.
        var outbox: [UInt8] = []
        var decoder = WorkerFrameDecoder()
        /// Why the daemon killed it, if it did.
        var killed: WorkerKill?

        init(child: ChildProcess) { self.child = child }

        func close() {
            readWatch?.cancel()
            readWatch = nil
            writeWatch?.cancel()
            writeWatch = nil
            outbox.removeAll()
        }
    }

    private let argv: [String]
    private var process: Process?
    private var configuration: WorkerRequest?
    /// Requests sent (or to be sent) and not yet answered with `.end`/`.failed`, oldest first: the worker
    /// carries them out in this order.
    private var outstanding: [Entry] = []
    private var readBuffer = [UInt8](repeating: 0, count: 65_536)
    /// Deaths and hangs since a request last completed.
    private var failures = 0
    /// The start of a worker after consecutive failures, waiting out `restartDelay(afterFailures:)`.
    private let restartTimer = OneShotTimer()
    /// The one deadline of the worker at work (see `armWatchdog`).
    private let watchdog = OneShotTimer()
    /// When the worker last sent something, or was last given reason to (µs, monotonic). A budgeted client
    /// counts frames only, and empty audio frames only within their request's allowance.
    private var lastProgress: Int64 = 0
    /// When the worker last sent an empty audio frame (µs, monotonic; a budgeted client).
    private var lastSignOfLife: Int64 = 0
    /// Time the worker could send (not holding), for the budgets.
    private var workClock: WorkClock
    /// The configuration of the request that last began on this worker: a request of another voice makes it
    /// load a model (`SynthesisBudget.loadAllowance`).
    private var begunConfiguration: WorkerRequest??

    /// The rate of the audio in its frames, in Hz: what the worker must announce in its `ready` frame.
    let sampleRate: Int

    /// A client that runs `argv` (normally `[executablePath(), "worker"]`) when first needed, whose worker
    /// renders `sampleRate` Hz (a worker that announces another rate is treated as malformed and replaced), and
    /// takes it for hung after `stallLimit` µs without a frame while it has work (``stallLimit`` for eSpeak NG;
    /// the Piper worker sends an empty audio frame every 100 ms while its model loads or a sentence is
    /// synthesized). `engine` names the engine in log lines (e.g. "eSpeak NG crashed (signal 6)"). A `budgeted`
    /// client bounds each request's audio and the worker's signs of life (`SynthesisBudget`).
    init(argv: [String], sampleRate: Int = WorkerFrame.eSpeakSampleRate, stallLimit: Int64 = SynthesisClient.stallLimit,
         engine: String = "eSpeak NG", budgeted: Bool = false) {
        self.argv = argv
        self.sampleRate = sampleRate
        self.workerStallLimit = stallLimit
        self.engineName = engine
        self.budgeted = budgeted
        workClock = WorkClock(now: MainContext.monotonicMicroseconds)
    }

    /// No request is waiting for an answer.
    var isIdle: Bool { outstanding.isEmpty }

    private let workerStallLimit: Int64
    private let engineName: String
    private let budgeted: Bool

    /// Whether the reader has enough audio for now: the worker's output is left in the pipe until this turns
    /// false again. Frames of cancelled requests are read (and dropped) all the same.
    var holding = false {
        didSet {
            guard holding != oldValue else { return }
            let now = MainContext.monotonicMicroseconds
            if holding { workClock.hold(at: now) } else { workClock.release(at: now) }
            if !holding { lastProgress = now }
            updateReading()
            armWatchdog()
        }
    }

    /// Selects voice, rate (wpm) and pitch for the requests that follow; sent only when it changes.
    func configure(voice: String, rate: Int, pitch: Int) {
        let request = WorkerRequest.configure(voice: voice, rate: rate, pitch: pitch)
        guard request != configuration else { return }
        configuration = request
        if process != nil { send(request) }
    }

    /// Asks for `text` to be synthesized (as an SSML document when `ssml`); its frames carry `tag`, which the
    /// caller chooses and does not reuse while the request is outstanding.
    func synthesize(_ text: String, tag: UInt32, ssml: Bool = false) {
        let request: WorkerRequest = ssml ? .synthesizeSSML(tag: tag, markup: text) : .synthesize(tag: tag, text: text)
        if !hasWork { lastProgress = MainContext.monotonicMicroseconds }
        var entry = Entry(tag: tag, request: request, configuration: configuration)
        if budgeted {
            var rate = SynthesisBudget.defaultRate
            if case .configure(_, let configured, _)? = configuration { rate = configured }
            entry.budget = SynthesisBudget(text: text, rate: rate, sampleRate: sampleRate)
        }
        outstanding.append(entry)
        if process == nil { startIfAllowed() } else { send(request) }
        armWatchdog()
    }

    /// Gives up the requests `tags`: none of their frames is delivered any more, and the worker stops working
    /// on them (see ``WorkerRequest/cancel(tag:)``). Unknown and answered tags are ignored.
    func cancel(_ tags: [UInt32]) {
        let now = MainContext.monotonicMicroseconds
        for tag in tags {
            guard let i = outstanding.firstIndex(where: { $0.tag == tag }), outstanding[i].abandonedAt == nil else { continue }
            // No worker runs (one is waiting out its restart delay): nothing has it, nothing will answer it.
            if process == nil { outstanding.remove(at: i); continue }
            outstanding[i].abandonedAt = now
            send(.cancel(tag: tag))
        }
        updateReading()
        armWatchdog()
    }

    /// Starts the worker now if none runs, so that its start (loading eSpeak NG and its data) overlaps with
    /// preparing the first text instead of following it.
    func startEarly() {
        if process == nil { startIfAllowed() }
    }

    /// Ends the worker (at shutdown).
    func terminate() {
        restartTimer.cancel()
        watchdog.cancel()
        process?.close()
        process?.child.kill()
        process = nil
        outstanding.removeAll()
    }

    // MARK: the process

    /// Whether a request is waiting for the worker.
    private var hasWork: Bool { !outstanding.isEmpty }

    /// Whether the first request is one the reader still wants (its audio may be held back).
    private var headIsWanted: Bool { outstanding.first.map { $0.abandonedAt == nil } ?? false }

    /// Starts a worker unless one runs, one is being replaced, or a restart is waiting out its delay.
    private func startIfAllowed() {
        guard process == nil, !restartTimer.isArmed else { return }
        let child: ChildProcess
        do {
            child = try ChildProcess(argv: argv)
        } catch {
            let reason = "cannot start the synthesis worker: \(error)"
            outstanding.removeAll()
            onUnavailable?(reason)
            return
        }
        let worker = Process(child: child)
        process = worker
        for fd in [child.stdinFD, child.stdoutFD] {
            try? fd.setNonBlocking()
        }
        child.onExit { [weak self, weak worker] status in
            guard let self, let worker, worker === self.process else { return }
            self.exited(worker, status)
        }
        lastProgress = MainContext.monotonicMicroseconds
        begunConfiguration = nil
        for i in outstanding.indices { outstanding[i].budget?.restart() }
        updateReading()
        // Each wanted request again with its own voice (sentences of a mixed-language text differ), then the latest.
        var sent: WorkerRequest?
        for entry in outstanding where entry.abandonedAt == nil {
            if let config = entry.configuration, config != sent { send(config); sent = config }
            send(entry.request)
        }
        if let configuration, configuration != sent { send(configuration) }
        armWatchdog()
    }

    /// Reads the worker's output unless the reader holds it back (cancelled requests are always read).
    private func updateReading() {
        guard let worker = process, worker.readWatch == nil, !(holding && headIsWanted) else { return }
        worker.readWatch = MainContext.watch(fd: worker.child.stdoutFD) { [weak self, weak worker] _ in
            guard let self, let worker, worker === self.process else { return false }
            return self.readable(worker)
        }
    }

    private func send(_ request: WorkerRequest) {
        guard let worker = process, worker.killed == nil else { return }
        worker.outbox.append(contentsOf: WorkerCodec.encode(request))
        flush(worker)
    }

    /// Writes what the pipe takes now; the rest when it is writable again.
    private func flush(_ worker: Process) {
        let fd = worker.child.stdinFD
        var offset = 0
        while offset < worker.outbox.count {
            let written: Int?
            do throws(Errno) { written = try nilIfWouldBlock { () throws(Errno) -> Int in try fd.write(worker.outbox[offset...]) } } catch { written = 0 }
            guard let n = written else { break }
            if n > 0 { offset += n; continue }
            // The worker is gone; its exit (onExit) sends the wanted requests to the next one.
            worker.outbox.removeAll()
            return
        }
        worker.outbox.removeFirst(offset)
        if worker.outbox.isEmpty {
            worker.writeWatch?.cancel()
            worker.writeWatch = nil
        } else if worker.writeWatch == nil {
            worker.writeWatch = MainContext.watchWritable(fd: fd) { [weak self, weak worker] _ in
                guard let self, let worker, worker === self.process else { return false }
                self.flush(worker)
                let more = !worker.outbox.isEmpty && worker.writeWatch != nil
                if !more { worker.writeWatch = nil }
                return more
            }
        }
    }

    /// Reads what the worker sent; returns whether to keep watching its output.
    private func readable(_ worker: Process) -> Bool {
        guard !(holding && headIsWanted) else { worker.readWatch = nil; return false }
        switch readOnce(worker) {
        case .data:
            drainFrames(worker)
            guard worker === process, !(holding && headIsWanted) else { worker.readWatch = nil; return false }
            return true
        case .wouldBlock:
            return true
        case .end:
            // The worker exited or closed its output; its exit status arrives through onExit.
            worker.readWatch = nil
            return false
        }
    }

    private enum ReadResult { case data, wouldBlock, end }

    private func readOnce(_ worker: Process) -> ReadResult {
        let read: Int?
        do throws(Errno) { read = try nilIfWouldBlock { () throws(Errno) -> Int in try worker.child.stdoutFD.read(into: &readBuffer) } } catch { return .end }
        guard let n = read else { return .wouldBlock }
        guard n > 0 else { return .end }
        worker.decoder.append(readBuffer[0..<n])
        if !budgeted { lastProgress = MainContext.monotonicMicroseconds }
        return .data
    }

    private func drainFrames(_ worker: Process) {
        while worker.killed == nil {
            let frame: WorkerFrame?
            do { frame = try worker.decoder.next() } catch {
                kill(worker, .malformed("\(error)"))
                return
            }
            guard let frame else { return }
            if case .ready(let announced) = frame, announced != sampleRate {
                kill(worker, .malformed("it renders \(announced) Hz, not \(sampleRate) Hz"))
                return
            }
            deliver(frame)
        }
    }

    /// Passes on a frame of a wanted request; an end or failure also retires its request.
    private func deliver(_ frame: WorkerFrame) {
        let tag: UInt32
        switch frame {
        case .ready: progressed(); onFrame?(frame); return
        case .audio(let t, let samples) where samples.isEmpty: signOfLife(t); return
        case .audio(let t, _), .word(let t, _, _, _): tag = t
        case .end(let t, _), .failed(let t, _):
            tag = t
            guard let i = outstanding.firstIndex(where: { $0.tag == t }) else { return }
            let entry = outstanding.remove(at: i)
            if entry.abandonedAt == nil, case .end = frame { failures = 0 }
            lastProgress = MainContext.monotonicMicroseconds
            updateReading()
            armWatchdog()
            if entry.abandonedAt == nil { onFrame?(frame) }
            return
        }
        progressed()
        guard let i = outstanding.firstIndex(where: { $0.tag == tag }), outstanding[i].abandonedAt == nil else { return }
        if case .audio(_, let samples) = frame, !charge(i, samples: samples.count) { return }
        outstanding[i].started = true
        onFrame?(frame)
    }

    // MARK: budgets

    /// A frame that is not a sign of life: progress (a client without budgets counted it when it read it).
    private func progressed() {
        if budgeted { lastProgress = MainContext.monotonicMicroseconds }
    }

    /// An empty audio frame of request `tag`: progress only within the request's allowance (a client without
    /// budgets counted it when it read it).
    private func signOfLife(_ tag: UInt32) {
        guard budgeted else { return }
        let now = MainContext.monotonicMicroseconds
        lastSignOfLife = now
        guard let i = outstanding.firstIndex(where: { $0.tag == tag }), outstanding[i].abandonedAt == nil else { return }
        begin(i)
        if outstanding[i].budget?.heartbeat(at: workClock.reading(at: now)) != .notProgress { lastProgress = now }
    }

    /// Counts `samples` against request `i`'s budget; false (the worker killed) when it has had too much.
    private func charge(_ i: Int, samples: Int) -> Bool {
        guard outstanding[i].budget != nil, let worker = process else { return true }
        begin(i)
        guard case .overrun(let line)? = outstanding[i].budget?.audio(samples) else { return true }
        kill(worker, .overran(line))
        return false
    }

    /// Request `i`'s first frame from this worker starts its budget's time at work.
    private func begin(_ i: Int) {
        guard outstanding[i].budget?.hasBegun == false else { return }
        let configuration = outstanding[i].configuration
        let loads = begunConfiguration.map { $0 != configuration } ?? true
        outstanding[i].budget?.begin(at: workClock.reading(at: MainContext.monotonicMicroseconds), loadsModel: loads)
        begunConfiguration = .some(configuration)
    }

    // MARK: death, hangs and restarts

    private func kill(_ worker: Process, _ why: WorkerKill) {
        guard worker.killed == nil else { return }
        worker.killed = why
        worker.close()
        worker.child.kill()
    }

    private func exited(_ worker: Process, _ status: ExitStatus) {
        // Frames still in the pipe (an `end` written just before the exit) count; read them without blocking.
        if worker.killed == nil {
            while case .data = readOnce(worker) { drainFrames(worker) }
            drainFrames(worker)
        }
        worker.close()
        process = nil
        watchdog.cancel()
        let end = WorkerExit(killed: worker.killed, status: status, stallLimit: workerStallLimit, engine: engineName)
        let reason = end.reason
        // The worker was on the first request; the cancelled ones need not be sent again.
        let head = outstanding.first
        outstanding.removeAll { $0.abandonedAt != nil }
        var lost: UInt32?
        if let head, head.abandonedAt == nil {
            if end.fromOutside && !head.started && !head.retried {
                outstanding[0].retried = true
                Log.message("\(reason); trying its request again with a new worker")
            } else {
                outstanding.removeFirst()
                lost = head.tag
            }
        }
        if end.failure && head != nil { failures += 1 }
        if hasWork || lost != nil {
            let delay = Self.restartDelay(afterFailures: failures)
            if delay > 0 {
                restartTimer.arm(milliseconds: delay) { [weak self] in
                    if let self, self.hasWork { self.startIfAllowed() }
                }
            }
        }
        if let lost { onLost?(lost, reason) }
        if hasWork { startIfAllowed() }
    }

    /// Reads and handles what the worker has sent and the loop has not read yet (a few reads at most: a worker
    /// that writes without end is not followed here), unless the reader holds its output.
    private func readPending(_ worker: Process) {
        for _ in 0..<16 {
            guard worker === process, worker.killed == nil, !(holding && headIsWanted),
                  case .data = readOnce(worker) else { return }
            drainFrames(worker)
        }
    }

    /// Sets the one timer the worker has while it has work to answer (and its output is not held back): it fires
    /// at the earliest deadline (no progress for `stallLimit`, a cancelled head still running after
    /// `cancelLimit`) and kills the worker when one passed. Set again whenever a request starts, ends or is
    /// cancelled, not on every read: a read only moves `lastProgress`, which the timer checks when it fires.
    private func armWatchdog() {
        watchdog.cancel()
        guard let worker = process, worker.killed == nil, hasWork, !(holding && headIsWanted) else { return }
        let now = MainContext.monotonicMicroseconds
        var due = lastProgress + workerStallLimit
        if let abandoned = outstanding.first?.abandonedAt { due = min(due, abandoned + Self.cancelLimit) }
        let wait = UInt32(max(1, min((due - now + 999) / 1_000, Int64(UInt32.max))))
        watchdog.arm(milliseconds: wait) { [weak self] in self?.watchdogFired() }
    }

    private func watchdogFired() {
        // Holding: waiting for the reader, not for the worker; re-armed when the reader takes audio again.
        guard let worker = process, worker.killed == nil, hasWork, !(holding && headIsWanted) else { return }
        let now = MainContext.monotonicMicroseconds
        if let abandoned = outstanding.first?.abandonedAt, now - abandoned >= Self.cancelLimit {
            Log.message("the synthesis worker did not give up a cancelled request; replacing it")
            kill(worker, .stuckOnCancel)
            return
        }
        if now - lastProgress >= workerStallLimit {
            // The daemon may have been the slow one: output waiting in the pipe is progress not read yet (a
            // budgeted client reads it now: only its frames say whether it is).
            if budgeted {
                readPending(worker)
                guard worker === process, worker.killed == nil else { return }
                if MainContext.monotonicMicroseconds - lastProgress < workerStallLimit { armWatchdog(); return }
                kill(worker, lastSignOfLife > lastProgress ? .noProgress : .stalled)
                return
            }
            if (try? worker.child.stdoutFD.wait(for: .readable, timeoutMilliseconds: 0)) == true {
                lastProgress = now
            } else {
                kill(worker, .stalled)
                return
            }
        }
        armWatchdog()
    }
}
