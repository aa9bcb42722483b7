import Foundation

/// A parsed RIFF/WAVE file with PCM data.
struct WAVFile {
    var formatTag: UInt16
    var channels: UInt16
    var sampleRate: UInt32
    var bitsPerSample: UInt16
    var byteRate: UInt32
    var blockAlign: UInt16
    /// The data chunk's bytes.
    var data: Data

    /// The samples when the file is 16-bit PCM (interleaved when it has several channels).
    var samples: [Int16] { decodeS16LE(data) }
    /// Seconds of audio in the data chunk.
    var duration: Double {
        blockAlign == 0 || sampleRate == 0 ? 0 : Double(data.count / Int(blockAlign)) / Double(sampleRate)
    }

    /// Parses `url`, walking the RIFF chunks (`fmt ` and `data`; others are skipped).
    /// - Throws: `HarnessError` for anything that is not a PCM WAVE file.
    init(contentsOf url: URL) throws {
        let bytes = [UInt8](try Data(contentsOf: url))
        func u32(_ at: Int) -> UInt32 {
            UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
        }
        func u16(_ at: Int) -> UInt16 { UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8 }
        func tag(_ at: Int) -> String { String(decoding: bytes[at..<(at + 4)], as: UTF8.self) }
        guard bytes.count >= 12, tag(0) == "RIFF", tag(8) == "WAVE" else {
            throw HarnessError("\(url.path): not a RIFF/WAVE file")
        }
        var format: (UInt16, UInt16, UInt32, UInt32, UInt16, UInt16)?
        var pcm: Data?
        var at = 12
        while at + 8 <= bytes.count {
            let id = tag(at)
            let size = Int(u32(at + 4))
            let body = at + 8
            let end = min(bytes.count, body + size)
            if id == "fmt " && size >= 16 && body + 16 <= bytes.count {
                format = (u16(body), u16(body + 2), u32(body + 4), u32(body + 8), u16(body + 12), u16(body + 14))
            } else if id == "data" {
                pcm = Data(bytes[body..<end])
            }
            at = body + size + (size & 1)
        }
        guard let format, let pcm else { throw HarnessError("\(url.path): no fmt or data chunk") }
        (formatTag, channels, sampleRate, byteRate, blockAlign, bitsPerSample) = format
        data = pcm
    }
}

/// Raw s16le bytes of `samples`.
func encodeS16LE(_ samples: [Int16]) -> Data {
    var data = Data(capacity: samples.count * 2)
    for s in samples {
        let u = UInt16(bitPattern: s)
        data.append(UInt8(u & 0xFF))
        data.append(UInt8(u >> 8))
    }
    return data
}

/// A sine tone: `seconds` long at `frequency` Hz and `amplitude` (0...1 of full scale), 22050 Hz mono.
func sineTone(seconds: Double, frequency: Double = 440, amplitude: Double = 0.5) -> [Int16] {
    let rate = Double(PrivateSession.sampleRate)
    let n = Int(seconds * rate)
    return (0..<n).map { i in Int16(amplitude * 32767 * sin(2 * Double.pi * frequency * Double(i) / rate)) }
}
