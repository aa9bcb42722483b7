import SystemKit

/// Joins Ogg Opus files encoded separately (segments of one rendering, encoded in parallel) into one logical
/// stream: the first file's headers, then every file's audio pages with one serial number, continuous page
/// numbers and granule positions counted across the joins; the last page ends the stream and trims the last
/// file's end padding.
///
/// Source: RFC 7845 §4 (granule position: 48 kHz samples decoded, including the pre-skip; only the last page
/// may end short of its packets), RFC 6716 §3.1 (a packet's duration from its TOC byte). Each segment's
/// encoder starts afresh: at a join the decoder hears its pre-skip (6.5 ms) and the previous segment's
/// padding (under 20 ms), both inside the pause between two sentences, where segments are cut.
public final class OggOpusJoiner {
    private let stream: OggStreamWriter
    private var granule: UInt64 = 0
    private var padding: UInt64 = 0

    /// A joiner writing to `output` from its current offset.
    public init(output: FileDescriptor) { stream = OggStreamWriter(output: output) }

    /// Appends the Ogg Opus file read from `input` (from its current offset).
    /// - Throws: `RetagError` for a file not laid out as an Ogg Opus stream, or the `Errno` of a read or write.
    public func append(_ input: FileDescriptor) throws {
        let reader = ByteReader(input)
        let isFirst = stream.serial == nil
        var headerPackets = 0
        var ownSum: UInt64 = 0
        var lastGranule: UInt64 = 0
        var packetHead: [UInt8] = []  // the first bytes of the packet being read (TOC and frame count)
        while var page = try OggPage.read(reader) {
            if headerPackets < 2 {
                headerPackets += page.lacing.filter { $0 < 255 }.count
                if isFirst { try stream.write(page) }
                continue
            }
            if stream.serial == nil { throw RetagError.layout("no Opus identification header") }
            var offset = 0
            var ended: UInt64 = 0
            for lace in page.lacing {
                if packetHead.count < 2 { packetHead += page.body[offset..<offset + min(Int(lace), 2 - packetHead.count)] }
                offset += Int(lace)
                if lace < 255 {
                    ended += OggOpusJoiner.samples(ofPacketStartingWith: packetHead)
                    packetHead = []
                }
            }
            ownSum += ended
            granule += ended
            if page.granule != UInt64.max { lastGranule = page.granule }
            page.flags &= OggPage.continued
            page.granule = granule
            try stream.write(page)
        }
        padding = ownSum > lastGranule ? ownSum - lastGranule : 0
    }

    /// Writes the last page, marked as the end of the stream, its granule position trimmed of the padding.
    /// - Throws: the `Errno` of the write.
    public func finish() throws {
        try stream.finish(granule: granule > padding ? granule - padding : granule)
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
