import SystemKit

/// The packets of the first logical stream of an Ogg file, in order, put together across pages.
/// Source: RFC 3533 §5–6 (a packet is the lacing values up to the first below 255; it may span pages).
final class OggPacketReader {
    private let input: ByteReader
    private var queue: [[UInt8]] = []
    private var head = 0
    private var partial: [UInt8] = []
    /// The serial number of the stream, known once its first page is read.
    private(set) var serial: UInt32?
    /// The first page (the stream's beginning), kept for its serial number and flags.
    private(set) var firstPage: OggPage?

    init(_ input: ByteReader) { self.input = input }

    /// The next packet; nil at the end of the stream.
    /// - Throws: `RetagError` for bytes that are not Ogg pages, or the `Errno` of a read.
    func next() throws -> [UInt8]? {
        while head == queue.count {
            queue.removeAll(keepingCapacity: true)
            head = 0
            guard let page = try OggPage.read(input) else { return nil }
            if serial == nil {
                guard page.flags & OggPage.beginning != 0 else { throw RetagError.layout("an Ogg stream without its first page") }
                serial = page.serial
                firstPage = page
            }
            guard page.serial == serial else { continue }
            var offset = 0
            for lace in page.lacing {
                partial += page.body[offset..<offset + Int(lace)]
                offset += Int(lace)
                if lace < 255 {
                    queue.append(partial)
                    partial = []
                }
            }
        }
        defer { head += 1 }
        return queue[head]
    }
}

/// One logical Ogg stream written packet by packet: headers each on pages of their own, audio packets
/// gathered on pages of about 4 KiB (or 255 lacing values), each page's granule position the one of the
/// last packet completed on it (−1 when none is), the last page marked as the end of the stream; written
/// in batches of about 1 MiB. Source: RFC 3533 §6, RFC 7845 §3 and Vorbis I §A.2 (headers on their own
/// pages).
final class OggPacketWriter {
    private let output: FileDescriptor
    private let serial: UInt32
    private var sequence: UInt32 = 0
    private var lacing: [UInt8] = []
    private var body: [UInt8] = []
    /// The granule position after the last packet completed on the page being gathered, nil when none is.
    private var granule: UInt64?
    /// Whether the page being gathered begins with the rest of a packet.
    private var continued = false
    private var held: OggPage?
    private var batch: [UInt8] = []
    private var wroteFirst = false

    /// A writer of the stream numbered `serial` to `output` from its current offset.
    init(output: FileDescriptor, serial: UInt32) {
        self.output = output
        self.serial = serial
    }

    /// Writes a header packet on pages of its own (the first one begins the stream), granule position 0.
    /// - Throws: the `Errno` of a write.
    func writeHeader(_ packet: [UInt8]) throws {
        try flushPage()
        try add(packet, granule: 0)
        try flushPage()
    }

    /// Adds an audio packet; `granule` is the stream's granule position once it is decoded.
    /// - Throws: the `Errno` of a write.
    func write(_ packet: [UInt8], granule: UInt64) throws {
        try add(packet, granule: granule)
        if body.count >= 4_096 { try flushPage() }
    }

    /// Writes what is left, the last page marked as the end of the stream with `granule` as its position.
    /// - Throws: the `Errno` of a write.
    func finish(granule last: UInt64) throws {
        try flushPage()
        if var page = held {
            page.flags |= 4
            page.granule = last
            batch += page.bytes
            held = nil
        }
        try output.writeAll(batch)
        batch = []
    }

    private func add(_ packet: [UInt8], granule packetGranule: UInt64) throws {
        var offset = 0
        while true {
            if lacing.count == 255 {
                try flushPage()
                continued = offset > 0
            }
            let lace = min(255, packet.count - offset)
            lacing.append(UInt8(lace))
            body += packet[offset..<offset + lace]
            offset += lace
            if lace < 255 {
                granule = packetGranule
                return
            }
        }
    }

    private func flushPage() throws {
        guard !lacing.isEmpty else { return }
        let flags: UInt8 = (continued ? OggPage.continued : 0) | (wroteFirst ? 0 : OggPage.beginning)
        let page = OggPage(flags: flags, granule: granule ?? UInt64.max, serial: serial, sequence: sequence,
                           lacing: lacing, body: body)
        wroteFirst = true
        sequence &+= 1
        lacing = []
        body = []
        granule = nil
        continued = false
        if let previous = held { batch += previous.bytes }
        held = page
        if batch.count >= 1 << 20 {
            try output.writeAll(batch)
            batch = []
        }
    }
}
