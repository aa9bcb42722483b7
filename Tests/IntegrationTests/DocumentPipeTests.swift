import Foundation
import Testing

extension Integration.Documents {
    @Test("an EPUB and a PDF on a pipe (`cat book.epub | lector read`) are told by their content and read as their files are; more than 32 MiB is one line")
    func pipedDocuments() async throws {
        let session = try await world()
        let epub = try await Self.make("epub", in: session)
        let ps = session.directory.appendingPathComponent("piped.ps")
        try Data(Self.postScript.utf8).write(to: ps)
        let pdf = session.directory.appendingPathComponent("piped.pdf").path
        let made = try await session.run("ps2pdf", [ps.path, pdf])
        try #require(made.status == 0, "ps2pdf: \(made)")
        let bus = try BusConnection(address: session.busAddress)
        for (path, options) in [(epub, [] as [String]), (pdf, []), (epub, ["--format", "epub"])] {
            let what = "\(path) \(options)"
            let mark = session.recorder.mark()
            // A real pipe, not a file as standard input.
            let read = try await session.run("/bin/sh", ["-c", #"f=$1; shift; cat "$f" | "$0" read --lang en "$@""#,
                                                         Paths.lectorBinary, path] + options)
            #expect(read.status == 0 && read.stderr.isEmpty, "\(what): \(read)\n\(session.daemonLogs())")
            #expect(await session.recorder.waitForSpeech(after: mark, timeout: 3) != nil, "\(what): nothing heard")
            let text = bus.property("org.lector.Lector", "/org/lector/Lector", "org.lector.Lector1", "Text") ?? ""
            #expect(text.contains("Three fishing boats") && !text.contains("PK") && !text.contains("%PDF"), "\(what): \(text)")
            try await session.quiesce()
        }
        let huge = try await session.run("/bin/sh", ["-c", #"head -c 34000000 /dev/zero | "$0" read"#, Paths.lectorBinary], timeout: 60)
        #expect(huge.status == 1 && huge.stderrLines.count == 1 && huge.stderr.contains("larger than 32 MiB"), "\(huge)")
        #expect(try await session.status().exitStatus == 0, "the daemon stopped answering\n\(session.daemonLogs())")
    }
}
