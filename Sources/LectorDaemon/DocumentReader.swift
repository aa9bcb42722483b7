@preconcurrency import Glibc
import GLibKit
import SpeechCore
import SystemKit

/// Reads documents (EPUB, PDF, HTML, Markdown, ODT, DOCX) in the document worker, a child process per
/// document (`lector-document FORMAT`, `Documents.DocumentWorker`), so that a parser that crashes or
/// hangs costs that document, never the daemon. Nothing here blocks the main loop: the worker reads the open
/// file itself (its standard input), its output is read as it comes (non-blocking), and a watchdog kills it
/// after `timeoutMilliseconds`.
final class DocumentReader {
    /// How long one document may take to read (20 s; in debug builds only, `LECTOR_TEST_DOCUMENT_TIMEOUT_MS`
    /// for the end-to-end tests, which nothing in Lector sets).
    static let timeoutMilliseconds: UInt32 = {
        #if DEBUG
        if let value = getenv("LECTOR_TEST_DOCUMENT_TIMEOUT_MS").flatMap({ UInt32(String(cString: $0)) }) { return value }
        #endif
        return 20_000
    }()
    /// Most bytes the worker may send back (64 MiB of text and structure).
    static let maximumOutputBytes = 64 << 20

    /// How long after a worker of a program was used its successor is started to wait (ms): past the first
    /// sound of the document being read, so the start does not compete with it for the processor.
    static let successorDelayMilliseconds: UInt32 = 500

    private let argv: (String) -> [String]
    /// Imports under way, kept alive until they end.
    private var running: [ObjectIdentifier: Import] = [:]
    /// Whether a worker is kept waiting for the next document of each program used (the daemon, which reads
    /// many documents; not the command line's one-shot reader).
    private let keepsWorkersWaiting: Bool
    /// Workers started ahead and waiting for a document, by program (`argv(format)[0]`).
    private var waiting: [String: WaitingWorker] = [:]
    /// The timers that start a program's next waiting worker.
    private var successorTimers: [String: OneShotTimer] = [:]

    /// A reader that runs `argv(format) + [format]` per document (normally `workerArgv(format:)`). With
    /// `keepsWorkersWaiting`, once a program has read a document, one more of it is started ahead
    /// (`argv(format) + ["--wait"]`, `DocumentWorker.runWaiting`) and waits, its libraries loaded and warmed
    /// up, to be handed the next document (its open file passed over a Unix socket): that saves the next
    /// document the worker's start (for a PDF, loading poppler's 41 libraries). Each worker still reads one
    /// document only, so a crash costs that document alone.
    init(argv: @escaping (String) -> [String] = DocumentReader.workerArgv(format:), keepsWorkersWaiting: Bool = false) {
        self.argv = argv
        self.keepsWorkersWaiting = keepsWorkersWaiting
    }

    /// How the document worker for `format` is started: `lector-document-pdf` for a PDF, `lector-document`
    /// for the rest, found by `siblingExecutable` (next to this executable: the build folder, or
    /// PREFIX/libexec/lector where meson installs them). They alone link the document libraries (libxml2, libarchive,
    /// cmark, and for PDFs poppler with its 41 libraries; ICU comes with libxml2), so the daemon maps none of
    /// them and a document's worker starts fast; a document that is not a PDF does not wait for poppler's.
    static func workerArgv(format: String) -> [String] {
        let name = format == DocumentFormat.pdf.rawValue ? "lector-document-pdf" : "lector-document"
        return [siblingExecutable(name) ?? executableDirectory() + "/" + name]
    }

    /// Reads the document open on `descriptor` (taken: closed by this call or the child) as `format` (a
    /// `DocumentFormat` raw value, or "zip"), and calls `done` once on the main loop with its text and
    /// structure, or one line that says why it cannot be read. `password` opens an encrypted PDF; it reaches
    /// the worker in its environment or its handoff message, never in its arguments.
    ///
    /// `onStart` is called first, once, with the start of the text, the title and the start's language marks,
    /// when the worker sends them before the whole (`ImportedDocument.encodedStart`: long EPUBs and PDFs); the
    /// whole text then begins with that start.
    func read(descriptor: Int32, format: String, password: String? = nil, onStart: ((DocumentStart) -> Void)? = nil,
              done: @escaping (Result<ImportedDocument, DocumentFailure>) -> Void) {
        let program = argv(format)
        let child: ChildProcess
        if let handed = handOff(descriptor, to: program[0], format: format, password: password) {
            child = handed
        } else {
            let environment = password.map { [DocumentWorkerWire.passwordVariable: $0] } ?? [:]
            do { child = try ChildProcess(argv: program + [format], standardInput: descriptor, environment: environment) } catch {
                done(.failure(DocumentFailure(message: "cannot start the document reader: \(error.message)")))
                return
            }
        }
        if keepsWorkersWaiting { startSuccessor(program) }
        let job = Import(child: child)
        let key = ObjectIdentifier(job)
        running[key] = job
        try? child.stdoutFD.setNonBlocking()
        let finish: (Result<ImportedDocument, DocumentFailure>) -> Void = { [weak self] result in
            guard let job = self?.running.removeValue(forKey: key) else { return }
            job.watch?.cancel()
            job.timer.cancel()
            job.child.kill()
            done(result)
        }
        job.timer.arm(milliseconds: Self.timeoutMilliseconds) {
            finish(.failure(DocumentFailure(message: "the document took longer than \(Double(Self.timeoutMilliseconds) / 1000) s to read; gave up")))
        }
        job.watch = MainContext.watch(fd: child.stdoutFD) { _ in
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let n: Int?
                do throws(Errno) { n = try nilIfWouldBlock { () throws(Errno) -> Int in try child.stdoutFD.read(into: &chunk) } } catch { n = 0 }
                guard let n else { return true }  // nothing more for now
                if n == 0 { break }
                job.output.append(contentsOf: chunk[..<n])
                if !job.startSeen, let (start, used) = ImportedDocument.decodeStart(job.output) {
                    job.startSeen = true
                    job.output.removeFirst(used)
                    onStart?(start)
                }
                if !job.sized { job.sized = Self.reserveForText(&job.output) }
                if job.output.count > Self.maximumOutputBytes {
                    finish(.failure(DocumentFailure(message: "the document's text is larger than \(Self.maximumOutputBytes >> 20) MiB")))
                    return false
                }
            }
            job.watch = nil
            child.onExit { status in finish(Self.result(of: job.output, status: status)) }
            return false
        }
    }

    /// Hands the document open on `descriptor` to the worker of `program` waiting for one, if there is one
    /// and it takes it (closing this process's copy of the descriptor); nil otherwise, the descriptor untouched.
    private func handOff(_ descriptor: Int32, to program: String, format: String, password: String?) -> ChildProcess? {
        guard let worker = waiting.removeValue(forKey: program) else { return nil }
        guard let message = DocumentWorkerWire.handoff(format: format, password: password) else {
            worker.child.kill()
            return nil
        }
        do throws(Errno) {
            try worker.socket.send(message, passing: FileDescriptor(rawValue: descriptor))
        } catch {
            worker.child.kill()  // gone, or not listening: the document goes to a worker started for it
            return nil
        }
        close(descriptor)
        return worker.child
    }

    /// Starts, after `successorDelayMilliseconds`, a worker of `program` that waits for the next document,
    /// unless one waits already. A waiting worker that dies is not replaced until its program is used again.
    private func startSuccessor(_ program: [String]) {
        let timer = successorTimers[program[0], default: OneShotTimer()]
        successorTimers[program[0]] = timer
        timer.arm(milliseconds: Self.successorDelayMilliseconds) { [weak self] in
            guard let self, self.waiting[program[0]] == nil else { return }
            guard let worker = try? WaitingWorker(argv: program + [DocumentWorkerWire.waitArgument]) else { return }
            self.waiting[program[0]] = worker
            worker.child.onExit { [weak self, weak worker] _ in
                guard let self, let worker, self.waiting[program[0]] === worker else { return }
                self.waiting[program[0]] = nil
            }
        }
    }

    /// A worker started ahead, waiting on its end of a socket pair for a document (`DocumentWorker.runWaiting`).
    /// Dropping it closes this end: a worker still waiting then exits.
    private final class WaitingWorker {
        let child: ChildProcess
        /// This process's end of the socket the document is handed over on (non-blocking).
        let socket: FileDescriptor

        init(argv: [String]) throws {
            let (near, far) = try FileDescriptor.socketPair()
            do { child = try ChildProcess(argv: argv, standardInput: far.rawValue) } catch {
                try? near.close()  // `far` is closed by the failed launch
                throw error
            }
            socket = near
            try? socket.setNonBlocking()
        }

        deinit { try? socket.close() }
    }

    /// What the worker's output and exit status say.
    static func result(of output: [UInt8], status: ExitStatus) -> Result<ImportedDocument, DocumentFailure> {
        if status == .exited(0), let document = ImportedDocument(encoded: output) { return .success(document) }
        let text = String(decoding: output.prefix(4096), as: UTF8.self)
        if text.hasPrefix(DocumentWorkerWire.failurePrefix) {
            let line = text.dropFirst(DocumentWorkerWire.failurePrefix.count).split(whereSeparator: \.isNewline).first ?? ""
            return .failure(DocumentFailure(message: String(line)))
        }
        switch status {
        case .signaled(let signal):
            return .failure(DocumentFailure(message: "the document reader was killed by signal \(signal) (\(String(cString: strsignal(signal))))"))
        case .exited(let code):
            return .failure(DocumentFailure(message: "the document reader failed (exit status \(code))"))
        }
    }

    /// Once the header of `ImportedDocument.encoded` at the start of `output` has come whole, reserves room for
    /// the text it announces (at most `maximumOutputBytes` in all), so that a long text's bytes are not copied
    /// again at every doubling of the buffer. Returns whether that is settled: reserved, or not to be (no
    /// such header, or none in the first MiB).
    static func reserveForText(_ output: inout [UInt8]) -> Bool {
        let head = Array("lector-document 1\n".utf8)
        guard output.count >= head.count else { return false }
        guard output.starts(with: head) else { return !output.starts(with: Array("lector-start\t".utf8)) }
        guard let marker = output.firstRange(of: Array("\ntext\t".utf8)),
              let end = output[marker.upperBound...].firstIndex(of: 10) else { return output.count > 1 << 20 }
        if let count = Int(String(decoding: output[marker.upperBound..<end], as: UTF8.self)), count >= 0 {
            output.reserveCapacity(min(maximumOutputBytes, end + 1 + min(count, maximumOutputBytes)))
        }
        return true
    }

    /// One document being read.
    private final class Import {
        let child: ChildProcess
        var output: [UInt8] = []
        /// Whether `output`'s room for the whole text is settled (`reserveForText`).
        var sized = false
        /// Whether the start record has been taken off `output` (or cannot come any more).
        var startSeen = false
        var watch: Source?
        let timer = OneShotTimer()
        init(child: ChildProcess) { self.child = child }
    }

    /// The format of a file from its content type, as GIO guesses it from its name and first bytes
    /// (`byName`) and from its first bytes alone (`byData`): the bytes win for binary containers (a PDF or
    /// a zip named `.txt` is read as what it is), the name decides between text formats (Markdown, HTML by
    /// its `.html`). Nil: plain text (or SSML), read as today.
    static func format(byName: String, byData: String) -> String? {
        if let format = DocumentFormat(contentType: byData), format != .text { return format.rawValue }
        if byData == DocumentFormat.zipped || ContentType.isA(byData, DocumentFormat.zipped) { return "zip" }
        if let format = DocumentFormat(contentType: byName), format == .html || format == .markdown,
           ContentType.isA(byData, "text/plain") || byData == byName {
            return format.rawValue
        }
        return nil
    }
}

/// Why a document cannot be read: one line.
struct DocumentFailure: Error {
    /// The line.
    var message: String
}
