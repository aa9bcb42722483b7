import Foundation
import Testing

/// Other programs' audio for the ducking tests: player streams (`pacat`), their volumes as `pactl` reads them,
/// and their level as heard (`parec --monitor-stream`, which both servers record after the stream's volume and
/// PulseAudio's volume factors).
extension Integration.Ducking {
    /// A player stream of another program, ended when the test ends: silence (so that the recordings of other
    /// tests hear nothing of it), or a 440 Hz tone at -10 dBFS whose level `level(_:_:)` measures.
    final class OtherStream {
        let process: BackgroundProcess
        let index: Int

        init(_ session: PrivateSession, name: String, tone: Bool = false) async throws {
            let source = tone ? try Self.toneFile(session).path : "/dev/zero"
            process = try session.spawn(
                "pacat", ["--raw", "--rate=22050", "--channels=2", "--format=s16le", "--latency-msec=50",
                          "--client-name=\(name)", "--stream-name=\(name)", source], tag: name)
            let found = try await poll(timeout: 10, { try await Integration.Ducking.sinkInputs(session).first(where: { $0.client == name }) },
                                       until: { $0 != nil })
            guard let found else {
                process.stopNow(signal: SIGKILL, grace: 1)
                throw HarnessError("the \(name) stream did not appear: \(process.stderr)")
            }
            index = found.index
        }

        func end() async { _ = await process.stop(signal: SIGKILL, grace: 2) }

        /// 60 s of a 440 Hz tone, 22050 Hz stereo s16le, made once per session.
        static func toneFile(_ session: PrivateSession) throws -> URL {
            let url = session.directory.appendingPathComponent("tone-440.raw")
            if FileManager.default.fileExists(atPath: url.path) { return url }
            let frames = 60 * 22050
            var data = Data(count: frames * 4)
            data.withUnsafeMutableBytes { raw in
                let samples = raw.bindMemory(to: Int16.self)
                for i in 0..<frames {
                    let value = Int16(0.316 * 32767 * sin(2 * Double.pi * 440 * Double(i) / 22050))
                    samples[2 * i] = value.littleEndian
                    samples[2 * i + 1] = value.littleEndian
                }
            }
            try data.write(to: url)
            return url
        }
    }

    struct SinkInput {
        var index: Int
        var client: String
        /// The first channel's software volume (65536 = 100 %).
        var volume: Int
    }

    /// `pactl list sink-inputs`, reduced to index, application.name and the first channel's volume.
    static func sinkInputs(_ session: PrivateSession) async throws -> [SinkInput] {
        let listing = try await session.run("pactl", ["list", "sink-inputs"], timeout: 10)
        var inputs: [SinkInput] = []
        for block in listing.stdout.components(separatedBy: "Sink Input #").dropFirst() {
            let lines = block.split(separator: "\n")
            guard let index = Int(lines.first?.trimmingCharacters(in: .whitespaces) ?? "") else { continue }
            var volume = -1
            var client = ""
            for line in lines {
                let text = line.trimmingCharacters(in: .whitespaces)
                if text.hasPrefix("Volume:"), let value = text.split(separator: ":").dropFirst(2).first?
                    .split(separator: "/").first.flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }) {
                    volume = value   // "Volume: front-left: 52428 /  80% / -5.81 dB, ..."
                }
                if text.hasPrefix("application.name = ") {
                    client = String(text.dropFirst("application.name = ".count)).trimmingCharacters(in: ["\""])
                }
            }
            inputs.append(SinkInput(index: index, client: client, volume: volume))
        }
        return inputs
    }

    static func volume(_ session: PrivateSession, _ index: Int) async throws -> Int? {
        try await sinkInputs(session).first(where: { $0.index == index })?.volume
    }

    /// Polls until the volume of sink input `index` satisfies `condition`; returns the last value seen.
    static func waitForVolume(_ session: PrivateSession, _ index: Int, timeout: Double,
                              _ condition: (Int) -> Bool) async throws -> Int? {
        try await poll(timeout: timeout, { try await volume(session, index) }, until: { $0.map(condition) ?? false })
    }

    /// The level of sink input `index` as heard, in dB of full scale (RMS of the last 0.25 s of a 0.5 s
    /// recording of that stream alone); -100 when nothing was recorded.
    static func level(_ session: PrivateSession, _ index: Int) async throws -> Double {
        let file = session.directory.appendingPathComponent("level-\(index).raw")
        _ = try await session.run("sh", ["-c", "timeout 0.5 parec --latency-msec=10 --raw --rate=22050 --channels=1 "
                                         + "--format=s16le --monitor-stream=\(index) > '\(file.path)'"], timeout: 5)
        let data = (try? Data(contentsOf: file)) ?? Data()
        let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        let tail = samples.suffix(22050 / 4)
        guard !tail.isEmpty else { return -100 }
        let power = tail.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(tail.count)
        return power > 0 ? 10 * log10(power / (32767.0 * 32767.0)) : -100
    }

    /// Polls the level of sink input `index` until it satisfies `condition`; returns the last level heard.
    static func waitForLevel(_ session: PrivateSession, _ index: Int, timeout: Double,
                             _ condition: (Double) -> Bool) async throws -> Double {
        try await poll(timeout: timeout, every: .milliseconds(10), { try await level(session, index) }, until: condition)
    }

    /// 80 % as PulseAudio counts it (pa_sw_volume_from_linear is cubic; `pactl` takes the percentage).
    static let userVolume = 52_428

    /// Whether the servers of this run duck by themselves (PulseAudio's module-role-ducking: volumes stay as
    /// they are, the level drops) or Lector lowers volumes (pipewire-pulse).
    static var serverDucks: Bool { SoundServerKind.current == .pulseAudio }

    /// The volume a new stream of `name` starts with (what the server remembers for that application).
    static func rememberedVolume(_ session: PrivateSession, _ name: String) async throws -> Int? {
        let stream = try await OtherStream(session, name: name)
        defer { stream.process.stopNow(signal: SIGKILL, grace: 1) }
        // pipewire-pulse announces the stream before WirePlumber gives it the remembered volume.
        try await Task.sleep(for: .milliseconds(300))
        let volume = try await Self.volume(session, stream.index)
        await stream.end()
        return volume
    }
}
