import SystemKit

/// Joins Ogg Vorbis files encoded separately with one encoder setup (segments of one rendering, encoded in
/// parallel) into one logical stream: the first file's three headers, then each file's audio packets from its
/// hand-over point on, on pages of one serial number, with granule positions counted across the joins.
///
/// Segments overlap: each after the first is encoded from a little before its place, and the join hands over
/// from a packet of the previous file whose block centre lies in the window the caller gives (where both
/// encoders have the same input, settled) to the packet of the next file that best continues it. A Vorbis
/// packet decodes into the quarter of the previous block after its centre and the quarter of its own before
/// its centre, so the next file's audio lands where the previous one's block sizes put it: the encoders'
/// blocks rarely share a centre, and the pair is chosen to keep the joined audio nearest its place (`shift`,
/// within a quarter of a long block, and carried from join to join, not added up).
///
/// Source: Vorbis I specification §1.3.2 and §4.3.8 (overlap of consecutive blocks; the stream's first
/// packet returns no audio), §A.2 (granule position: the sample at the end of the last packet completed on a
/// page; the last page may end short of its packets). The setup headers must be identical (one set of
/// codebooks for the whole stream), which is checked.
public final class OggVorbisJoiner {
    /// The block size of an audio packet from its first bytes, given the three headers.
    public typealias BlockSizes = ([UInt8]) -> Int

    private struct Packet {
        var bytes: [UInt8]
        var block: Int
        /// The block's centre, samples of the whole rendering (the file's start plus its own position).
        var centre: Int
    }

    private let output: FileDescriptor
    private let makeBlockSizes: ([[UInt8]]) throws -> BlockSizes
    private var blockSizes: BlockSizes?
    private var headers: [[UInt8]] = []
    private var writer: OggPacketWriter?
    private var decoded: UInt64 = 0
    private var previousBlock: Int?
    /// The previous file's packets from its hand-over window on, and that window.
    private var held: [Packet] = []
    private var window: Range<Int>?
    /// Samples by which the audio of the files appended so far lies after its place (negative: before).
    public private(set) var shift = 0

    /// A joiner writing to `output` from its current offset; `blockSizes` makes the packets' block size
    /// function from the first file's headers (identification, comment, setup).
    public init(output: FileDescriptor, blockSizes: @escaping ([[UInt8]]) throws -> BlockSizes) {
        self.output = output
        makeBlockSizes = blockSizes
    }

    /// Appends the Ogg Vorbis file read from `input`, whose first sample is sample `start` of the whole; it
    /// hands over to the next file from a packet whose centre is in `handover` (samples of the whole), or,
    /// nil, it is the last.
    /// - Throws: `RetagError` for a file not laid out as an Ogg Vorbis stream or encoded with another setup, or
    ///   no packet to continue with after the hand-over window; the error of `blockSizes`; the `Errno` of a
    ///   read or write.
    public func append(_ input: FileDescriptor, start: Int, handover: Range<Int>?) throws {
        let packets = OggPacketReader(ByteReader(input))
        let own = try readHeaders(packets)
        guard let blockSizes, let writer else { throw RetagError.layout("no Vorbis headers") }
        if !headers.isEmpty, own[0] != headers[0] || own[2] != headers[2] {
            throw RetagError.layout("Vorbis segments encoded with different setups")
        }
        if headers.isEmpty { headers = own }
        var lead: [Packet] = []
        var continuing = held.isEmpty
        var centre = start, previous: Int?
        while let bytes = try packets.next() {
            let block = blockSizes(bytes)
            guard block > 0 else { throw RetagError.layout("a Vorbis packet that is not audio") }
            if let previous { centre += previous / 4 + block / 4 }
            previous = block
            let packet = Packet(bytes: bytes, block: block, centre: centre)
            if !continuing {
                lead.append(packet)
                guard let window, centre > window.upperBound + 1_024 else { continue }
                try handOver(to: &lead, start: start)
                continuing = true
                for packet in lead { try take(packet, handover: handover, writer: writer) }
                continue
            }
            try take(packet, handover: handover, writer: writer)
        }
        if !continuing {
            try handOver(to: &lead, start: start)
            for packet in lead { try take(packet, handover: handover, writer: writer) }
        }
        window = handover
    }

    /// Writes `packet`, or holds it when it may come after this file's hand-over point (or the file is the
    /// last, whose end `finish` trims).
    private func take(_ packet: Packet, handover: Range<Int>?, writer: OggPacketWriter) throws {
        if handover.map({ packet.centre >= $0.lowerBound }) ?? true {
            held.append(packet)
        } else {
            try write(packet, writer)
        }
    }

    /// Chooses where the held packets of the previous file hand over to `lead`, the next file's first packets:
    /// writes the held ones up to it and leaves in `lead` those from it on.
    private func handOver(to lead: inout [Packet], start: Int) throws {
        guard let window, let writer else { return }
        var best: (score: Int, p: Int, q: Int, delta: Int)?
        for (p, kept) in held.enumerated() where kept.centre < window.upperBound {
            // The next file's packets after at least one long block of its own (its encoder settled).
            for q in lead.indices.dropFirst(2) where lead[q - 1].centre >= start + 1_024 && lead[q].centre > kept.centre {
                let delta = kept.centre + kept.block / 4 + lead[q].block / 4 - lead[q].centre
                let score = 4 * abs(shift + delta) + (kept.block == lead[q - 1].block ? 0 : 1)
                if best.map({ score < $0.score }) ?? true { best = (score, p, q, delta) }
            }
        }
        guard let best else { throw RetagError.layout("no Vorbis packet to join at \(window)") }
        for packet in held[...best.p] { try write(packet, writer) }
        held = []
        lead.removeFirst(best.q)
        shift += best.delta
    }

    private func write(_ packet: Packet, _ writer: OggPacketWriter) throws {
        if let previousBlock { decoded += UInt64(previousBlock / 4 + packet.block / 4) }
        previousBlock = packet.block
        try writer.write(packet.bytes, granule: decoded)
    }

    /// Reads a file's three header packets; the first file's are written, and make the block size function.
    private func readHeaders(_ packets: OggPacketReader) throws -> [[UInt8]] {
        var own: [[UInt8]] = []
        while own.count < 3, let packet = try packets.next() { own.append(packet) }
        guard own.count == 3, own[0].starts(with: [1] + Array("vorbis".utf8)), own[2].starts(with: [5] + Array("vorbis".utf8)),
              let serial = packets.serial else {
            throw RetagError.layout("not an Ogg Vorbis stream")
        }
        if writer == nil {
            let writer = OggPacketWriter(output: output, serial: serial)
            for header in own { try writer.writeHeader(header) }
            self.writer = writer
            blockSizes = try makeBlockSizes(own)
        }
        return own
    }

    /// Writes the last file's packets that decode before sample `samples` of the whole (moved by `shift`), and
    /// the last page, marked as the end of the stream, its granule position trimmed there.
    /// - Throws: `RetagError` when nothing was appended; the `Errno` of the write.
    public func finish(samples: Int) throws {
        guard let writer else { throw RetagError.layout("no Vorbis segment") }
        let end = UInt64(max(0, samples + shift))
        for packet in held where decoded < end || previousBlock == nil { try write(packet, writer) }
        held = []
        try writer.finish(granule: min(decoded, end))
    }
}
