@preconcurrency import Glibc
import Documents

// `lector-document FORMAT`: the document worker (`Documents.DocumentWorker`), run by the daemon once per
// document with the file as standard input, or started ahead (`--wait`) and handed its file later. It links
// the document libraries only (libxml2, libarchive, cmark), not poppler (PDFs go to `lector-document-pdf`),
// eSpeak NG, PulseAudio, ICU or CLD2, so that a document's worker starts fast.
setlocale(LC_ALL, "") // the same locale as the daemon that runs it
let arguments = CommandLine.arguments
guard arguments.count == 2 else {
    fputs("usage: lector-document FORMAT|--wait (run by lector-daemon, with the document on standard input)\n", stderr)
    exit(2)
}
exit(arguments[1] == DocumentWorker.waitArgument ? DocumentWorker.runWaiting() : DocumentWorker.run(format: arguments[1]))
