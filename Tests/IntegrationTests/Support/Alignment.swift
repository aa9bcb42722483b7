import Foundation

/// Where one recording's audio lies against another's: the lag of `decoded` behind `reference` around a
/// sample, by cross-correlation (first of 16-sample envelopes over the whole reach, then of the samples
/// around the best envelope lag). For comparing an encoded file decoded by ffmpeg with the WAV of the same
/// rendering.
struct Alignment {
    let reference: [Int16]
    let decoded: [Int16]

    /// Decodes `file` with ffmpeg to 16-bit mono at `rate` Hz.
    static func decode(_ session: PrivateSession, _ file: URL, rate: Int = 22_050) async throws -> [Int16] {
        let raw = file.deletingPathExtension().appendingPathExtension(file.pathExtension + ".raw")
        let result = try await session.run("ffmpeg", ["-v", "error", "-i", file.path, "-ac", "1", "-ar", String(rate), "-f", "s16le",
                                                      "-y", raw.path], timeout: 300)
        guard result.status == 0 else { throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "\(result)"]) }
        defer { try? FileManager.default.removeItem(at: raw) }
        let data = try Data(contentsOf: raw)
        return data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    /// Samples by which `decoded` lags `reference` around `at` (half a second of it, lags within `reach`);
    /// nil where the reference is too quiet there to tell.
    func lag(at: Int, reach: Int = 11_025, window: Int = 11_025) -> Int? {
        guard at >= 0, at + window <= reference.count else { return nil }
        let ref = Array(reference[at..<at + window])
        guard ref.map({ abs(Int($0)) }).max() ?? 0 >= 1_000 else { return nil }
        // Envelopes: mean |x| of 16 samples.
        func envelope(_ x: ArraySlice<Int16>) -> [Double] {
            stride(from: x.startIndex, to: x.endIndex - 15, by: 16).map { i in x[i..<i + 16].reduce(0.0) { $0 + abs(Double($1)) } }
        }
        let refEnv = envelope(ref[...])
        let low = max(0, at - reach), high = min(decoded.count, at + reach + window)
        let decodedEnv = envelope(decoded[low..<high])
        var best = (score: -Double.infinity, lag: 0)
        for j in 0..<max(0, decodedEnv.count - refEnv.count + 1) {
            let score = correlation(refEnv, Array(decodedEnv[j..<j + refEnv.count]))
            if score > best.score { best = (score, low + 16 * j - at) }
        }
        var fine = (score: -Double.infinity, lag: best.lag)
        for k in (best.lag - 24)...(best.lag + 24) where at + k >= 0 && at + k + window <= decoded.count {
            let score = correlation(ref.map(Double.init), decoded[(at + k)..<(at + k + window)].map(Double.init))
            if score > fine.score { fine = (score, k) }
        }
        return fine.lag
    }

    private func correlation(_ a: [Double], _ b: [Double]) -> Double {
        var dot = 0.0, energy = 0.0
        for i in 0..<min(a.count, b.count) {
            dot += a[i] * b[i]
            energy += b[i] * b[i]
        }
        return dot / max(energy.squareRoot(), 1)
    }

    /// The loudest decoded sample where the reference is silent (|x| ≤ 32) for 20 ms, 10 ms from sound either
    /// side.
    func peakInPauses(window: Int = 441) -> Int {
        let n = min(reference.count, decoded.count) / window
        let quiet = (0..<n).map { w in reference[(w * window)..<((w + 1) * window)].allSatisfy { abs(Int($0)) <= 32 } }
        var peak = 0
        for w in 1..<max(1, n - 1) where quiet[w - 1] && quiet[w] && quiet[w + 1] {
            peak = max(peak, decoded[(w * window)..<((w + 1) * window)].map { abs(Int($0)) }.max() ?? 0)
        }
        return peak
    }
}
