import Foundation
import GLibKit
import Synthesis
import Testing
@testable import LectorDaemon

/// `SynthesisClient` against the real worker (`lector-daemon worker`, built beside this test executable): the
/// rate it announces is the rate the client was made for, or the worker is replaced and its request lost.
/// Serialized: each test runs the default GLib main context.
@Suite(.serialized) struct SynthesisClientTests {
    /// `lector-daemon` beside the running test executable (the same build folder).
    static let daemon: String? = {
        guard let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
        let path = URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("lector-daemon").path
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }()

    /// What became of one request: its audio in samples and how it ended.
    struct Outcome { var samples = 0; var ended = false; var lost: String? }

    /// Synthesizes one sentence with a client that expects `sampleRate`, running the main loop until the
    /// request ends or is lost (at most 10 s).
    func synthesize(expecting sampleRate: Int, daemon: String) -> Outcome {
        let client = SynthesisClient(argv: [daemon, "worker"], sampleRate: sampleRate)
        let loop = MainLoop()
        let deadline = OneShotTimer()
        var outcome = Outcome()
        client.onFrame = { frame in
            switch frame {
            case .audio(_, let samples): outcome.samples += samples.count
            case .end: outcome.ended = true; loop.quit()
            default: break
            }
        }
        client.onLost = { _, reason in outcome.lost = reason; loop.quit() }
        client.configure(voice: "gmw/en-US", rate: 175, pitch: 50)
        client.synthesize("Hello there.", tag: 1, ssml: false)
        deadline.arm(milliseconds: 10_000) { loop.quit() }
        loop.run()
        client.terminate()
        return outcome
    }

    @Test func audioComesAtTheAnnouncedRate() throws {
        let daemon = try #require(Self.daemon, "lector-daemon is built beside the tests")
        let outcome = synthesize(expecting: WorkerFrame.eSpeakSampleRate, daemon: daemon)
        #expect(outcome.ended && outcome.lost == nil)
        #expect(outcome.samples > WorkerFrame.eSpeakSampleRate / 4, "a short sentence is over a quarter second")
    }

    @Test func aWorkerAnnouncingAnotherRateIsReplacedAndItsRequestLost() throws {
        let daemon = try #require(Self.daemon, "lector-daemon is built beside the tests")
        let outcome = synthesize(expecting: 16_000, daemon: daemon)
        #expect(!outcome.ended && outcome.samples == 0)
        #expect(outcome.lost?.contains("renders 22050 Hz, not 16000 Hz") == true, "\(outcome.lost ?? "not lost")")
    }
}
