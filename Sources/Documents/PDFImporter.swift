import SpeechCore

/// PDF documents (not read yet).
enum PDFImporter {
    static func read(_ bytes: [UInt8]) throws(ImportError) -> ImportedDocument {
        throw .malformed("PDF documents cannot be read yet")
    }
}
