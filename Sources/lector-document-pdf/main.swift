@preconcurrency import Glibc
import Documents
import PDFKit

// `lector-document-pdf pdf`: the document worker for PDFs (`Documents.DocumentWorker` with poppler-glib), run by
// the daemon once per PDF with the file as standard input. Poppler brings 41 shared libraries (cairo, NSS,
// lcms2, OpenJPEG, fontconfig, …) that no other format needs, so `lector-document` does not link it.

/// A PDF opened by poppler (PDFKit), as the PDF importer reads it.
final class PopplerPages: PDFPages {
    let document: PDFDocument
    init(_ document: PDFDocument) { self.document = document }
    var pageCount: Int { document.pageCount }
    var title: String? { document.title }
    var author: String? { document.author }
    func text(ofPage index: Int) -> String { document.text(ofPage: index) }
    func outlineEntries() -> [(title: String, page: Int, level: Int)] {
        document.outline().map { ($0.title, $0.page, $0.level) }
    }
}

setlocale(LC_ALL, "") // the same locale as the daemon that runs it
let arguments = CommandLine.arguments
guard arguments.count == 2 else {
    fputs("usage: lector-document-pdf FORMAT (run by lector-daemon, with the document on standard input)\n", stderr)
    exit(2)
}
exit(DocumentWorker.run(format: arguments[1]) { bytes, password in
    do throws(PDFError) { return .success(PopplerPages(try PDFDocument(bytes: bytes, password: password))) } catch {
        switch error {
        case .encrypted: return .failure(.encrypted)
        case .damaged(let why): return .failure(.damaged(why))
        }
    }
})
