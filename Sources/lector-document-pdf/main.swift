@preconcurrency import Glibc
import Documents
import PDFKit

// `lector-document-pdf pdf`: the document worker for PDFs (`Documents.DocumentWorker` with poppler-glib), run by
// the daemon once per PDF with the file as standard input, or started ahead (`--wait`) and handed its file
// later. Poppler brings 41 shared libraries (cairo, NSS, lcms2, OpenJPEG, fontconfig, …) that no other format
// needs, so `lector-document` does not link it.

/// A PDF opened by poppler (PDFKit), as the PDF importer reads it.
final class PopplerPages: PDFPages {
    let document: PDFDocument
    init(_ document: PDFDocument) { self.document = document }
    var pageCount: Int { document.pageCount }
    var title: String? { document.title }
    var author: String? { document.author }
    func lines(ofPage index: Int) -> [PDFLine] {
        document.lines(ofPage: index).map { PDFLine(text: $0.text, top: $0.top, left: $0.left) }
    }
    func outlineEntries() -> [(title: String, page: Int, level: Int)] {
        document.outline().map { ($0.title, $0.page, $0.level) }
    }
}

/// A one-page PDF with a line of Helvetica text, made with exact cross-reference offsets (ISO 32000-1, 7.5),
/// for a waiting worker to open before its document comes.
func warmUpPDF() -> [UInt8] {
    let stream = "BT /F1 12 Tf 72 720 Td (A warm line of text.) Tj ET"
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
        "<< /Length \(stream.utf8.count) >>\nstream\n\(stream)\nendstream",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    var pdf = "%PDF-1.4\n"
    var offsets: [Int] = []
    for (number, body) in objects.enumerated() {
        offsets.append(pdf.utf8.count)
        pdf += "\(number + 1) 0 obj\n\(body)\nendobj\n"
    }
    let xref = pdf.utf8.count
    pdf += "xref\n0 \(objects.count + 1)\n0000000000 65535 f \n"
    for offset in offsets {
        let digits = String(offset)
        pdf += String(repeating: "0", count: 10 - digits.count) + digits + " 00000 n \n"
    }
    pdf += "trailer\n<< /Size \(objects.count + 1) /Root 1 0 R >>\nstartxref\n\(xref)\n%%EOF\n"
    return Array(pdf.utf8)
}

setlocale(LC_ALL, "") // the same locale as the daemon that runs it
let arguments = CommandLine.arguments
guard arguments.count == 2 else {
    fputs("usage: lector-document-pdf FORMAT|--wait (run by lector-daemon, with the document on standard input)\n", stderr)
    exit(2)
}
let opener: PDFOpener = { bytes, password in
    do throws(PDFError) { return .success(PopplerPages(try PDFDocument(bytes: bytes, password: password))) } catch {
        switch error {
        case .encrypted: return .failure(.encrypted)
        case .damaged(let why): return .failure(.damaged(why))
        }
    }
}
if arguments[1] == DocumentWorker.waitArgument {
    exit(DocumentWorker.runWaiting(pdf: opener) {
        if let document = try? PDFDocument(bytes: warmUpPDF(), password: nil), document.pageCount > 0 {
            _ = document.text(ofPage: 0)
        }
    })
}
exit(DocumentWorker.run(format: arguments[1], pdf: opener))
