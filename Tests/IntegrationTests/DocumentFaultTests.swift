import Foundation
import Testing

extension Integration {
    /// A document worker that crashes, hangs or is slow costs that document only: one line each, the daemon
    /// answers meanwhile, and a newer text is not read over by a document that comes back late.
    @Suite(.privateSession)
    struct DocumentFaults {
        static func page(_ words: String) -> Data {
            Data("<html><body><main><p>\(words)</p></main></body></html>".utf8)
        }

        @Test("a parser that aborts or hangs costs its document (one line); the daemon answers while it hangs")
        func crashAndHang() async throws {
            let session = try await world(.bare)
            let daemon = try await session.startDaemon(environment: [
                "LECTOR_TEST_DOCUMENT_FAULT": "abort:Boom", "LECTOR_TEST_DOCUMENT_TIMEOUT_MS": "1500",
            ])
            defer { Task { await daemon.stop() } }
            let boom = session.directory.appendingPathComponent("boom.html")
            try Self.page("Boom goes the parser.").write(to: boom)
            let crashed = try await session.lector(["read", "--file", boom.path])
            #expect(crashed.status == 1 && crashed.stderr.contains("signal 6"), "\(crashed)\n\(session.daemonLogs())")
            #expect(try await session.status().exitStatus == 0)
            await daemon.stop()

            let hanging = try await session.startDaemon(environment: [
                "LECTOR_TEST_DOCUMENT_FAULT": "hang:Stuck", "LECTOR_TEST_DOCUMENT_TIMEOUT_MS": "1500",
            ])
            defer { Task { await hanging.stop() } }
            let stuck = session.directory.appendingPathComponent("stuck.html")
            try Self.page("Stuck in the parser.").write(to: stuck)
            let reader = try session.spawn(Paths.lectorBinary, ["read", "--file", stuck.path], tag: "stuck-read")
            try await Task.sleep(for: .milliseconds(300))  // the worker is hanging now
            let during = try await session.status()
            #expect(during.exitStatus == 0 && reader.isRunning, "the daemon did not answer while the worker hung: \(during)")
            let status = await reader.waitForExit(timeout: 5)
            #expect(status == 1 && reader.stderr.contains("took longer than 1.5 s"), "\(reader.stderr)")
            let fine = try await session.lector(["read", "--lang", "en", "Still reading."])
            #expect(fine.status == 0, "\(fine)")
        }

        /// The daemon's children waiting for a document (`lector-document --wait` names itself so while it waits).
        static func waitingWorkers(_ daemon: Int32) -> [Int32] {
            Load.children(daemon).filter {
                (try? String(contentsOfFile: "/proc/\($0)/comm", encoding: .utf8))?.hasPrefix("lector-doc-wait") == true
            }
        }

        @Test("after a document a worker waits for the next, is handed it (a PDF's password too) and reads it; one killed while waiting costs nothing")
        func waitingWorker() async throws {
            let session = try await world(.bare)
            let daemon = try await session.startDaemon()
            defer { Task { await daemon.stop() } }
            let bus = try BusConnection(address: session.busAddress)
            func text() -> String { bus.property("org.lector.Lector", "/org/lector/Lector", "org.lector.Lector1", "Text") ?? "" }
            func read(_ name: String, _ words: String) async throws {
                let file = session.directory.appendingPathComponent(name)
                try Self.page(words).write(to: file)
                let read = try await session.lector(["read", "--lang", "en", "--file", file.path])
                #expect(read.status == 0, "\(read)\n\(session.daemonLogs())")
            }
            #expect(Self.waitingWorkers(daemon.pid).isEmpty, "a worker waits before any document was read")
            try await read("first.html", "The first page goes to a worker started for it.")
            let waiting = await poll(timeout: 5) { Self.waitingWorkers(daemon.pid) } until: { $0.count == 1 }
            try #require(waiting.count == 1, "no worker waits after a document: \(waiting)")

            let mark = session.recorder.mark()
            try await read("second.html", "The second page goes to the worker that waited.")
            #expect(await session.recorder.waitForSpeech(after: mark, timeout: 3) != nil, "nothing heard")
            #expect(text().contains("second page"), "\(text())")
            #expect(!Self.waitingWorkers(daemon.pid).contains(waiting[0]), "the waiting worker was not handed the document")

            // Killed while it waits: the next document is read by a worker started for it.
            let next = await poll(timeout: 5) { Self.waitingWorkers(daemon.pid) } until: { $0.count == 1 }
            try #require(next.count == 1 && next != waiting, "no new worker waits: \(next)")
            kill(next[0], SIGKILL)
            _ = await eventually(timeout: 2) { Self.waitingWorkers(daemon.pid).isEmpty }
            try await read("third.html", "The third page outlives a dead helper.")
            #expect(text().contains("third page"), "\(text())")

            // A PDF worker waits after a PDF, and takes an encrypted one with its password.
            let ps = session.directory.appendingPathComponent("book.ps")
            try Data(Documents.postScript.utf8).write(to: ps)
            let plain = session.directory.appendingPathComponent("plain.pdf").path
            let locked = session.directory.appendingPathComponent("locked.pdf").path
            for args in [[ps.path, plain], ["-sOwnerPassword=owner", "-sUserPassword=s3cret-pass", ps.path, locked]] {
                let made = try await session.run("ps2pdf", args)
                try #require(made.status == 0, "ps2pdf: \(made)")
            }
            #expect(try await session.lector(["read", "--file", plain]).status == 0)
            let pdfWaiting = await poll(timeout: 5) { Self.waitingWorkers(daemon.pid) } until: { $0.count == 2 }
            try #require(pdfWaiting.count == 2, "no PDF worker waits: \(pdfWaiting)")
            let wrong = try await session.lector(["read", "--password", "wrong", "--file", locked])
            #expect(wrong.status == 1 && wrong.stderr.contains("password is wrong"), "\(wrong)")
            _ = await eventually(timeout: 5) { Self.waitingWorkers(daemon.pid).count == 2 }
            let unlocked = try await session.lector(["read", "--password", "s3cret-pass", "--file", locked])
            #expect(unlocked.status == 0, "\(unlocked)\n\(session.daemonLogs())")
            #expect(text().contains("Three fishing boats"), "\(text())")
            try await session.quiesce()
        }

        @Test("a document that comes back after a newer text was asked for is not read over it")
        func newerTextWins() async throws {
            let session = try await world(.bare)
            let daemon = try await session.startDaemon(environment: ["LECTOR_TEST_DOCUMENT_FAULT": "slow:Slowly"])
            defer { Task { await daemon.stop() } }
            let slow = session.directory.appendingPathComponent("slow.html")
            try Self.page("Slowly opened page.").write(to: slow)
            let reader = try session.spawn(Paths.lectorBinary, ["read", "--file", slow.path], tag: "slow-read")
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await session.lector(["read", "--lang", "en", "A newer text wins."]).status == 0)
            let status = await reader.waitForExit(timeout: 5)
            #expect(status == 1 && reader.stderr.contains("another text was asked for"), "\(reader.stderr)")
            let bus = try BusConnection(address: session.busAddress)
            let text = bus.property("org.lector.Lector", "/org/lector/Lector", "org.lector.Lector1", "Text") ?? ""
            #expect(text.contains("A newer text wins.") && !text.contains("Slowly"), "\(text)")
        }
    }
}
