import Testing
@testable import Audio

extension PlaybackTests {
    /// `keepConnected`: after a loss, attempts after 0.2 s, 0.4 s, then every 0.8 s (the test's policy), with
    /// nothing in between; the server back on the same socket is found without any call; `disconnect` ends it.
    @Test func keepConnectedReconnectsByItselfWithABackoff() throws {
        let rig = try Rig()
        var attempts: [Double] = []
        var lostAt: Double?
        rig.server.keepConnected(firstDelayMilliseconds: 200, maximumDelayMilliseconds: 800)
        rig.server.onStateChange = { state in
            switch state {
            case .connecting: attempts.append(now())
            case .failed: if lostAt == nil { lostAt = now() }
            default: break
            }
        }
        rig.loop.recorder = nil
        rig.pulse.kill()
        #expect(rig.loop.run(timeout: 3, until: { lostAt != nil }))
        rig.loop.run(timeout: 2.5)
        let delays = attempts.map { $0 - lostAt! }
        print("[audio] reconnection attempts after the loss: \(delays.map { String(format: "%.2f", $0) })")
        // 0.2, 0.6, 1.4, 2.2 s after the loss (each attempt fails at once: nothing listens on the socket).
        #expect((3...5).contains(delays.count), "\(delays)")
        #expect(delays.first.map { $0 >= 0.15 && $0 < 0.5 } == true, "\(delays)")
        for (a, b) in zip(delays, delays.dropFirst()) { #expect(b - a >= 0.3 && b - a <= 1.2, "\(delays)") }
        #expect(rig.server.isWaitingToReconnect)

        try rig.pulse.start()
        #expect(rig.loop.run(timeout: 3, until: { rig.server.state == .ready }), "\(rig.server.state)")
        let stream = PlaybackStream(server: rig.server, name: "again", sampleRate: testRate, properties: [:], corked: false)
        #expect(rig.loop.run(timeout: 3, until: { stream.sinkInputIndex != nil }))
        stream.close()

        rig.server.disconnect()
        #expect(rig.server.state == .disconnected && !rig.server.isWaitingToReconnect)
        let count = attempts.count
        rig.loop.run(timeout: 1.2)
        #expect(attempts.count == count, "an attempt after disconnect()")
    }
}
