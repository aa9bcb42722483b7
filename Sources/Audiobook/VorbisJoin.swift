import SystemKit

/// Joins Ogg Vorbis files encoded separately with one encoder setup (segments of one rendering, encoded in
/// parallel) into one logical stream: the first file's three headers, then every file's audio pages with one
/// serial number, continuous page numbers and granule positions counted across the joins; the last page ends
/// the stream and trims the last file's end padding.
///
/// Source: Vorbis I specification §A.2 (granule position: the PCM sample at the end of the last packet
/// completed on the page; only the last page may end short of its packets), §4.3.8 (a packet decodes into a
/// quarter of the previous block plus a quarter of its own; the stream's first packet into nothing). Each
/// segment's encoder starts afresh from silence and ends on zero padding, so at a join the decoder adds the
/// previous segment's padding and overlaps its last block with the next one's first: a few tens of
/// milliseconds of near silence, inside the pause between two sentences, where segments are cut. The setup
/// headers must be identical (one set of codebooks for the whole stream), which is checked.
public final class OggVorbisJoiner {
    /// The block size of an audio packet from its first bytes, given the three headers.
    public typealias BlockSizes = ([UInt8]) -> Int

    private let stream: OggStreamWriter
    private let makeBlockSizes: ([[UInt8]]) throws -> BlockSizes
    private var blockSizes: BlockSizes?
    private var headers: [[UInt8]] = []
    /// Samples decoded so far in the joined stream, and the block size of its last packet.
    private var granule: UInt64 = 0
    private var previousBlock: Int?
    private var padding: UInt64 = 0

    /// A joiner writing to `output` from its current offset; `blockSizes` makes the packets' block size
    /// function from the first file's headers (identification, comment, setup).
    public init(output: FileDescriptor, blockSizes: @escaping ([[UInt8]]) throws -> BlockSizes) {
        stream = OggStreamWriter(output: output)
        makeBlockSizes = blockSizes
    }

    /// Appends the Ogg Vorbis file read from `input` (from its current offset).
    /// - Throws: `RetagError` for a file not laid out as an Ogg Vorbis stream or encoded with another setup,
    ///   the error of `blockSizes`, or the `Errno` of a read or write.
    public func append(_ input: FileDescriptor) throws {
        let reader = ByteReader(input)
        let isFirst = blockSizes == nil
        var ownHeaders: [[UInt8]] = []
        var partial: [UInt8] = []
        var ownSum: UInt64 = 0
        var ownPrevious: Int?
        var lastGranule: UInt64 = 0
        while var page = try OggPage.read(reader) {
            if ownHeaders.count < 3 {
                try readHeaders(page, into: &ownHeaders, partial: &partial, isFirst: isFirst)
                continue
            }
            guard let blockSizes else { throw RetagError.layout("no Vorbis headers") }
            var offset = 0
            var ended = false
            for lace in page.lacing {
                if partial.count < 2 { partial += page.body[offset..<offset + min(Int(lace), 2 - partial.count)] }
                offset += Int(lace)
                guard lace < 255 else { continue }
                let block = blockSizes(partial)
                partial = []
                guard block > 0 else { throw RetagError.layout("a Vorbis packet that is not audio") }
                if let previousBlock { granule += UInt64(previousBlock / 4 + block / 4) }
                if let ownPrevious { ownSum += UInt64(ownPrevious / 4 + block / 4) }
                previousBlock = block
                ownPrevious = block
                ended = true
            }
            if page.granule != UInt64.max { lastGranule = page.granule }
            page.flags &= OggPage.continued
            page.granule = ended ? granule : UInt64.max
            try stream.write(page)
        }
        padding = ownSum > lastGranule ? ownSum - lastGranule : 0
    }

    /// Collects the header packets of a file; the first file's pages are written, the others' checked
    /// against them.
    private func readHeaders(_ page: OggPage, into own: inout [[UInt8]], partial: inout [UInt8], isFirst: Bool) throws {
        if own.isEmpty && partial.isEmpty {
            guard page.flags & OggPage.beginning != 0, page.body.starts(with: [1] + Array("vorbis".utf8)) else {
                throw RetagError.layout("not an Ogg Vorbis stream")
            }
        }
        var offset = 0
        for lace in page.lacing {
            partial += page.body[offset..<offset + Int(lace)]
            offset += Int(lace)
            if lace < 255 { own.append(partial); partial = [] }
        }
        guard own.count <= 3, partial.isEmpty || own.count < 3 else {
            throw RetagError.layout("Vorbis audio on a header page")
        }
        if isFirst {
            try stream.write(page)
            if own.count == 3 {
                headers = own
                blockSizes = try makeBlockSizes(own)
            }
        } else if own.count == 3, own[0] != headers[0] || own[2] != headers[2] {
            throw RetagError.layout("Vorbis segments encoded with different setups")
        }
    }

    /// Writes the last page, marked as the end of the stream, its granule position trimmed of the padding.
    /// - Throws: the `Errno` of the write.
    public func finish() throws {
        try stream.finish(granule: granule > padding ? granule - padding : granule)
    }
}
