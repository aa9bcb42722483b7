import Foundation
import Testing

extension Integration.MPRISControl {
    @Test("LoopStatus Track repeats the sentence, Playlist the text, None stops at the end; lector repeat and status; no Shuffle")
    func loopStatus() async throws {
        let session = try await world(.mprisQuiet)
        let bus = try session.bus()
        #expect(bus.status == "Stopped")
        // Shuffle is not published: not in GetAll, not settable.
        #expect(try bus.getAll(MPRIS.player)["Shuffle"] == nil)
        #expect(throws: (any Error).self) { try bus.set("Shuffle", .bool(true)) }
        #expect(throws: (any Error).self) { try bus.set("LoopStatus", .string("Bogus")) }
        #expect(try bus.get("LoopStatus").string == "None")

        // Track: the first sentence, about 1 s long, is still the one being read 3 s later.
        let repeated = try await session.lector(["repeat", "sentence"])
        #expect(repeated.stdout == "repeat: sentence\n", "\(repeated)")
        #expect(try bus.get("LoopStatus").string == "Track")
        let first = "The first sentence repeats.", second = "The second one follows."
        _ = try await session.lector(["read", "--lang", "en", "\(first) \(second)"])
        _ = try await session.waitForSentence(containing: "first", timeout: 3)
        try await Task.sleep(for: .milliseconds(3000))  // the span under test: three readings of the first sentence
        var status = try await session.status()
        #expect(status.state == "reading" && status.sentence == first, "\(status)")
        #expect(status.fields["repeat"] == "sentence", "\(status)")

        // Playlist (set over MPRIS): the second sentence comes, and after it the first again, still reading.
        try bus.set("LoopStatus", .string("Playlist"))
        #expect(try await session.lector(["repeat"]).stdout == "repeat: all\n")
        _ = try await session.waitForSentence(containing: "second", timeout: 5)
        status = try await session.waitForSentence(containing: "first", timeout: 5)
        #expect(status.state == "reading" && status.sentence == first, "the text did not start again: \(status)")

        // None: reading ends after the text.
        _ = try await session.lector(["repeat", "off"])
        #expect(try bus.get("LoopStatus").string == "None")
        status = try await session.waitForState("stopped", timeout: 10)
        #expect(status.state == "stopped", "\(status)")
        #expect(try await session.lector(["repeat", "sometimes"]).status == 2)
    }
}
