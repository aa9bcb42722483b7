@preconcurrency import Glibc
import GLibKit
import LectorCommon
import SpeechCore

/// `lector read --output FILE` of a file: a document (EPUB, PDF, HTML, Markdown, ODT, DOCX) is read by the
/// document worker as the daemon reads it (`DocumentReader`, a child process with its watchdog and limits),
/// so that the audio file gets the document's title, authors, language and chapters (`TextStructure`).
extension DaemonCommands {
    /// Renders the file open as `file` to an audio file as `render` says. Its format is told by its content
    /// and name as the daemon tells it (`Reader.documentFormat`; `--format` names the audio format here, so
    /// never the input's): a document is read in the document worker, anything else as text (`render(_:)`).
    /// Returns the exit status: 0, 1 after one line when the file or document cannot be read or rendered,
    /// 130 when interrupted.
    public func render(file: Input.OpenFile, options: SpeakOptions, render: RenderOptions) -> Int32 {
        let what = file.title ?? "standard input"
        var options = options
        options.format = nil
        let format: String?
        do { format = try Reader.documentFormat(options: options, name: file.title, head: file.head(OpenPolicy.sniffedBytes)) } catch {
            printError(error.message)
            return 1
        }
        guard let format else {
            switch Input.read(file, what: what) {
            case .success(let text):
                options.ssml = options.ssml || text.ssml
                return self.render(text.text, options: options, render: render)
            case .failure(let failure):
                printError(failure.message)
                return 1
            }
        }
        let fd = fcntl(file.descriptor, F_DUPFD_CLOEXEC, 3)
        guard fd >= 0 else { printError("cannot hand \(what) to its reader: \(String(cString: strerror(errno)))"); return 1 }
        lseek(fd, 0, SEEK_SET)
        let document: ImportedDocument
        switch Self.readDocument(descriptor: fd, format: format, password: options.password) {
        case .success(let read): document = read
        case .failure(let failure):
            printError("cannot read \(what): \(failure.message)")
            return 1
        }
        options.ssml = false
        options.password = nil
        options.title = document.structure.title ?? options.title
        let preparer = UtterancePreparer()
        for problem in preparer.loadConfiguration() { printError("warning: " + problem) }
        do {
            var utterance = try preparer.prepare(document.text, options: options, declared: document.structure)
            utterance.structure = document.structure
            return OfflineRenderer(utterance: utterance, options: render, workerArgv: [executablePath(), "worker"]).run()
        } catch {
            printError(error.message)
        }
        return 1
    }

    /// Reads the document open on `descriptor` (taken) as `format` in the document worker, iterating GLib's
    /// main context until it is read, fails, or its watchdog gives up (`DocumentReader.timeoutMilliseconds`).
    /// Only for the command line: the daemon must never wait like this.
    static func readDocument(descriptor: Int32, format: String, password: String?) -> Result<ImportedDocument, DocumentFailure> {
        let reader = DocumentReader()
        var result: Result<ImportedDocument, DocumentFailure>?
        reader.read(descriptor: descriptor, format: format, password: password) { result = $0 }
        while result == nil { _ = MainContext.iterate(mayBlock: true) }
        return result ?? .failure(DocumentFailure(message: "no answer from the document reader"))
    }
}
