/// RIFF/WAVE files of 16-bit PCM.
///
/// Source: the canonical WAVE layout (Microsoft RIFF, `WAVEFORMATEX` with `WAVE_FORMAT_PCM` = 1).
public enum WAV {
    /// The 44-byte header of a RIFF/WAVE file holding 16-bit little-endian PCM.
    ///
    /// - Parameters:
    ///   - sampleRate: samples per second per channel, in Hz (22,050 for eSpeak NG).
    ///   - channels: interleaved channels (1 = mono).
    ///   - samples: sample frames that follow (per channel); the data size is `samples × channels × 2`
    ///     bytes. When writing a stream of unknown length, write the header with 0 and rewrite it at the end.
    ///     Sizes beyond the format's 4 GiB limit are clamped.
    /// - Returns: 44 bytes; the PCM data follows them directly.
    public static func header(sampleRate: Int, channels: Int = 1, samples: Int) -> [UInt8] {
        let blockAlign = channels * 2
        let maximumData = Int(UInt32.max) - 36
        let dataBytes = min(max(samples, 0) * blockAlign, maximumData - maximumData % max(blockAlign, 1))
        var bytes: [UInt8] = []
        bytes.reserveCapacity(44)
        func ascii(_ s: String) { bytes.append(contentsOf: s.utf8) }
        func u32(_ v: Int) {
            let u = UInt32(truncatingIfNeeded: v)
            for shift in [0, 8, 16, 24] as [UInt32] { bytes.append(UInt8(truncatingIfNeeded: u >> shift)) }
        }
        func u16(_ v: Int) {
            let u = UInt16(truncatingIfNeeded: v)
            bytes.append(UInt8(truncatingIfNeeded: u))
            bytes.append(UInt8(truncatingIfNeeded: u >> 8))
        }
        ascii("RIFF")
        u32(36 + dataBytes)
        ascii("WAVE")
        ascii("fmt ")
        u32(16)                        // fmt chunk size
        u16(1)                         // WAVE_FORMAT_PCM
        u16(channels)
        u32(sampleRate)
        u32(sampleRate * blockAlign)   // byte rate
        u16(blockAlign)
        u16(16)                        // bits per sample
        ascii("data")
        u32(dataBytes)
        return bytes
    }
}
