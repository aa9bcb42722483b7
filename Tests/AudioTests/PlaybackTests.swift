import Foundation
import Testing
@testable import Audio

/// Plays into a private PulseAudio null sink and listens to its monitor with `parec`.
/// Serialized: each test owns the server and the process-wide $PULSE_SERVER while it runs.
@Suite(.serialized)
struct PlaybackTests {
    /// A connected server, a recorder that already receives data, and a stream fed from a tone on demand.
    final class Rig {
        let pulse: PrivatePulse
        let loop = Loop()
        let recorder: MonitorRecorder
        let server: SoundServer
        var states: [SoundServer.State] = []

        init(properties: [String: String] = [:]) throws {
            pulse = try PrivatePulse()
            let recorder = try MonitorRecorder(pulse)
            self.recorder = recorder
            loop.recorder = recorder
            // An idle null sink can take a while before data reaches a recorder.
            guard loop.run(timeout: 10, until: { recorder.samples.count > testRate / 10 }) else {
                throw FixtureError("no data from test.monitor")
            }
            server = SoundServer(applicationName: "Lector Tests", properties: properties,
                                 mainContext: loop.context)
            server.onStateChange = { [unowned self] in self.states.append($0) }
            server.connect()
            guard loop.run(timeout: 5, until: { self.server.state == .ready }) else {
                throw FixtureError("no connection: \(server.state)")
            }
        }
    }

    /// Feeds `signal` to a stream whenever the server asks, and drains after the last sample.
    final class Feeder {
        let stream: PlaybackStream
        let signal: [Int16]
        var next = 0
        var paused = false
        var firstWrite: (time: Double, recorded: Int)?
        var drained = false
        var failure: String?
        var playedAtDrain: Int64 = -1
        let recorder: MonitorRecorder

        init(_ stream: PlaybackStream, signal: [Int16], recorder: MonitorRecorder) {
            self.stream = stream
            self.signal = signal
            self.recorder = recorder
            stream.onWritable = { [unowned self] n in self.feed(n) }
            stream.onDrained = { [unowned self] in
                self.drained = true
                self.playedAtDrain = self.stream.playedSamples
            }
            stream.onFailed = { [unowned self] in self.failure = $0 }
        }

        var positions: [Int64] = []

        func feed(_ n: Int) {
            positions.append(stream.playedSamples)
            guard next < signal.count else { return }
            let end = min(signal.count, next + n)
            if firstWrite == nil { recorder.poll(); firstWrite = (now(), recorder.samples.count) }
            stream.write(signal[next..<end])
            next = end
            if next == signal.count { stream.drain() }
        }
    }

    @Test func playsAWholeToneAndDrains() throws {
        let rig = try Rig()
        let signal = testTone(2 * testRate)
        let stream = PlaybackStream(server: rig.server, name: "tone", sampleRate: testRate,
                                    properties: ["media.role": "accessibility"], corked: false)
        let feeder = Feeder(stream, signal: signal, recorder: rig.recorder)
        #expect(rig.loop.run(timeout: 3, until: { stream.playedSamples > Int64(testRate / 2) }))
        let sinkLatency = rig.pulse.run("pactl", ["list", "sinks"]).output
            .split(separator: "\n").filter { $0.contains("Latency") }.joined(separator: ";")
        print("[audio] buffer while playing: \(stream.bufferDescription ?? "?"); sink \(sinkLatency)")
        #expect(rig.loop.run(timeout: 6, until: { feeder.drained || feeder.failure != nil }))
        #expect(feeder.failure == nil)
        #expect(stream.writtenSamples == Int64(signal.count))
        #expect(feeder.playedAtDrain >= Int64(signal.count) - Int64(testRate) / 100)
        #expect(stream.underruns == 0)
        #expect(feeder.positions == feeder.positions.sorted(), "playedSamples never goes back")
        #expect(feeder.positions.count > 20)
        rig.loop.run(timeout: 0.3)

        let recording = rig.recorder.samples
        let pieces = locate(recording, in: signal)
        let (lost, repeated) = accounting(pieces, signalCount: signal.count)
        #expect(pieces.count == 1 && pieces.allSatisfy { $0.source != nil }, "\(pieces)")
        #expect(repeated == 0)
        #expect(ms(lost.reduce(0, +)) <= 10, "lost \(lost)")
        #expect(abs(ms(windows(recording).filter { $0 }.count * testRate / 100) - 2000) <= 30)
        if let first = pieces.first, let write = feeder.firstWrite,
           let heardAt = rig.recorder.arrivalTime(of: first.recorded.lowerBound) {
            print("[audio] start: first sound \(String(format: "%.1f", (heardAt - write.time) * 1000)) ms (wall clock, "
                  + "through parec) after the first write; monitor position \(ms(first.recorded.lowerBound - write.recorded)) ms "
                  + "after the recorder's position at the write; pieces \(pieces); lost \(lost); "
                  + "\(windows(recording).filter { $0 }.count) 10-ms windows of tone; "
                  + "playedSamples at drain \(feeder.playedAtDrain); underruns \(stream.underruns)")
        }
        stream.close()
    }

    /// The daemon's main loop also serves D-Bus and the synthesis worker: playback must survive short stalls.
    @Test(arguments: [10]) func survivesMainLoopStalls(stallMilliseconds: Int) throws {
        let rig = try Rig()
        let signal = testTone(2 * testRate)
        let stream = PlaybackStream(server: rig.server, name: "tone", sampleRate: testRate,
                                    properties: [:], corked: false)
        let feeder = Feeder(stream, signal: signal, recorder: rig.recorder)
        var nextStall = now() + 0.1
        #expect(rig.loop.run(timeout: 8, until: {
            if now() >= nextStall {
                usleep(useconds_t(stallMilliseconds * 1000))   // the loop is busy elsewhere
                nextStall = now() + 0.1
            }
            return feeder.drained || feeder.failure != nil
        }))
        print("[audio] \(stallMilliseconds) ms stalls every 100 ms: underruns \(stream.underruns)")
        #expect(stream.underruns == 0)
    }

    @Test func corkSilencesAtOnceAndUncorkLosesNothing() throws {
        let rig = try Rig()
        let signal = testTone(2 * testRate)
        let stream = PlaybackStream(server: rig.server, name: "tone", sampleRate: testRate,
                                    properties: [:], corked: false)
        let feeder = Feeder(stream, signal: signal, recorder: rig.recorder)
        #expect(rig.loop.run(timeout: 3, until: { stream.playedSamples >= Int64(testRate * 8 / 10) }))

        rig.recorder.poll()
        let corkRecorded = rig.recorder.samples.count
        let corkPlayed = stream.playedSamples
        let corkTime = now()
        stream.setCorked(true)
        #expect(stream.isCorked)
        rig.loop.run(timeout: 0.1)
        let frozen = stream.playedSamples
        rig.loop.run(timeout: 0.4)
        #expect(stream.playedSamples == frozen, "playedSamples does not move while corked")
        stream.setCorked(false)
        #expect(rig.loop.run(timeout: 4, until: { feeder.drained || feeder.failure != nil }))
        #expect(feeder.failure == nil)
        rig.loop.run(timeout: 0.3)

        let recording = rig.recorder.samples
        let pieces = locate(recording, in: signal)
        let (lost, repeated) = accounting(pieces, signalCount: signal.count)
        let toneWindows = windows(recording).filter { $0 }.count
        #expect(pieces.count == 2 && pieces.allSatisfy { $0.source != nil }, "one gap: \(pieces)")
        // The null sink renders ahead and rewinds at a cork, and its monitor cannot take back what it already
        // handed to the recorder: a few ms may be doubled in the recording (bench/analysis.md, "Exactness";
        // bench/exact-pipe-sink measures 0 on a sink that never rewinds). A repeat of the stream's own would
        // be a whole write, tens of ms.
        #expect(ms(repeated) <= 5, "nothing repeated: \(repeated) samples")
        #expect(ms(lost.reduce(0, +)) <= 30, "nothing lost: \(lost)")
        #expect(abs(ms(pieces.map(\.recorded.count).reduce(0, +)) - 2000) <= 30)
        #expect(stream.underruns == 0)
        if pieces.count == 2, let cut = pieces[0].source?.upperBound {
            let afterCall = cut - Int(corkPlayed)
            let silenceAt = rig.recorder.arrivalTime(of: pieces[0].recorded.upperBound)
            print("[audio] cork: \(String(format: "%.1f", ms(afterCall))) ms of tone played after setCorked(true) by the stream clock "
                  + "(played \(corkPlayed) at the call, tone cut at signal sample \(cut), playedSamples frozen at \(frozen)); "
                  + "last tone sample reached the recorder \(String(format: "%.1f", ((silenceAt ?? 0) - corkTime) * 1000)) ms after the call; "
                  + "monitor position of the cut \(ms(pieces[0].recorded.upperBound - corkRecorded)) ms after the recorder's position at the call; "
                  + "gap \(ms(pieces[1].recorded.lowerBound - pieces[0].recorded.upperBound)) ms; pieces \(pieces); lost \(lost); "
                  + "\(toneWindows) 10-ms windows of tone")
            #expect(ms(afterCall) <= 20)
            #expect(abs(Int(frozen) - cut) <= testRate / 100, "the frozen position is what was heard")
        }
        stream.close()
    }

    @Test func closeSilencesAtOnceAndCallsNothingMore() throws {
        let rig = try Rig()
        let signal = testTone(2 * testRate)
        let stream = PlaybackStream(server: rig.server, name: "tone", sampleRate: testRate,
                                    properties: [:], corked: false)
        let feeder = Feeder(stream, signal: signal, recorder: rig.recorder)
        #expect(rig.loop.run(timeout: 3, until: { stream.playedSamples >= Int64(testRate * 8 / 10) }))
        var callbacks = 0
        stream.drain()
        rig.recorder.poll()
        let closeRecorded = rig.recorder.samples.count
        let closePlayed = stream.playedSamples
        stream.close()
        stream.onWritable = { _ in callbacks += 1 }
        stream.onDrained = { callbacks += 1 }
        stream.onFailed = { _ in callbacks += 1 }
        stream.close()
        rig.loop.run(timeout: 0.6)
        #expect(callbacks == 0)
        #expect(stream.sinkInputIndex == nil)
        #expect(rig.pulse.run("pactl", ["list", "short", "sink-inputs"]).output.isEmpty)
        let pieces = locate(rig.recorder.samples, in: signal)
        #expect(pieces.count == 1 && pieces.allSatisfy { $0.source != nil }, "\(pieces)")
        if let piece = pieces.first, let cut = piece.source?.upperBound {
            print("[audio] close: \(String(format: "%.1f", ms(cut - Int(closePlayed)))) ms of tone after close() by the stream clock; "
                  + "monitor position of the cut \(ms(piece.recorded.upperBound - closeRecorded)) ms after the recorder's position at the call")
            #expect(ms(cut - Int(closePlayed)) <= 20)
        }
        _ = feeder
    }

    @Test func propertiesAndVolumeReachTheServer() throws {
        let rig = try Rig(properties: ["application.id": "org.lector.Lector",
                                       "application.icon_name": "org.lector.Lector"])
        let stream = PlaybackStream(server: rig.server, name: "Reading aloud", sampleRate: testRate,
                                    properties: ["media.role": "accessibility", "media.language": "fr-FR"],
                                    corked: true)
        stream.setVolume(0.5)
        #expect(rig.loop.run(timeout: 3, until: { stream.sinkInputIndex != nil }))
        rig.loop.run(timeout: 0.2)
        let listing = rig.pulse.run("pactl", ["list", "sink-inputs"]).output
        for line in ["media.role = \"accessibility\"", "media.name = \"Reading aloud\"",
                     "media.language = \"fr-FR\"", "application.name = \"Lector Tests\"",
                     "application.id = \"org.lector.Lector\"", "application.icon_name = \"org.lector.Lector\"",
                     "Corked: yes", "Sample Specification: s16le 1ch 22050Hz",
                     "Volume: mono: 52016 /  79%"] {
            #expect(listing.contains(line), "\(line) in\n\(listing)")
        }
        stream.setVolume(1)
        rig.loop.run(timeout: 0.2)
        #expect(rig.pulse.run("pactl", ["list", "sink-inputs"]).output.contains("Volume: mono: 65536 / 100%"))
        #expect(stream.playedSamples == 0)
        #expect(rig.server.serverDescription?.hasPrefix("pulseaudio") == true)
        stream.close()
    }

    /// A stream started corked and fed has played nothing (pa_stream_get_time counts the server's read-ahead
    /// on it), until it is uncorked.
    @Test func aStreamStartedCorkedHasPlayedNothing() throws {
        let rig = try Rig()
        let stream = PlaybackStream(server: rig.server, name: "tone", sampleRate: testRate, properties: [:], corked: true)
        let feeder = Feeder(stream, signal: testTone(testRate), recorder: rig.recorder)
        #expect(rig.loop.run(timeout: 3, until: { feeder.next > 0 }), "the corked stream asked for no data")
        rig.loop.run(timeout: 0.5)
        #expect(stream.playedSamples == 0)
        stream.setCorked(false)
        #expect(rig.loop.run(timeout: 3, until: { stream.playedSamples > Int64(testRate / 10) }))
        stream.close()
    }

    @Test func updatedPropertiesReachTheServer() throws {
        let rig = try Rig(properties: [:])
        let stream = PlaybackStream(server: rig.server, name: "Mixed", sampleRate: testRate,
                                    properties: ["media.role": "a11y", "media.language": "en"], corked: true)
        // Changed while the stream is being created: sent once it is ready.
        stream.updateProperties(["media.language": "de"])
        #expect(rig.loop.run(timeout: 3, until: { stream.sinkInputIndex != nil }))
        rig.loop.run(timeout: 0.2)
        var listing = rig.pulse.run("pactl", ["list", "sink-inputs"]).output
        #expect(listing.contains("media.language = \"de\""), "\(listing)")
        // Changed while it plays: replaced on the server, the other properties kept.
        stream.updateProperties(["media.language": "fr"])
        rig.loop.run(timeout: 0.2)
        listing = rig.pulse.run("pactl", ["list", "sink-inputs"]).output
        #expect(listing.contains("media.language = \"fr\""), "\(listing)")
        #expect(listing.contains("media.role = \"a11y\"") && listing.contains("media.name = \"Mixed\""), "\(listing)")
        stream.close()
    }

    @Test func writesBeforeConnectingPlayWhenReady() throws {
        let pulse = try PrivatePulse()
        let loop = Loop()
        let recorder = try MonitorRecorder(pulse)
        loop.recorder = recorder
        #expect(loop.run(timeout: 10, until: { recorder.samples.count > testRate / 10 }))
        let server = SoundServer(applicationName: "Lector Tests", properties: [:], mainContext: loop.context)
        let stream = PlaybackStream(server: server, name: "early", sampleRate: testRate, properties: [:], corked: true)
        let signal = testTone(testRate / 2)
        stream.write(signal[...])
        stream.drain()
        stream.setCorked(false)
        var drained = false
        stream.onDrained = { drained = true }
        #expect(stream.writableSamples == 0 && stream.sinkInputIndex == nil)
        loop.run(timeout: 0.2)
        #expect(server.state == .disconnected)
        server.connect()
        #expect(loop.run(timeout: 5, until: { drained }))
        loop.run(timeout: 0.3)
        let pieces = locate(recorder.samples, in: signal)
        #expect(pieces.count == 1 && pieces.allSatisfy { $0.source != nil }, "\(pieces)")
        #expect(ms(accounting(pieces, signalCount: signal.count).lost.reduce(0, +)) <= 10)
        withExtendedLifetime(pulse) {}
    }

    @Test func survivesTheServerDyingAndReconnects() throws {
        let rig = try Rig()
        let stream = PlaybackStream(server: rig.server, name: "tone", sampleRate: testRate, properties: [:], corked: false)
        let feeder = Feeder(stream, signal: testTone(4 * testRate), recorder: rig.recorder)
        var order: [String] = []
        rig.server.onStateChange = { state in order.append("server \(state)") }
        stream.onFailed = { reason in order.append("stream \(reason)") }
        #expect(rig.loop.run(timeout: 3, until: { stream.playedSamples > 2205 }))
        rig.loop.recorder = nil
        rig.pulse.kill()
        #expect(rig.loop.run(timeout: 3, until: { order.count >= 2 }))
        print("[audio] server killed: \(order)")
        #expect(order.count == 2)
        if case .failed = rig.server.state {} else { Issue.record("state \(rig.server.state)") }
        #expect(order.last?.hasPrefix("stream ") == true)
        rig.loop.run(timeout: 0.2)
        #expect(order.count == 2, "no callbacks after onFailed")
        #expect(stream.writableSamples == 0 && stream.sinkInputIndex == nil)
        stream.write(testTone(100)[...]); stream.setCorked(true); stream.drain(); stream.close()

        // Retrying while the server is down fails again, cleanly.
        rig.server.connect()
        #expect(rig.loop.run(timeout: 3, until: { if case .failed = rig.server.state { return true }; return false }))

        try rig.pulse.start()
        rig.server.connect()
        #expect(rig.loop.run(timeout: 5, until: { rig.server.state == .ready }))
        let again = PlaybackStream(server: rig.server, name: "again", sampleRate: testRate, properties: [:], corked: false)
        let feeder2 = Feeder(again, signal: testTone(testRate / 4), recorder: rig.recorder)
        #expect(rig.loop.run(timeout: 5, until: { feeder2.drained || feeder2.failure != nil }))
        #expect(feeder2.failure == nil)
        #expect(feeder2.playedAtDrain >= Int64(testRate / 4 - testRate / 100))
        rig.server.disconnect()
        #expect(rig.server.state == .disconnected)
        _ = feeder
    }

    /// The only sink goes away (as a USB headset would): the server kills the sink input.
    @Test func aStreamKilledOnTheServerFailsOnce() throws {
        let rig = try Rig()
        let stream = PlaybackStream(server: rig.server, name: "tone", sampleRate: testRate, properties: [:], corked: true)
        #expect(rig.loop.run(timeout: 3, until: { stream.sinkInputIndex != nil }))
        var reasons: [String] = []
        stream.onFailed = { reasons.append($0) }
        #expect(rig.pulse.run("pactl", ["unload-module", "module-null-sink"]).status == 0)
        #expect(rig.loop.run(timeout: 3, until: { !reasons.isEmpty }))
        rig.loop.run(timeout: 0.2)
        #expect(reasons.count == 1)
        print("[audio] sink removed: \(reasons)")
        #expect(rig.server.state == .ready)
        #expect(stream.sinkInputIndex == nil)
    }

    @Test func disconnectFailsStreamsOnce() throws {
        let rig = try Rig()
        let stream = PlaybackStream(server: rig.server, name: "tone", sampleRate: testRate, properties: [:], corked: true)
        #expect(rig.loop.run(timeout: 3, until: { stream.sinkInputIndex != nil }))
        var reasons: [String] = []
        stream.onFailed = { reasons.append($0) }
        rig.server.disconnect()
        rig.loop.run(timeout: 0.2)
        #expect(reasons == ["Disconnected from the sound server"])
        #expect(rig.server.state == .disconnected)
        #expect(rig.states.last == .disconnected)
    }
}
