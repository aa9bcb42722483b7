@preconcurrency import Glibc
import MarkdownKit
import SpeechCore
import SystemKit

/// The document worker (`lector-document FORMAT`): reads one document on standard input, writes the
/// text and structure it holds on standard output (`ImportedDocument.encoded`) and exits 0; or writes one line
/// saying why not (`DocumentWorker.failurePrefix`) and exits 1. It runs as a child of the daemon, so a parser
/// that crashes or hangs costs that document only; its own limits (`maximumInputBytes`, address space, CPU
/// time) bound what one document can cost.
public enum DocumentWorker {
    /// Largest document read (64 MiB).
    public static let maximumInputBytes = 64 << 20
    /// Most memory the worker may map (1 GiB, `RLIMIT_AS`): a parser that wants more fails instead of
    /// making the session swap.
    public static let maximumAddressSpace: rlim_t = 1 << 30
    /// Most CPU time (30 s, `RLIMIT_CPU`); the daemon's watchdog usually ends it first.
    public static let maximumCPUSeconds: rlim_t = 30
    /// The environment variable that carries an encrypted PDF's password to the worker.
    public static let passwordVariable = DocumentWorkerWire.passwordVariable
    /// The argument that starts a worker ahead of its document (`runWaiting`).
    public static let waitArgument = DocumentWorkerWire.waitArgument
    /// What starts a failure's line on standard output.
    public static let failurePrefix = DocumentWorkerWire.failurePrefix

    /// Runs the worker for `format` (a `DocumentFormat` raw value, or "zip" for a zip container told apart by
    /// its entries). PDFs are read only when `pdf` opens them (`lector-document-pdf` gives it; `lector-document`
    /// does not link poppler). Returns the exit status.
    public static func run(format: String, pdf: PDFOpener? = nil) -> Int32 {
        limitResources()
        fixTimeZone()
        let result: Result<ImportedDocument, ImportError>
        switch readInput() {
        case .success(let bytes):
            injectFault(into: bytes)
            result = importDocument(bytes, format: format, pdf: pdf) { start in
                _ = write(ImportedDocument.encodedStart(start))
            }
        case .failure(let error): result = .failure(error)
        }
        switch result {
        case .success(var document):
            return write(document.encodedHead) && write(&document.text) ? 0 : 1
        case .failure(let error):
            _ = write(Array((failurePrefix + error.description.split(whereSeparator: \.isNewline).joined(separator: " ") + "\n").utf8))
            return 1
        }
    }

    /// Runs a worker started ahead of its document (`lector-document --wait`, `DocumentWorkerWire.waitArgument`):
    /// calls `warmUp` (parse something small, so that the libraries' code and tables are in memory), then waits
    /// on standard input, a Unix socket, for the daemon's one `DocumentWorkerWire.handoff` message with the
    /// document's open file, makes that file its standard input and goes on as `run(format:pdf:)`. While it
    /// waits, its name (`/proc/PID/comm`, what `ps` and `top` show) is `lector-doc-wait`. Returns the exit
    /// status: 0 without reading anything when the daemon closes the socket (it exits, or drops the worker).
    public static func runWaiting(pdf: PDFOpener? = nil, warmUp: () -> Void = warmUpParsers) -> Int32 {
        limitResources()
        fixTimeZone()
        setProcessName("lector-doc-wait")
        warmUp()
        let message: (bytes: [UInt8], descriptor: FileDescriptor?)
        do throws(Errno) {
            message = try FileDescriptor.standardInput.receiveDescriptor(maximumBytes: DocumentWorkerWire.maximumHandoffBytes)
        } catch {
            fputs("lector-document: cannot receive the document: \(error)\n", stderr)
            return 1
        }
        guard let document = message.descriptor, let handoff = DocumentWorkerWire.parseHandoff(message.bytes) else {
            return message.bytes.isEmpty ? 0 : 1
        }
        guard dup2(document.rawValue, 0) == 0 else { return 1 }
        try? document.close()
        if let password = handoff.password { setenv(passwordVariable, password, 1) }
        setProcessName("lector-document")
        return run(format: handoff.format, pdf: pdf)
    }

    /// What a waiting worker parses before its document comes: a small XHTML page (libxml2's parser, its
    /// encodings and the HTML importer).
    public static func warmUpParsers() {
        let page = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">"
            + "<head><title>Warm</title></head><body><main><h1>Warm</h1><p>A paragraph, <em>warm</em>.</p></main></body></html>"
        _ = try? HTMLImporter.read(Array(page.utf8))
    }

    /// Caps this process's address space and CPU time (`maximumAddressSpace`, `maximumCPUSeconds`).
    private static func limitResources() {
        var limit = rlimit(rlim_cur: maximumAddressSpace, rlim_max: maximumAddressSpace)
        setrlimit(Int32(RLIMIT_AS.rawValue), &limit)
        limit = rlimit(rlim_cur: maximumCPUSeconds, rlim_max: maximumCPUSeconds)
        setrlimit(Int32(RLIMIT_CPU.rawValue), &limit)
    }

    /// Sets the time zone to UTC (`TZ=UTC0`). Nothing the worker writes depends on it, and without `TZ` glibc's
    /// `mktime`, which libarchive calls for every zip entry's DOS date, looks at `/etc/localtime` again on each
    /// call (a `stat` per entry header).
    private static func fixTimeZone() {
        setenv("TZ", "UTC0", 1)
        tzset()
    }

    /// Sets the name the kernel shows for this process (`/proc/self/comm`, at most 15 bytes; prctl(2)'s
    /// `PR_SET_NAME`, which Swift cannot call, being variadic).
    private static func setProcessName(_ name: String) {
        guard let file = fopen("/proc/self/comm", "w") else { return }
        fputs(name, file)
        fclose(file)
    }

    /// How much text a long document's start holds before it is sent ahead of the whole (16 K scalars, about
    /// a quarter of an hour of speech).
    static let startScalars = 16_384

    /// The text and structure of `bytes` read as `format` (a PDF opened with `pdf`). `onStart` receives the
    /// start of a long EPUB or PDF (at least `startScalars` in whole content documents, or the first pages) and
    /// its title, before the rest is read.
    static func importDocument(_ bytes: [UInt8], format: String, pdf: PDFOpener? = nil,
                               onStart: ((DocumentStart) -> Void)? = nil) -> Result<ImportedDocument, ImportError> {
        do throws(ImportError) {
            let document: ImportedDocument
            switch format {
            case DocumentFormat.html.rawValue: document = try HTMLImporter.read(bytes)
            case DocumentFormat.markdown.rawValue: document = try readMarkdown(bytes)
            case DocumentFormat.epub.rawValue: document = try EPUBImporter.read(bytes, onStart: onStart)
            case DocumentFormat.odt.rawValue: document = try ODTImporter.read(ZipEntries.read(bytes))
            case DocumentFormat.docx.rawValue: document = try DOCXImporter.read(ZipEntries.read(bytes))
            case DocumentFormat.pdf.rawValue:
                guard let pdf else { throw ImportError.malformed("PDFs are read by lector-document-pdf") }
                document = try PDFImporter.read(bytes, open: pdf, onStart: onStart)
            case "zip": document = try readZip(bytes, onStart: onStart)
            default: throw ImportError.malformed("unknown document format '\(format)'")
            }
            guard document.text.contains(where: { !$0.isWhitespace }) else {
                throw ImportError.nothingToRead("the document holds no text")
            }
            return .success(document)
        } catch {
            return .failure(error)
        }
    }

    /// Markdown: its front matter's title, authors and language are the document's (never read), its body is
    /// rendered by cmark-gfm and read as an HTML page's `main`, all of it (no article is chosen inside it).
    static func readMarkdown(_ bytes: [UInt8]) throws(ImportError) -> ImportedDocument {
        let markdown = Markdown.document(String(decoding: bytes, as: UTF8.self))
        var document = try HTMLImporter.read(Array(("<html><body><main>" + markdown.html + "</main></body></html>").utf8))
        let front = markdown.metadata
        document.structure.title = front.title ?? document.structure.title
        if !front.authors.isEmpty { document.structure.authors = front.authors }
        document.structure.language = front.language ?? document.structure.language
        return document
    }

    /// A zip container whose content type GIO did not tell: an EPUB (META-INF/container.xml), an OpenDocument
    /// text (content.xml) or a Word document (word/document.xml).
    static func readZip(_ bytes: [UInt8], onStart: ((DocumentStart) -> Void)?) throws(ImportError) -> ImportedDocument {
        let entries = try ZipEntries.read(bytes)
        if entries.names.contains("META-INF/container.xml") { return try EPUBImporter.read(bytes, onStart: onStart) }
        if entries.names.contains("word/document.xml") { return try DOCXImporter.read(entries) }
        if entries.names.contains("content.xml") { return try ODTImporter.read(entries) }
        throw .malformed("a zip archive that is not an EPUB, OpenDocument text or Word document")
    }

    /// `LECTOR_TEST_DOCUMENT_FAULT=abort:TEXT`, `hang:TEXT` or `slow:TEXT` makes the worker abort, hang, or
    /// wait one second on documents that contain TEXT, for the end-to-end tests; read by debug builds only,
    /// and nothing in Lector sets it.
    static let faultVariable = "LECTOR_TEST_DOCUMENT_FAULT"

    private static func injectFault(into bytes: [UInt8]) {
        #if DEBUG
        guard let value = getenv(faultVariable).map({ String(cString: $0) }), let colon = value.firstIndex(of: ":") else { return }
        let trigger = Array(value[value.index(after: colon)...].utf8)
        guard !trigger.isEmpty, bytes.count >= trigger.count,
              (0...(bytes.count - trigger.count)).contains(where: { bytes[$0..<($0 + trigger.count)].elementsEqual(trigger) }) else { return }
        switch value[..<colon] {
        case "abort": abort()
        case "hang": while true { pause() }
        case "slow": sleep(1)
        default: return
        }
        #endif
    }

    private static func readInput() -> Result<[UInt8], ImportError> {
        var bytes: [UInt8] = []
        // A file (as the daemon passes it) is read into storage of its size, not grown by doubling.
        var status = stat()
        if fstat(0, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG, status.st_size <= maximumInputBytes {
            bytes.reserveCapacity(Int(status.st_size) + 1)
        }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(0, $0.baseAddress, $0.count) }
            if n == 0 { return .success(bytes) }
            if n < 0 {
                if errno == EINTR { continue }
                return .failure(.malformed("cannot read the document: \(String(cString: strerror(errno)))"))
            }
            bytes.append(contentsOf: chunk[..<n])
            if bytes.count > maximumInputBytes {
                return .failure(.malformed("the document is larger than \(maximumInputBytes >> 20) MiB"))
            }
        }
    }

    /// Writes `text`'s UTF-8 as it is stored (made contiguous first if it is not), without a copy.
    private static func write(_ text: inout String) -> Bool {
        text.makeContiguousUTF8()
        return text.utf8.withContiguousStorageIfAvailable { write(UnsafeRawBufferPointer($0)) } ?? write(Array(text.utf8))
    }

    private static func write(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { write($0) }
    }

    private static func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(1, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 { if errno == EINTR { continue }; return false }
            offset += n
        }
        return true
    }
}
