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
