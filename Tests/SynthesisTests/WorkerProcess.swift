@preconcurrency import Glibc
import SystemKit
import Testing
@testable import Synthesis

/// A synthesis worker in a forked child process, talking over two pipes.
///
/// The child calls `Worker.run` and `_exit`s with its result, so an engine abort kills only the child.
final class WorkerProcess {
    enum Termination: Equatable, CustomStringConvertible {
        case exited(Int32)
        case signaled(Int32)

        var description: String {
            switch self {
            case let .exited(code): return "exited with \(code)"
            case let .signaled(signal): return "killed by signal \(signal)"
            }
        }
    }

    let pid: pid_t
    private(set) var toWorker: Int32
    let fromWorker: Int32
    private var decoder = WorkerFrameDecoder()
    private var readBuffer = [UInt8](repeating: 0, count: 1 << 16)
    private(set) var termination: Termination?

    init() {
        _ = signal(SIGPIPE, SIG_IGN)
        // Instantiate what the child runs before forking, so it does not need runtime locks that another
        // thread of the test process might hold at the moment of fork.
        var warm = WorkerRequestDecoder()
        warm.append(WorkerCodec.encode(.synthesize(tag: 0, text: "x"))[...])
        _ = try? warm.next()
        _ = WorkerCodec.encode(.word(tag: 0, start: 0, length: 0, sample: 0))

        var request: [Int32] = [0, 0], response: [Int32] = [0, 0]
        precondition(pipe(&request) == 0 && pipe(&response) == 0)
        // The built `lector worker` when there is one (exec right after fork: nothing of this multi-threaded
        // test process runs in the child); else the worker code itself in the forked child.
        let binary = Self.lectorBinary
        let argv: [UnsafeMutablePointer<CChar>?] = binary.map { [strdup($0), strdup("worker"), nil] } ?? []
        defer { for arg in argv { free(arg) } }
        let pid = fork()
        precondition(pid >= 0)
        if pid == 0 {
            close(request[1])
            close(response[0])
            if let path = argv.first ?? nil {
                _ = dup2(request[0], 0)
                _ = dup2(response[1], 1)
                _ = execv(path, argv)
                _exit(127)
            }
            _exit(Worker.run(input: FileDescriptor(rawValue: request[0]), output: FileDescriptor(rawValue: response[1])))
        }
        close(request[0])
        close(response[1])
        self.pid = pid
        self.toWorker = request[1]
        self.fromWorker = response[0]
    }

    /// The `lector` executable next to the test bundle (`swift build --build-tests` builds both), if any.
    static let lectorBinary: String? = {
        guard let exe = realpath("/proc/self/exe", nil) else { return nil }
        defer { free(exe) }
        var path = String(cString: exe)
        while let last = path.last, last != "/" { path.removeLast() }
        path += "lector"
        return access(path, X_OK) == 0 ? path : nil
    }()

    deinit {
        if termination == nil {
            kill(pid, SIGKILL)
            waitForExit(timeout: 5)
        }
        if toWorker >= 0 { close(toWorker) }
        close(fromWorker)
    }

    func send(_ request: WorkerRequest) {
        try? FileDescriptor(rawValue: toWorker).writeAll(WorkerCodec.encode(request))
    }

    func sendRaw(_ bytes: [UInt8]) {
        try? FileDescriptor(rawValue: toWorker).writeAll(bytes)
    }

    /// Closes the request pipe: the worker sees end of input.
    func closeInput() {
        close(toWorker)
        toWorker = -1
    }

    /// The next frame, nil at end of stream or after `timeout` seconds without one.
    func next(timeout: Double = 30) -> WorkerFrame? {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while true {
            do {
                if let frame = try decoder.next() { return frame }
            } catch {
                Issue.record("protocol error from worker: \(error)")
                return nil
            }
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { return nil }
            var p = pollfd(fd: fromWorker, events: Int16(POLLIN), revents: 0)
            let ms = Int32(min(milliseconds(remaining) + 1, 60_000))
            if poll(&p, 1, ms) <= 0 { continue }
            guard let n = try? FileDescriptor(rawValue: fromWorker).readWaiting(into: &readBuffer), n > 0 else { return nil }
            decoder.append(readBuffer[0..<n])
        }
    }

    /// Waits for the child to end (after `closeInput()`, or after it crashed), killing it after `timeout` s.
    @discardableResult
    func waitForExit(timeout: Double = 30) -> Termination {
        if let termination { return termination }
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        var status: Int32 = 0
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { break }
            if ContinuousClock.now > deadline {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                break
            }
            usleep(2000)
        }
        let result: Termination = status & 0x7F == 0 ? .exited((status >> 8) & 0xFF) : .signaled(status & 0x7F)
        termination = result
        return result
    }

    private func milliseconds(_ d: Duration) -> Double {
        Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
    }

    /// The answer to one synthesize request.
    struct Answer {
        var audio: [Int16] = []
        var chunks = 0
        var words: [(start: Int, length: Int, sample: Int)] = []
        var end: Int?
        var failure: String?
        var firstAudio: Duration?
        var elapsed: Duration = .zero
        /// The frames in arrival order, for ordering checks.
        var frames: [WorkerFrame] = []

        var seconds: Double { Double(audio.count) / 22050 }

        /// Samples louder than a whisper (|s| > 1000).
        var loudSamples: Int { audio.reduce(0) { $0 + (abs(Int($1)) > 1000 ? 1 : 0) } }

        func word(_ i: Int, in text: String) -> String {
            let scalars = Array(text.unicodeScalars)
            let w = words[i]
            return String(String.UnicodeScalarView(scalars[w.start..<(w.start + w.length)]))
        }
    }

    /// Sends `synthesize` and collects frames until its `.end` or `.failed` (nil if the stream ended first).
    func synthesize(_ text: String, tag: UInt32 = 1, ssml: Bool = false, timeout: Double = 60) -> Answer? {
        let start = ContinuousClock.now
        send(ssml ? .synthesizeSSML(tag: tag, markup: text) : .synthesize(tag: tag, text: text))
        var answer = Answer()
        while let frame = next(timeout: timeout) {
            answer.frames.append(frame)
            switch frame {
            case let .audio(t, samples):
                #expect(t == tag)
                if answer.firstAudio == nil { answer.firstAudio = ContinuousClock.now - start }
                answer.audio += samples
                answer.chunks += 1
            case let .word(t, s, l, sample):
                #expect(t == tag)
                answer.words.append((s, l, sample))
            case let .end(t, samples):
                #expect(t == tag)
                answer.end = samples
                answer.elapsed = ContinuousClock.now - start
                return answer
            case let .failed(t, message):
                #expect(t == tag)
                answer.failure = message
                answer.elapsed = ContinuousClock.now - start
                return answer
            case .ready:
                Issue.record("second ready frame")
            }
        }
        return nil
    }

    /// Starts a worker, checks its ready frame and configures it.
    static func started(voice: String = "en-us", rate: Int = 175, pitch: Int = 50) -> WorkerProcess {
        let worker = WorkerProcess()
        let ready = worker.next()
        #expect(ready == .ready(sampleRate: 22050))
        worker.send(.configure(voice: voice, rate: rate, pitch: pitch))
        return worker
    }
}
