/// One MPEG audio Layer III frame header's facts.
///
/// Source: ISO/IEC 11172-3 §2.4.1.3 and ISO/IEC 13818-3 §2.4.2.3 (header: sync, version, layer, protection,
/// bit rate, sampling frequency, padding, mode; frame length 144 × bit rate / rate for MPEG-1, 72 × for
/// MPEG-2 and 2.5), §2.4.1.7 (side information: main_data_begin, then part2_3_length per granule and channel).
struct MP3Header: Equatable {
    /// The four header bytes.
    var bytes: [UInt8]

    /// The header at the start of `bytes`, if these are a Layer III frame's; nil otherwise.
    init?(_ bytes: ArraySlice<UInt8>) {
        guard bytes.count >= 4 else { return nil }
        let b = Array(bytes.prefix(4))
        guard b[0] == 0xFF, b[1] & 0xE0 == 0xE0, b[1] >> 3 & 3 != 1, b[1] >> 1 & 3 == 1,
              b[2] >> 4 != 0, b[2] >> 4 != 15, b[2] >> 2 & 3 != 3 else { return nil }
        self.bytes = b
    }

    /// MPEG-1 (else MPEG-2 or 2.5, whose frames hold one granule of 576 samples).
    var isMPEG1: Bool { bytes[1] >> 3 & 3 == 3 }
    var isMono: Bool { bytes[3] >> 6 == 3 }
    /// A CRC-16 follows the header (protection bit 0).
    var isProtected: Bool { bytes[1] & 1 == 0 }
    var bitrateIndex: Int { Int(bytes[2] >> 4) }
    /// kbit/s.
    var bitrate: Int {
        (isMPEG1 ? [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
                 : [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160])[bitrateIndex]
    }
    /// Hz.
    var sampleRate: Int {
        let table = switch bytes[1] >> 3 & 3 { case 3: [44_100, 48_000, 32_000]; case 2: [22_050, 24_000, 16_000]; default: [11_025, 12_000, 8_000] }
        return table[Int(bytes[2] >> 2 & 3)]
    }
    /// Samples per frame.
    var samples: Int { isMPEG1 ? 1_152 : 576 }
    /// Bytes of the whole frame.
    var length: Int { (isMPEG1 ? 144 : 72) * bitrate * 1_000 / sampleRate + Int(bytes[2] >> 1 & 1) }
    /// Bytes of side information.
    var sideInfoLength: Int { isMPEG1 ? (isMono ? 17 : 32) : (isMono ? 9 : 17) }
    /// Bytes before the main data slot: header, CRC, side information.
    var prefixLength: Int { 4 + (isProtected ? 2 : 0) + sideInfoLength }
    /// The largest main_data_begin, bytes (9 bits in MPEG-1, 8 in MPEG-2).
    var maximumBackstep: Int { isMPEG1 ? 511 : 255 }

    /// The same header with the bit rate index `index`, no padding and no CRC.
    func with(bitrateIndex index: Int) -> MP3Header {
        var copy = self
        copy.bytes[1] |= 1
        copy.bytes[2] = UInt8(index) << 4 | bytes[2] & 0x0C
        return copy
    }
}

/// One Layer III frame: its header, side information and main data slot.
struct MP3Frame {
    var header: MP3Header
    /// The frame's bytes.
    var bytes: [UInt8]

    private var sideInfoStart: Int { 4 + (header.isProtected ? 2 : 0) }

    /// How far before the slot the frame's main data begins, bytes (the bit reservoir).
    var mainDataBegin: Int {
        let s = sideInfoStart
        return header.isMPEG1 ? Int(bytes[s]) << 1 | Int(bytes[s + 1] >> 7) : Int(bytes[s])
    }

    /// Bytes of main data: the part2_3_length of every granule and channel, rounded up to whole bytes.
    var mainDataLength: Int {
        var reader = BitReader(bytes: bytes, bit: sideInfoStart * 8)
        let channels = header.isMono ? 1 : 2
        reader.skip(header.isMPEG1 ? 9 + (channels == 1 ? 5 : 3) + 4 * channels : 8 + channels)
        var bits = 0
        for _ in 0..<(header.isMPEG1 ? 2 : 1) {
            for _ in 0..<channels {
                bits += reader.read(12)
                reader.skip(header.isMPEG1 ? 47 : 51)
            }
        }
        return (bits + 7) / 8
    }

    /// Whether this is a Xing or Info frame (a LAME tag: no audio), found after the side information.
    var isInfoTag: Bool {
        let at = header.prefixLength
        guard bytes.count >= at + 4 else { return false }
        let magic = Array(bytes[at..<at + 4])
        return magic == Array("Info".utf8) || magic == Array("Xing".utf8)
    }

    /// The same frame at the bit rate index `index`: a larger slot for main data that no longer finds room in
    /// the reservoir after a join. Header (protection and padding kept), CRC and side information are the
    /// frame's; the slot's bytes are zero (ancillary data) until main data is laid out in them.
    func resized(bitrateIndex index: Int) -> MP3Frame {
        var header = header
        header.bytes[2] = UInt8(index) << 4 | header.bytes[2] & 0x0F
        let prefix = [UInt8](header.bytes) + bytes[4..<self.header.prefixLength]
        return MP3Frame(header: header, bytes: prefix + [UInt8](repeating: 0, count: header.length - header.prefixLength))
    }

    /// Sets main_data_begin to `value` (and the CRC, for a protected frame).
    mutating func setMainDataBegin(_ value: Int) {
        let s = sideInfoStart
        if header.isMPEG1 {
            bytes[s] = UInt8(value >> 1)
            bytes[s + 1] = bytes[s + 1] & 0x7F | UInt8(value & 1) << 7
        } else {
            bytes[s] = UInt8(value)
        }
        if header.isProtected {
            // CRC-16 (0x8005, initial 0xFFFF) over the header's last two bytes and the side information.
            var crc: UInt16 = 0xFFFF
            for byte in bytes[2..<4] + bytes[6..<6 + header.sideInfoLength] {
                crc ^= UInt16(byte) << 8
                for _ in 0..<8 { crc = crc & 0x8000 != 0 ? crc << 1 ^ 0x8005 : crc << 1 }
            }
            bytes[4] = UInt8(crc >> 8)
            bytes[5] = UInt8(crc & 0xFF)
        }
    }

    /// Reads the next frame; nil at the end of the file or at an ID3v1 tag ("TAG").
    /// - Throws: `RetagError` for bytes that are not a Layer III frame, or the `Errno` of a read.
    static func read(_ input: ByteReader) throws -> MP3Frame? {
        let head = try input.peek(4)
        if head.count < 4 || head.starts(with: Array("TAG".utf8)) { return nil }
        guard let header = MP3Header(head[...]) else { throw RetagError.layout("not an MP3 frame") }
        let bytes = try input.read(header.length)
        guard bytes.count == header.length else { throw RetagError.layout("a truncated MP3 frame") }
        return MP3Frame(header: header, bytes: bytes)
    }
}

/// Big-endian bits of a byte array.
struct BitReader {
    let bytes: [UInt8]
    var bit: Int

    mutating func read(_ count: Int) -> Int {
        var value = 0
        for _ in 0..<count {
            let byte = bit / 8 < bytes.count ? bytes[bit / 8] : 0
            value = value << 1 | Int(byte >> (7 - UInt8(bit % 8)) & 1)
            bit += 1
        }
        return value
    }

    mutating func skip(_ count: Int) { bit += count }
}

/// CRC-16 as LAME computes it for its tag (polynomial 0x8005 reflected, initial 0: CRC-16/ARC).
struct LAMECRC {
    private(set) var value: UInt16 = 0

    private static let table: [UInt16] = (0..<256).map { n in
        var r = UInt16(n)
        for _ in 0..<8 { r = r & 1 != 0 ? r >> 1 ^ 0xA001 : r >> 1 }
        return r
    }

    mutating func update<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        for byte in bytes { value = value >> 8 ^ LAMECRC.table[Int((value ^ UInt16(byte)) & 0xFF)] }
    }
}

/// The Info frame (Xing header with LAME's extension) of a constant-bit-rate MP3 file: frame and byte counts,
/// a seek table, and the encoder delay and padding that gapless decoders trim (ffmpeg, mpg123 and players
/// built on them). Source: the Xing VBR header and the LAME tag (LAME's `VbrTag.c`, "Mp3 Info Tag rev 1").
enum MP3InfoFrame {
    /// An Info frame like `audio`'s frames (version, rate, mode), long enough for the tag, for `frames` audio
    /// frames in `bytes` bytes (the Info frame included) at `kbps`, with the encoder's `delay` and `padding`
    /// samples (12 bits each), and the CRC-16 of the audio frames' bytes.
    static func make(like audio: MP3Header, frames: Int, bytes: Int, kbps: Int, delay: Int, padding: Int, musicCRC: UInt16) -> [UInt8] {
        var header = audio.with(bitrateIndex: 1)
        while header.length < header.prefixLength + 156 && header.bitrateIndex < 14 {
            header = audio.with(bitrateIndex: header.bitrateIndex + 1)
        }
        var out = header.bytes + [UInt8](repeating: 0, count: header.sideInfoLength)
        out += Array("Info".utf8)
        out.appendBE32(0x0F) // frames, bytes, TOC, quality
        out.appendBE32(frames)
        out.appendBE32(bytes)
        out += (0..<100).map { UInt8($0 * 256 / 100) }
        out.appendBE32(0)
        out += Array("LAME3.100".utf8) + [0x01, 0] // tag revision 0, constant bit rate; no lowpass given
        out += [UInt8](repeating: 0, count: 8) // peak, radio and audiophile gains
        out += [0, UInt8(min(kbps, 255))]
        out.appendBE24(min(delay, 4_095) << 12 | min(max(padding, 0), 4_095))
        out += [0, 0, 0, 0] // misc, MP3 gain, preset and surround
        out.appendBE32(bytes)
        out += [UInt8(musicCRC >> 8), UInt8(musicCRC & 0xFF)]
        var crc = LAMECRC()
        crc.update(out)
        out += [UInt8(crc.value >> 8), UInt8(crc.value & 0xFF)]
        return out + [UInt8](repeating: 0, count: max(0, header.length - out.count))
    }

    /// The length of the Info frame `make` writes for frames like `audio`'s.
    static func length(like audio: MP3Header) -> Int {
        make(like: audio, frames: 0, bytes: 0, kbps: 0, delay: 0, padding: 0, musicCRC: 0).count
    }
}
