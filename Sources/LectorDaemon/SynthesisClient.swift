@preconcurrency import Glibc
import GLibKit
import Synthesis

/// The daemon's side of the synthesis worker (`lector worker`, a child process over eSpeak NG).
///
/// Sends requests, decodes the frames the worker streams back on the GLib main loop, and survives the
/// worker's death: the request it was working on is reported as lost (`onLost`), a new worker is started,
/// configured as before, and the requests after the lost one are sent again. Nothing here blocks the loop:
/// requests go into the worker's pipe in non-blocking mode, and what does not fit waits in `outbox` until the
/// pipe is writable again (the worker, busy writing audio the daemon has not read yet, may not read requests
/// for a while; a blocking write would deadlock the two).
final class SynthesisClient {
    /// A frame for a request still outstanding (stale tags are the owner's to ignore).
    var onFrame: ((WorkerFrame) -> Void)?
    /// The worker died while synthesizing the request `tag` (which will get no more frames), with a reason.
    var onLost: ((_ tag: UInt32, _ reason: String) -> Void)?
    /// The worker cannot be started at all: reading cannot go on.
    var onUnavailable: ((_ reason: String) -> Void)?

    private let argv: [String]
    private var process: ChildProcess?
    private var watch: Source?
    private var decoder = WorkerFrameDecoder()
    private var configuration: WorkerRequest?
    /// Requests sent and not yet answered with .end/.failed, oldest first, each with the configuration
    /// (voice, rate, pitch) it is to be read with.
    private var outstanding: [(tag: UInt32, request: WorkerRequest, configuration: WorkerRequest?)] = []
    private var nextTag: UInt32 = 1
    private var readBuffer = [UInt8](repeating: 0, count: 65_536)
    /// Encoded requests not yet written to the worker's stdin.
    private var outbox: [UInt8] = []
    private var writeWatch: Source?

    /// A client that runs `argv` (normally `[executablePath(), "worker"]`) when first needed.
    init(argv: [String]) {
        self.argv = argv
    }

    /// Number of requests not yet answered.
    var pending: Int { outstanding.count }

    /// Selects voice, rate (wpm) and pitch for the requests that follow; sent only when it changes.
    func configure(voice: String, rate: Int, pitch: Int) {
        let request = WorkerRequest.configure(voice: voice, rate: rate, pitch: pitch)
        guard request != configuration else { return }
        configuration = request
        if process != nil { send(request) }
    }

    /// Asks for `text` to be synthesized (as an SSML document when `ssml`); returns the tag its frames will carry.
    func synthesize(_ text: String, ssml: Bool = false) -> UInt32 {
        let tag = nextTag
        nextTag = nextTag == UInt32.max ? 1 : nextTag + 1
        let request: WorkerRequest = ssml ? .synthesizeSSML(tag: tag, markup: text) : .synthesize(tag: tag, text: text)
        outstanding.append((tag, request, configuration))
        if process == nil { start() } else { send(request) }
        return tag
    }

    /// Starts the worker now if none runs, so that its start (loading eSpeak NG and its data, ~10 ms) overlaps
    /// with preparing the first text instead of following it.
    func startEarly() {
        if process == nil { start() }
    }

    /// Ends the worker (at shutdown).
    func terminate() {
        watch?.cancel()
        watch = nil
        dropOutbox()
        process?.kill()
        process = nil
        outstanding.removeAll()
    }

    private func dropOutbox() {
        writeWatch?.cancel()
        writeWatch = nil
        outbox.removeAll()
    }

    private func start() {
        decoder = WorkerFrameDecoder()
        do {
            let child = try ChildProcess(argv: argv)
            process = child
            dropOutbox()
            let flags = fcntl(child.stdinFD, F_GETFL)
            _ = fcntl(child.stdinFD, F_SETFL, flags | O_NONBLOCK)
            watch = MainContext.watch(fd: child.stdoutFD) { [weak self] condition in
                self?.readable(condition) ?? false
            }
            child.onExit { [weak self, weak child] status in
                guard let self, let child, child === self.process else { return }
                self.died(status)
            }
        } catch {
            process = nil
            let reason = "cannot start the synthesis worker: \(error)"
            outstanding.removeAll()
            onUnavailable?(reason)
            return
        }
        // Each request again with its own voice (sentences of a mixed-language text differ), then the latest.
        var sent: WorkerRequest?
        for (_, request, config) in outstanding {
            if let config, config != sent { send(config); sent = config }
            send(request)
        }
        if let configuration, configuration != sent { send(configuration) }
    }

    private func send(_ request: WorkerRequest) {
        guard process != nil else { return }
        outbox.append(contentsOf: WorkerCodec.encode(request))
        flush()
    }

    /// Writes what the pipe takes now; the rest when it is writable again.
    private func flush() {
        guard let fd = process?.stdinFD else { return }
        var offset = 0
        while offset < outbox.count {
            let n = outbox[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n > 0 { offset += n; continue }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { break }
            // The worker is gone; its exit is handled by the watch and onExit (which sends everything again).
            dropOutbox()
            return
        }
        outbox.removeFirst(offset)
        if outbox.isEmpty {
            writeWatch?.cancel()
            writeWatch = nil
        } else if writeWatch == nil {
            writeWatch = MainContext.watchWritable(fd: fd) { [weak self] _ in
                guard let self else { return false }
                self.flush()
                let more = !self.outbox.isEmpty && self.writeWatch != nil
                if !more { self.writeWatch = nil }
                return more
            }
        }
    }

    private func readable(_ condition: FDCondition) -> Bool {
        guard let fd = process?.stdoutFD else { return false }
        let n = readBuffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n > 0 {
            decoder.append(readBuffer[0..<n])
            drainFrames()
            return true
        }
        if n < 0 && (errno == EINTR || errno == EAGAIN) { return true }
        // End of file: the worker exited or crashed. Its exit status arrives through onExit.
        watch = nil
        return false
    }

    private func drainFrames() {
        while true {
            let frame: WorkerFrame?
            do { frame = try decoder.next() } catch {
                Log.warning("synthesis worker sent a malformed frame (\(error)); restarting it")
                process?.kill()
                return
            }
            guard let frame else { return }
            switch frame {
            case .end(let tag, _), .failed(let tag, _):
                if let i = outstanding.firstIndex(where: { $0.tag == tag }) { outstanding.remove(at: i) }
            default: break
            }
            onFrame?(frame)
        }
    }

    private func died(_ status: ExitStatus) {
        // Frames still buffered in the pipe were read by the watch before EOF; decode what is left.
        if let fd = process?.stdoutFD {
            while true {
                let n = readBuffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                guard n > 0 else { break }
                decoder.append(readBuffer[0..<n])
            }
            drainFrames()
        }
        watch?.cancel()
        watch = nil
        dropOutbox()
        process = nil
        let reason: String
        switch status {
        case .exited(let code): reason = "the synthesis worker exited with status \(code)"
        case .signaled(let sig): reason = "eSpeak NG crashed (signal \(sig))"
        }
        guard !outstanding.isEmpty else { return } // idle worker gone: start a new one on demand
        let lost = outstanding.removeFirst()
        onLost?(lost.tag, reason)
        if !outstanding.isEmpty { start() }
    }
}
