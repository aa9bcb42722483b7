import SystemKit

/// One Ogg page. Source: RFC 3533 §6 (page header: "OggS", version, type flags, granule position, serial
/// number, sequence number, CRC-32 with polynomial 0x04C11DB7 over the page with the CRC field zero, segment
/// table).
struct OggPage {
    var flags: UInt8
    var granule: UInt64
    var serial: UInt32
    var sequence: UInt32
    var lacing: [UInt8]
    var body: [UInt8]

    /// Continued packet (first packet of the page began on an earlier one).
    static let continued: UInt8 = 1
    /// First page of a logical stream.
    static let beginning: UInt8 = 2

    /// Reads the next page; nil at the end of the file.
    static func read(_ input: ByteReader) throws -> OggPage? {
        let header = try input.read(27)
        if header.isEmpty { return nil }
        guard header.count == 27, header[0..<4].elementsEqual("OggS".utf8) else { throw RetagError.layout("not an Ogg page") }
        func le(_ at: Int, _ n: Int) -> UInt64 { (0..<n).reduce(0) { $0 | UInt64(header[at + $1]) << (8 * $1) } }
        let lacing = try input.read(Int(header[26]))
        let body = try input.read(lacing.reduce(0) { $0 + Int($1) })
        return OggPage(flags: header[5], granule: le(6, 8), serial: UInt32(le(14, 4)), sequence: UInt32(le(18, 4)),
                       lacing: lacing, body: body)
    }

    /// The page's bytes, with its CRC computed.
    var bytes: [UInt8] {
        var out: [UInt8] = Array("OggS".utf8) + [0, flags]
        for i in 0..<8 { out.append(UInt8(truncatingIfNeeded: granule >> (8 * UInt64(i)))) }
        out.appendLE32(Int(serial))
        out.appendLE32(Int(sequence))
        out += [0, 0, 0, 0, UInt8(lacing.count)] + lacing + body
        let crc = OggPage.crc(out)
        for i in 0..<4 { out[22 + i] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i))) }
        return out
    }

    private static let table: [UInt32] = (0..<256).map { n in
        var r = UInt32(n) << 24
        for _ in 0..<8 { r = r & 0x8000_0000 != 0 ? (r << 1) ^ 0x04C1_1DB7 : r << 1 }
        return r
    }

    static func crc(_ bytes: [UInt8]) -> UInt32 {
        bytes.reduce(UInt32(0)) { ($0 << 8) ^ table[Int(($0 >> 24) ^ UInt32($1))] }
    }

    /// Pages carrying `packet` alone, from sequence number `sequence` on; the last ends the packet, with
    /// granule position `granule`, the others carry −1 (no packet ends on them).
    static func paginate(_ packet: [UInt8], serial: UInt32, sequence: UInt32, granule: UInt64) -> [OggPage] {
        var lacing = [UInt8](repeating: 255, count: packet.count / 255) + [UInt8(packet.count % 255)]
        var pages: [OggPage] = []
        var offset = 0
        while !lacing.isEmpty {
            let segments = Array(lacing.prefix(255))
            lacing.removeFirst(segments.count)
            let size = segments.reduce(0) { $0 + Int($1) }
            pages.append(OggPage(flags: pages.isEmpty ? 0 : continued, granule: lacing.isEmpty ? granule : UInt64.max,
                                 serial: serial, sequence: sequence + UInt32(pages.count), lacing: segments,
                                 body: Array(packet[offset..<offset + size])))
            offset += size
        }
        return pages
    }
}

/// Replaces the comment header of the first logical stream of an Ogg Vorbis or Ogg Opus file: the
/// identification page is copied, the comment header (and Vorbis's setup header) laid out again, each on
/// pages of its own (both specifications allow it: Vorbis I §A.2, RFC 7845 §3), and the audio pages copied,
/// renumbered only when the header took a different number of pages.
struct OggRetagger {
    let input: ByteReader
    let output: FileDescriptor
    let tags: AudioTags

    func run() throws {
        guard let first = try OggPage.read(input), first.flags & OggPage.beginning != 0 else {
            throw RetagError.layout("not an Ogg stream")
        }
        let isOpus = first.body.starts(with: Array("OpusHead".utf8))
        let headerPackets = isOpus ? 1 : 2 // after the identification header
        var packets: [[UInt8]] = []
        var partial: [UInt8] = []
        var oldPages: UInt32 = 0
        while packets.count < headerPackets {
            guard let page = try OggPage.read(input), page.serial == first.serial else {
                throw RetagError.layout("truncated Ogg headers")
            }
            oldPages += 1
            var offset = 0
            for lace in page.lacing {
                partial += page.body[offset..<offset + Int(lace)]
                offset += Int(lace)
                if lace < 255 { packets.append(partial); partial = [] }
            }
        }
        let magic = isOpus ? Array("OpusTags".utf8) : [3] + Array("vorbis".utf8)
        guard packets[0].starts(with: magic), let old = VorbisComment.parse(packets[0], at: magic.count) else {
            throw RetagError.layout("no comment header")
        }
        packets[0] = magic + VorbisComment.body(vendor: old.vendor, comments: tags.vorbisComments) + (isOpus ? [] : [1])
        var out = first.bytes
        var sequence = first.sequence + 1
        for packet in packets {
            for page in OggPage.paginate(packet, serial: first.serial, sequence: sequence, granule: 0) {
                out += page.bytes
                sequence += 1
            }
        }
        try output.writeAll(out)
        let shift = sequence &- (first.sequence + 1 + oldPages)
        if shift == 0 { return try input.copyRest(to: output) }
        var batch: [UInt8] = []
        while var page = try OggPage.read(input) {
            if page.serial == first.serial { page.sequence &+= shift }
            batch += page.bytes
            if batch.count > 1 << 20 { try output.writeAll(batch); batch = [] }
        }
        try output.writeAll(batch)
    }
}

/// The pages of one joined logical stream on their way to a file: one serial number and continuous page numbers
/// (both taken from the stream's first page), the last page held back so that `finish` can mark it as the end
/// of the stream, written in batches of about 1 MiB. Source: RFC 3533 §6 (page header: serial number, page
/// sequence number, the end-of-stream flag).
final class OggStreamWriter {
    private let output: FileDescriptor
    /// The stream's serial number, nil until a page that begins a stream was written.
    private(set) var serial: UInt32?
    private var sequence: UInt32 = 0
    private var held: OggPage?
    private var batch: [UInt8] = []

    /// A writer to `output` from its current offset.
    init(output: FileDescriptor) { self.output = output }

    /// Writes `page` with the stream's serial number and the next page number; the first page that begins a
    /// stream sets both.
    /// - Throws: the `Errno` of a write.
    func write(_ page: OggPage) throws {
        var page = page
        if serial == nil, page.flags & OggPage.beginning != 0 { serial = page.serial; sequence = page.sequence }
        page.serial = serial ?? page.serial
        page.sequence = sequence
        sequence &+= 1
        if let previous = held { batch += previous.bytes }
        held = page
        if batch.count >= 1 << 20 {
            try output.writeAll(batch)
            batch = []
        }
    }

    /// Writes the last page, marked as the end of the stream, with `granule` as its granule position.
    /// - Throws: the `Errno` of the write.
    func finish(granule: UInt64) throws {
        if var last = held {
            last.flags |= 4 // end of stream
            last.granule = granule
            batch += last.bytes
            held = nil
        }
        try output.writeAll(batch)
        batch = []
    }
}
