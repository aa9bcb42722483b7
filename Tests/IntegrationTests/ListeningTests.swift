import Foundation
import Testing

extension Integration {
    /// What people who listen for hours expect of a player: errors reach them on screen.
    @Suite(.privateSession)
    struct Listening {
        /// A sentence that makes libespeak-ng 1.51 abort (see shared/bad-inputs/engine-crash-apostrophes.txt).
        static let crashingSentence = String(repeating: "s'", count: 220)

        @Test("a failed reading is one desktop notification, not one per lost sentence")
        func failureNotifiesOnce() async throws {
            let session = try PrivateSession.require()
            let server = try FakeNotificationServer(busAddress: session.busAddress)
            defer { server.stop() }
            try await session.ensureDaemon()
            try await session.quiesce()

            let text = "First words. \(Self.crashingSentence). Middle words. \(Self.crashingSentence). Last words."
            let read = try await session.lector(["read", "--wait", text], timeout: 60)
            #expect(read.status == 0, "\(read)")
            try await Task.sleep(for: .milliseconds(500))
            let seen = server.notifications
            #expect(seen.count == 1, "notifications: \(seen)\n\(session.daemonLogs())")
            if let first = seen.first {
                #expect(first.appName == "Lector")
                #expect(first.summary.contains("Lector"), "\(first)")
                #expect(!first.body.isEmpty, "\(first)")
            }

            // A good reading afterwards notifies nothing; the next failing one notifies again.
            let fine = try await session.lector(["read", "--wait", "hello"], timeout: 30)
            #expect(fine.status == 0, "\(fine)")
            _ = try await session.lector(["read", "--wait", "Again. \(Self.crashingSentence)."], timeout: 60)
            try await Task.sleep(for: .milliseconds(500))
            #expect(server.notifications.count == 2, "notifications: \(server.notifications)")
            #expect(server.notifications.last?.replacesID == 1, "the second notification should replace the first")
        }
    }
}
