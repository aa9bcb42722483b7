import SystemKit

/// Joins Ogg Opus files encoded separately (segments of one rendering, encoded in parallel) into one logical
/// stream: the first file's headers, then the audio packets of each file that lie in the part of it the
/// caller keeps, on pages of one serial number, numbered on, with granule positions counted across the
/// joins; the last page ends the stream at the length the caller gives.
///
/// Segments overlap: each after the first is encoded from a little before its place (so that its encoder
/// has settled by then), and the packets of that lead-in are dropped, as are the previous segment's packets
/// after the hand-over point. Both encoders start on the same 20 ms grid, so the hand-over falls between
/// packets of both and the joined stream has exactly the samples of the source: no pre-skip or padding is
/// heard at a join, only the first file's pre-skip at the start (RFC 7845 §4.2) and the end trimmed by the
/// last granule position (§4.5).
///
/// Source: RFC 7845 §4 (granule position: 48 kHz samples decoded, pre-skip included), RFC 6716 §3.1 (a
/// packet's duration from its TOC byte).
public final class OggOpusJoiner {
    private let output: FileDescriptor
    private var writer: OggPacketWriter?
    /// The pre-skip of every file, 48 kHz samples (each file's OpusHead must give the same).
    public private(set) var preSkip: Int?
    /// 48 kHz samples in the joined stream's packets so far, pre-skip included.
    public private(set) var decoded: UInt64 = 0

    /// A joiner writing to `output` from its current offset.
    public init(output: FileDescriptor) { self.output = output }

    /// Appends the audio packets of the Ogg Opus file read from `input` (from its current offset) that lie in
    /// `keep`: 48 kHz samples of that file's own packets, counted from its first audio packet (its pre-skip
    /// included). Both bounds must fall between packets.
    /// - Throws: `RetagError` for a file not laid out as an Ogg Opus stream, with another pre-skip, or a bound
    ///   inside a packet; the `Errno` of a read or write.
    public func append(_ input: FileDescriptor, keep: Range<UInt64> = 0..<UInt64.max) throws {
        let packets = OggPacketReader(ByteReader(input))
        guard let head = try packets.next(), head.starts(with: Array("OpusHead".utf8)), head.count >= 19,
              let tags = try packets.next(), tags.starts(with: Array("OpusTags".utf8)),
              let serial = packets.serial else {
            throw RetagError.layout("not an Ogg Opus stream")
        }
        let skip = Int(head[10]) | Int(head[11]) << 8
        if writer == nil {
            let writer = OggPacketWriter(output: output, serial: serial)
            try writer.writeHeader(head)
            try writer.writeHeader(tags)
            self.writer = writer
            preSkip = skip
        }
        guard skip == preSkip, let writer else { throw RetagError.layout("Opus segments with different pre-skips") }
        var position: UInt64 = 0
        while let packet = try packets.next() {
            let end = position + OggOpusJoiner.samples(ofPacketStartingWith: Array(packet.prefix(2)))
            defer { position = end }
            if (position < keep.lowerBound && end > keep.lowerBound) || (position < keep.upperBound && end > keep.upperBound) {
                throw RetagError.layout("an Opus join inside a packet (at \(keep), packet \(position)..<\(end))")
            }
            guard position >= keep.lowerBound, end <= keep.upperBound else { continue }
            decoded += end - position
            try writer.write(packet, granule: decoded)
        }
    }

    /// Writes the last page, marked as the end of the stream, its granule position the pre-skip and
    /// `samples` 48 kHz samples (no more than the packets hold).
    /// - Throws: `RetagError` when nothing was appended; the `Errno` of the write.
    public func finish(samples: UInt64) throws {
        guard let writer, let preSkip else { throw RetagError.layout("no Opus segment") }
        try writer.finish(granule: min(decoded, UInt64(preSkip) + samples))
    }

    /// A packet's duration in 48 kHz samples from its first bytes (TOC, and the frame count of code 3).
    static func samples(ofPacketStartingWith head: [UInt8]) -> UInt64 {
        guard let toc = head.first else { return 0 }
        let config = Int(toc >> 3)
        let frame: Int // in 1/400 s units × 48 kHz / 400 = 120 samples per 2.5 ms
        switch config {
        case 0..<12: frame = [480, 960, 1_920, 2_880][config % 4]
        case 12..<16: frame = [480, 960][config % 2]
        default: frame = [120, 240, 480, 960][config % 4]
        }
        let frames: Int
        switch toc & 3 {
        case 0: frames = 1
        case 1, 2: frames = 2
        default: frames = head.count > 1 ? Int(head[1] & 0x3F) : 0
        }
        return UInt64(frame * frames)
    }
}
