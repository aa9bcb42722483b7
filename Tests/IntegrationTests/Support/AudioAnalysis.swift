import Foundation

/// Measures recorded audio: signed 16-bit mono samples at 22050 Hz.
///
/// Two views of the same samples:
/// - Fixed windows of 10 ms (220 samples) with their RMS: a window is speech when its RMS is at least
///   `speechRMS`. `firstSpeech`, `lastSpeech`, `longestSilence`, `isSilent(from:to:)` use them.
/// - `audibleDuration`: the number of samples whose centred 10 ms sliding window has an RMS of at least
///   `speechRMS`, in seconds. Pauses between words and sentences count only where the signal really is
///   quiet for more than about 10 ms; a short dip inside a word does not. Unlike fixed windows, this
///   measure does not depend on where the audio falls in the recording, so the same samples played at
///   another moment, or interrupted by inserted silence (a corked stream), measure the same (an
///   interruption moves it by at most ~10 ms). Compare it only with the same measure of other audio.
///
/// The threshold: a null sink's monitor is exactly 0 when nothing plays, and eSpeak NG's voiced speech
/// has an RMS in the thousands; 100 (-50 dBFS) is far above the first and below the quiet consonants.
struct AudioAnalysis {
    static let sampleRate = 22050
    /// Samples per window: 220 (9.98 ms).
    static let windowSamples = 220
    /// RMS (of full scale 32767) at or above which a window counts as speech.
    static let speechRMS = 100.0

    let samples: [Int16]
    /// RMS per fixed window; a last partial window is left out.
    let windowRMS: [Double]

    init(_ samples: [Int16]) {
        self.samples = samples
        let w = Self.windowSamples
        var rms: [Double] = []
        rms.reserveCapacity(samples.count / w)
        var i = 0
        while i + w <= samples.count {
            var sum = 0.0
            for j in i..<(i + w) {
                let x = Double(samples[j])
                sum += x * x
            }
            rms.append((sum / Double(w)).squareRoot())
            i += w
        }
        windowRMS = rms
    }

    /// Seconds of audio held.
    var duration: Double { Double(samples.count) / Double(Self.sampleRate) }
    /// Seconds per window.
    static var windowSeconds: Double { Double(windowSamples) / Double(sampleRate) }

    /// Whether window `index` is speech.
    func isSpeech(window index: Int) -> Bool { windowRMS[index] >= Self.speechRMS }

    /// The largest absolute sample value.
    var peak: Int { samples.map { abs(Int($0)) }.max() ?? 0 }

    /// Seconds from the start to the beginning of the first speech window; nil when all is silent.
    var firstSpeech: Double? {
        windowRMS.firstIndex(where: { $0 >= Self.speechRMS }).map { Double($0) * Self.windowSeconds }
    }

    /// Seconds from the start to the end of the last speech window; nil when all is silent.
    var lastSpeech: Double? {
        windowRMS.lastIndex(where: { $0 >= Self.speechRMS }).map { Double($0 + 1) * Self.windowSeconds }
    }

    /// Number of speech windows times the window length, seconds (depends on window alignment).
    var speechWindowSeconds: Double {
        Double(windowRMS.filter { $0 >= Self.speechRMS }.count) * Self.windowSeconds
    }

    /// The longest run of silent windows between the first and the last speech window, seconds
    /// (0 when there is no speech or no gap).
    var longestSilence: Double {
        guard let first = windowRMS.firstIndex(where: { $0 >= Self.speechRMS }),
            let last = windowRMS.lastIndex(where: { $0 >= Self.speechRMS })
        else { return 0 }
        var longest = 0, run = 0
        for i in first...last {
            if windowRMS[i] >= Self.speechRMS {
                run = 0
            } else {
                run += 1
                longest = max(longest, run)
            }
        }
        return Double(longest) * Self.windowSeconds
    }

    /// Whether no window that starts in `from ..< to` seconds is speech (`to` nil: to the end).
    func isSilent(from: Double, to: Double? = nil) -> Bool {
        speechWindows(from: from, to: to).isEmpty
    }

    /// Start times (seconds) of the speech windows that start in `from ..< to`.
    func speechWindows(from: Double, to: Double? = nil) -> [Double] {
        let first = max(0, Int((from / Self.windowSeconds).rounded(.up)))
        let end = min(windowRMS.count, to.map { Int(($0 / Self.windowSeconds).rounded(.up)) } ?? windowRMS.count)
        guard first < end else { return [] }
        return (first..<end).filter { windowRMS[$0] >= Self.speechRMS }.map { Double($0) * Self.windowSeconds }
    }

    /// Seconds of audible sound, by the sliding-window measure described on the type.
    var audibleDuration: Double {
        let n = samples.count
        guard n > 0 else { return 0 }
        let w = Self.windowSamples
        let half = w / 2
        var prefix = [Double](repeating: 0, count: n + 1)
        for i in 0..<n {
            let x = Double(samples[i])
            prefix[i + 1] = prefix[i] + x * x
        }
        let threshold = Self.speechRMS * Self.speechRMS * Double(w)
        var count = 0
        for i in 0..<n {
            let lo = max(0, i - half), hi = min(n, i + w - half)
            if prefix[hi] - prefix[lo] >= threshold { count += 1 }
        }
        return Double(count) / Double(Self.sampleRate)
    }

    /// A one-line summary for failure messages.
    var summary: String {
        func f(_ x: Double) -> String { String(format: "%.3f s", x) }
        return "\(f(duration)) recorded, audible \(f(audibleDuration)), first speech \(firstSpeech.map(f) ?? "none"), "
            + "last speech \(lastSpeech.map(f) ?? "none"), longest silence \(f(longestSilence)), peak \(peak)"
    }
}
