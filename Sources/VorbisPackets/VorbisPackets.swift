import CVorbis

/// A Vorbis stream's headers, decoded by libvorbis to tell each audio packet's block size.
///
/// Source: Vorbis I specification §4.3.1 (an audio packet's mode number, after its type bit, chooses a
/// mode whose block flag picks blocksize_0 or blocksize_1 from the identification header) and §4.3.8 (a
/// packet decodes into the samples from the centre of the previous block to the centre of its own: a quarter
/// of each block size). libvorbis's `vorbis_packet_blocksize` reads the modes the setup header defines.
public final class VorbisPackets {
    private let info: UnsafeMutablePointer<vorbis_info>

    /// Reads the three header packets (identification, comment, setup).
    /// - Throws: `VorbisHeaderError` when libvorbis refuses one of them.
    public init(headers: [[UInt8]]) throws(VorbisHeaderError) {
        info = .allocate(capacity: 1)
        vorbis_info_init(info)
        var comment = vorbis_comment()
        vorbis_comment_init(&comment)
        defer { vorbis_comment_clear(&comment) }
        for (number, header) in headers.enumerated() {
            var bytes = header
            let status = bytes.withUnsafeMutableBufferPointer { buffer in
                var packet = ogg_packet(packet: buffer.baseAddress, bytes: buffer.count, b_o_s: number == 0 ? 1 : 0,
                                        e_o_s: 0, granulepos: 0, packetno: ogg_int64_t(number))
                return vorbis_synthesis_headerin(info, &comment, &packet)
            }
            if status != 0 {
                vorbis_info_clear(info)
                info.deallocate()
                throw VorbisHeaderError(description: "Vorbis header \(number + 1) refused (\(status))")
            }
        }
    }

    deinit {
        vorbis_info_clear(info)
        info.deallocate()
    }

    /// The block size, in samples, of the audio packet whose first bytes are `head` (one byte is enough
    /// for libvorbis's encodings: a type bit and at most 6 bits of mode number); 0 for a packet that is not audio.
    public func blockSize(_ head: [UInt8]) -> Int {
        var bytes = head
        return bytes.withUnsafeMutableBufferPointer { buffer in
            var packet = ogg_packet(packet: buffer.baseAddress, bytes: buffer.count, b_o_s: 0, e_o_s: 0,
                                    granulepos: -1, packetno: 3)
            return max(0, vorbis_packet_blocksize(info, &packet))
        }
    }
}

/// A Vorbis header libvorbis refuses, one line.
public struct VorbisHeaderError: Error, CustomStringConvertible {
    /// What was refused.
    public var description: String
}
