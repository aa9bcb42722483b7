import SystemKit

/// FLAC files encoded separately (segments of one rendering, encoded in parallel) made into one stream.
///
/// Every segment but the last holds a whole number of blocks, so the joined stream keeps a fixed block size:
/// an encoder thread renumbers its segment's frames from the segment's first frame number (`renumber`), and
/// `FLACJoiner` writes the first segment's metadata, every segment's frames, and at the end one STREAMINFO
/// with the total samples, the frame sizes and the MD5 of the PCM.
///
/// Source: the FLAC format (RFC 9639): §8.2 STREAMINFO, §9.1 frame header (sync 0xFFF8 for a fixed block
/// size, the frame number coded like UTF-8 in 1–6 bytes, CRC-8 with polynomial 0x07), §9.3 frame footer
/// (CRC-16 with polynomial 0x8005 over the whole frame, big-endian). Frames are independent of each other.
public enum FLACSegment {
    /// Samples per block of libsndfile's FLAC encoder (libFLAC's default compression level, 5): a segment
    /// other than the last must hold a multiple of it.
    public static let blockSize = 4_096

    /// One frame header's facts.
    struct FrameHeader {
        /// Bytes of the header, CRC-8 included.
        var length: Int
        /// Bytes of the coded frame number.
        var numberLength: Int
        var number: UInt64
        /// Samples in the frame.
        var blockSize: Int
    }

    /// The frame header at `at`, if one is there (sync code, valid fields and CRC-8); nil otherwise.
    static func header(_ bytes: [UInt8], at: Int) -> FrameHeader? {
        guard at + 6 <= bytes.count, bytes[at] == 0xFF, bytes[at + 1] == 0xF8 else { return nil }
        let sizeCode = Int(bytes[at + 2] >> 4), rateCode = Int(bytes[at + 2] & 0xF)
        let channels = Int(bytes[at + 3] >> 4), depth = Int(bytes[at + 3] >> 1 & 7)
        guard sizeCode != 0, rateCode != 0xF, channels < 11, depth != 3, bytes[at + 3] & 1 == 0 else { return nil }
        let lead = bytes[at + 4]
        let numberLength = lead < 0x80 ? 1 : lead.leadingZeroBitCount == 0 ? (~lead).leadingZeroBitCount : 0
        guard numberLength >= 1, numberLength <= 6, numberLength != 1 || lead < 0x80 else { return nil }
        var number = UInt64(numberLength == 1 ? lead : lead & (0xFF >> (numberLength + 1)))
        var position = at + 5
        for _ in 1..<numberLength {
            guard position < bytes.count, bytes[position] & 0xC0 == 0x80 else { return nil }
            number = number << 6 | UInt64(bytes[position] & 0x3F)
            position += 1
        }
        let sizeExtra = sizeCode == 6 ? 1 : sizeCode == 7 ? 2 : 0
        let rateExtra = rateCode == 12 ? 1 : rateCode == 13 || rateCode == 14 ? 2 : 0
        guard position + sizeExtra + rateExtra < bytes.count else { return nil }
        var blockSize: Int
        switch sizeCode {
        case 1: blockSize = 192
        case 2...5: blockSize = 576 << (sizeCode - 2)
        case 6: blockSize = Int(bytes[position]) + 1
        case 7: blockSize = (Int(bytes[position]) << 8 | Int(bytes[position + 1])) + 1
        default: blockSize = 256 << (sizeCode - 8)
        }
        position += sizeExtra + rateExtra
        guard crc8(bytes[at..<position]) == bytes[position] else { return nil }
        return FrameHeader(length: position + 1 - at, numberLength: numberLength, number: number, blockSize: blockSize)
    }

    /// A frame number (at most 31 bits) coded as FLAC codes it (RFC 9639 §9.1.5).
    static func codedNumber(_ n: UInt64) -> [UInt8] {
        if n < 0x80 { return [UInt8(n)] }
        var length = 2
        while n >= 1 << (5 * length + 1) { length += 1 }
        var out = [UInt8](repeating: 0x80, count: length)
        var rest = n
        for i in stride(from: length - 1, to: 0, by: -1) {
            out[i] |= UInt8(rest & 0x3F)
            rest >>= 6
        }
        out[0] = UInt8(truncatingIfNeeded: 0xFF00 >> length) | UInt8(rest)
        return out
    }

    /// The offset of the first frame: after "fLaC" and the metadata blocks.
    /// - Throws: `RetagError` when the file does not start as a FLAC stream.
    static func audioStart(_ bytes: [UInt8]) throws -> Int {
        guard bytes.starts(with: Array("fLaC".utf8)) else { throw RetagError.layout("not a FLAC file") }
        var at = 4
        while true {
            guard at + 4 <= bytes.count else { throw RetagError.layout("truncated FLAC metadata") }
            let last = bytes[at] & 0x80 != 0
            at += 4 + (Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3]))
            if last { return at }
        }
    }

    /// A segment's file (as libsndfile wrote it, frames numbered from 0) with its frames numbered from
    /// `firstFrame`, and its STREAMINFO's minimum and maximum frame sizes set to those of the new frames.
    /// - Throws: `RetagError` when the file is not laid out as a fixed-block-size FLAC stream.
    public static func renumber(_ bytes: [UInt8], firstFrame: Int) throws -> [UInt8] {
        let start = try audioStart(bytes)
        guard bytes.count >= 42, bytes[4] & 0x7F == 0 else { throw RetagError.layout("no FLAC STREAMINFO") }
        var out = Array(bytes[0..<start])
        out.reserveCapacity(bytes.count + bytes.count / 1_000)
        var at = start
        var expected: UInt64 = 0
        var sizes = (min: Int.max, max: 0)
        var short = false
        while at < bytes.count {
            guard let header = header(bytes, at: at), header.number == expected else {
                throw RetagError.layout("no FLAC frame \(expected) at byte \(at)")
            }
            guard !short else { throw RetagError.layout("a FLAC block shorter than \(blockSize) samples before the end") }
            short = header.blockSize != blockSize
            let end = frameEnd(bytes, from: at, header: header)
            guard end > 0 else { throw RetagError.layout("FLAC frame \(expected) has a bad CRC") }
            let frameStart = out.count
            out += bytes[at..<at + 4]
            out += codedNumber(UInt64(firstFrame) + expected)
            out += bytes[(at + 4 + header.numberLength)..<(at + header.length - 1)]
            out.append(crc8(out[frameStart...]))
            out += bytes[(at + header.length)..<(end - 2)]
            let crc = crc16(out[frameStart...])
            out += [UInt8(crc >> 8), UInt8(crc & 0xFF)]
            sizes = (min(sizes.min, out.count - frameStart), max(sizes.max, out.count - frameStart))
            expected += 1
            at = end
        }
        if expected > 0 {
            for i in 0..<3 {
                out[8 + 4 + i] = UInt8(truncatingIfNeeded: sizes.min >> (8 * (2 - i)))
                out[8 + 7 + i] = UInt8(truncatingIfNeeded: sizes.max >> (8 * (2 - i)))
            }
        }
        return out
    }

    /// Where the frame starting at `at` ends: at the next frame header (the number after this one's) before
    /// which the CRC-16 of the frame checks, or at the end of the file; 0 when none does.
    private static func frameEnd(_ bytes: [UInt8], from at: Int, header: FrameHeader) -> Int {
        bytes.withUnsafeBufferPointer { buffer in
            var crc: UInt16 = 0
            var q = at
            // The bytes up to the end of the header and the shortest subframe cannot end the frame.
            while q < at + header.length + 1 {
                crc = crc << 8 ^ crc16Table[Int(UInt8(crc >> 8) ^ buffer[q])]
                q += 1
            }
            while q < buffer.count {
                if crc == 0, buffer[q] == 0xFF, q + 1 < buffer.count, buffer[q + 1] == 0xF8,
                   let next = self.header(bytes, at: q), next.number == header.number + 1 {
                    return q
                }
                crc = crc << 8 ^ crc16Table[Int(UInt8(crc >> 8) ^ buffer[q])]
                q += 1
            }
            return crc == 0 ? q : 0
        }
    }

    static func crc8(_ bytes: ArraySlice<UInt8>) -> UInt8 {
        bytes.reduce(UInt8(0)) { crc8Table[Int($0 ^ $1)] }
    }

    static func crc16(_ bytes: ArraySlice<UInt8>) -> UInt16 {
        bytes.withUnsafeBufferPointer { buffer in
            buffer.reduce(UInt16(0)) { $0 << 8 ^ crc16Table[Int(UInt8($0 >> 8) ^ $1)] }
        }
    }

    private static let crc8Table: [UInt8] = (0..<256).map { n in
        var r = UInt8(n)
        for _ in 0..<8 { r = r & 0x80 != 0 ? r << 1 ^ 0x07 : r << 1 }
        return r
    }

    private static let crc16Table: [UInt16] = (0..<256).map { n in
        var r = UInt16(n) << 8
        for _ in 0..<8 { r = r & 0x8000 != 0 ? r << 1 ^ 0x8005 : r << 1 }
        return r
    }
}

/// Joins renumbered FLAC segments (`FLACSegment.renumber`) into one FLAC file: the first segment's metadata
/// (its SEEKTABLE dropped: its offsets would be wrong), every segment's frames in order, and at the end
/// the STREAMINFO rewritten in place with the total samples, the smallest and largest frame and the MD5.
public final class FLACJoiner {
    private let output: FileDescriptor
    private var streamInfo: [UInt8]?
    private var totalSamples: UInt64 = 0
    private var frameSizes = (min: Int.max, max: 0)
    private var endedShort = false

    /// A joiner writing to `output` from offset 0 (the STREAMINFO is rewritten there at the end).
    public init(output: FileDescriptor) { self.output = output }

    /// Appends the segment read from `input`.
    /// - Throws: `RetagError` for a file not laid out as FLAC, or the `Errno` of a read or write.
    public func append(_ input: FileDescriptor) throws {
        let reader = ByteReader(input)
        var blocks = try FLACMetadata.read(reader)
        guard let info = blocks.first, info.type == 0, info.body.count == 34 else {
            throw RetagError.layout("no FLAC STREAMINFO")
        }
        func field(_ at: Int, _ bytes: Int) -> Int { (0..<bytes).reduce(0) { $0 << 8 | Int(info.body[at + $1]) } }
        let samples = UInt64(field(13, 5)) & 0xF_FFFF_FFFF
        guard !endedShort else { throw RetagError.layout("a FLAC segment of part of a block before another") }
        endedShort = samples % UInt64(FLACSegment.blockSize) != 0
        if samples > 0 {
            frameSizes = (min(frameSizes.min, field(4, 3)), max(frameSizes.max, field(7, 3)))
        }
        totalSamples += samples
        if streamInfo == nil {
            streamInfo = info.body
            blocks.removeAll { $0.type == 3 }
            try output.writeAll(FLACMetadata.bytes(blocks))
        }
        try reader.copyRest(to: output)
    }

    /// Rewrites the STREAMINFO with the joined stream's figures and `md5` (16 bytes, of the PCM as signed
    /// little-endian samples; all zero: unknown), and leaves the offset at the end of the file.
    /// - Throws: the `Errno` of a seek or write; `RetagError` when nothing was appended.
    public func finish(md5: [UInt8]) throws {
        guard var info = streamInfo else { throw RetagError.layout("no FLAC segment") }
        let sizes = totalSamples > 0 ? frameSizes : (0, 0)
        for i in 0..<3 {
            info[4 + i] = UInt8(truncatingIfNeeded: sizes.0 >> (8 * (2 - i)))
            info[7 + i] = UInt8(truncatingIfNeeded: sizes.1 >> (8 * (2 - i)))
        }
        info[13] = info[13] & 0xF0 | UInt8(truncatingIfNeeded: totalSamples >> 32) & 0x0F
        for i in 0..<4 { info[14 + i] = UInt8(truncatingIfNeeded: totalSamples >> (8 * UInt64(3 - i))) }
        info.replaceSubrange(18..<34, with: md5.count == 16 ? md5 : [UInt8](repeating: 0, count: 16))
        _ = try output.seek(offset: 8, from: .start)
        try output.writeAll(info)
        _ = try output.seek(offset: 0, from: .end)
    }
}
