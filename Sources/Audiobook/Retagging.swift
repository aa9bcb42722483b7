import SystemKit

/// Writes an encoded file again with Lector's tags: the Vorbis comments of Ogg Vorbis, Ogg Opus and FLAC
/// are replaced, an MP3 gets an ID3v2.4 tag in front; the audio is copied as it is.
///
/// libsndfile writes only its fixed strings (title, artist, …), not languages or chapter marks, so the file
/// it encodes is rewritten once, streaming (memory does not grow with the file).
public enum Retagging {
    /// The containers whose tags are rewritten.
    public enum Container: Sendable {
        /// Ogg with Vorbis or Opus (comment header, the second packet).
        case ogg
        /// FLAC (METADATA_BLOCK_VORBIS_COMMENT).
        case flac
        /// MPEG audio (an ID3v2 tag in front; one written by the encoder is dropped).
        case mp3
    }

    /// Copies `source` (read from its start) to `destination` with `tags` in place of the original ones,
    /// the last chapter ending at `durationMs`.
    /// - Throws: `RetagError` for a file not in the expected layout, or the `Errno` of a read or write.
    public static func rewrite(_ container: Container, from source: FileDescriptor, to destination: FileDescriptor,
                               tags: AudioTags, durationMs: Int) throws -> Void {
        let input = ByteReader(source)
        switch container {
        case .ogg: try OggRetagger(input: input, output: destination, tags: tags).run()
        case .flac: try rewriteFLAC(input, destination, tags)
        case .mp3:
            let head = try input.peek(10)
            try input.skip(ID3v2.size(atStartOf: head))
            try destination.writeAll(ID3v2.tag(tags, durationMs: durationMs))
            try input.copyRest(to: destination)
        }
    }

    /// Copies `source` (from its current offset, after any ID3v2 tag there) to the end of `destination`: MPEG
    /// audio frames of separately encoded segments, which decoders read as one stream.
    /// - Throws: the `Errno` of a read or write.
    public static func copy(from source: FileDescriptor, to destination: FileDescriptor) throws {
        let input = ByteReader(source)
        try input.skip(ID3v2.size(atStartOf: try input.peek(10)))
        try input.copyRest(to: destination)
    }

    /// FLAC: "fLaC", metadata blocks (1 byte last-flag and type, 24-bit big-endian length, body), frames.
    private static func rewriteFLAC(_ input: ByteReader, _ output: FileDescriptor, _ tags: AudioTags) throws {
        var blocks = try FLACMetadata.read(input)
        let vendor = blocks.first { $0.type == 4 }.flatMap { VorbisComment.parse($0.body, at: 0)?.vendor } ?? Array("Lector".utf8)
        blocks.removeAll { $0.type == 4 }
        blocks.insert((4, VorbisComment.body(vendor: vendor, comments: tags.vorbisComments)), at: min(1, blocks.count))
        try output.writeAll(FLACMetadata.bytes(blocks))
        try input.copyRest(to: output)
    }
}

/// FLAC's metadata: "fLaC", then blocks of a 1-byte last-block flag and type, a 24-bit big-endian length and
/// the body. Source: the FLAC format, METADATA_BLOCK_HEADER.
enum FLACMetadata {
    /// One block: its type (0 STREAMINFO, 3 SEEKTABLE, 4 VORBIS_COMMENT, …) and body.
    typealias Block = (type: UInt8, body: [UInt8])

    /// Reads "fLaC" and every metadata block, leaving `input` at the first frame.
    /// - Throws: `RetagError` for a file not laid out as FLAC, or the `Errno` of a read.
    static func read(_ input: ByteReader) throws -> [Block] {
        guard try input.read(4) == Array("fLaC".utf8) else { throw RetagError.layout("not a FLAC file") }
        var blocks: [Block] = []
        var last = false
        while !last {
            let header = try input.read(4)
            guard header.count == 4 else { throw RetagError.layout("truncated FLAC metadata") }
            last = header[0] & 0x80 != 0
            let length = Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
            let body = try input.read(length)
            guard body.count == length else { throw RetagError.layout("truncated FLAC metadata") }
            blocks.append((header[0] & 0x7F, body))
        }
        return blocks
    }

    /// "fLaC" and `blocks`, the last one flagged as such.
    static func bytes(_ blocks: [Block]) -> [UInt8] {
        var out: [UInt8] = Array("fLaC".utf8)
        for (i, block) in blocks.enumerated() {
            out.append(block.type | (i == blocks.count - 1 ? 0x80 : 0))
            out.appendBE24(block.body.count)
            out += block.body
        }
        return out
    }
}

/// A file that is not laid out as its encoder writes it.
public enum RetagError: Error, CustomStringConvertible {
    /// What was wrong.
    case layout(String)
    /// The message.
    public var description: String {
        switch self { case .layout(let s): return s }
    }
}

/// Buffered sequential reads from a descriptor.
final class ByteReader {
    private let fd: FileDescriptor
    private var buffer: [UInt8] = []
    private var start = 0
    private static let chunk = 1 << 20

    init(_ fd: FileDescriptor) { self.fd = fd }

    /// Fills the buffer to at least `count` bytes unless the file ends first.
    private func fill(_ count: Int) throws(Errno) {
        if start > 0 && buffer.count - start < count {
            buffer.removeSubrange(0..<start)
            start = 0
        }
        while buffer.count - start < count {
            var more = [UInt8](repeating: 0, count: max(ByteReader.chunk, count))
            let n = try fd.read(into: &more)
            if n == 0 { return }
            buffer += more[0..<n]
        }
    }

    /// The next `count` bytes (fewer at the end of the file), consumed.
    func read(_ count: Int) throws(Errno) -> [UInt8] {
        try fill(count)
        let n = min(count, buffer.count - start)
        defer { start += n }
        return Array(buffer[start..<start + n])
    }

    /// The next `count` bytes (fewer at the end), not consumed.
    func peek(_ count: Int) throws(Errno) -> [UInt8] {
        try fill(count)
        return Array(buffer[start..<start + min(count, buffer.count - start)])
    }

    func skip(_ count: Int) throws(Errno) { _ = try read(count) }

    /// Writes everything left to `output`.
    func copyRest(to output: FileDescriptor) throws(Errno) {
        while true {
            if start < buffer.count { try output.writeAll(Array(buffer[start...])) }
            buffer.removeAll(keepingCapacity: true)
            start = 0
            try fill(1)
            if buffer.isEmpty { return }
        }
    }
}
