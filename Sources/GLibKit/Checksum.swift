import CGio

/// An MD5 digest computed incrementally (`GChecksum`, G_CHECKSUM_MD5): FLAC's STREAMINFO carries the MD5 of
/// the decoded PCM.
///
/// Not thread-safe: one thread feeds it.
public final class MD5 {
    private let checksum: OpaquePointer

    /// An empty digest.
    public init() { checksum = g_checksum_new(G_CHECKSUM_MD5) }

    deinit { g_checksum_free(checksum) }

    /// Adds 16-bit samples as signed little-endian bytes, as FLAC's MD5 takes them (RFC 9639 §8.2).
    public func update(littleEndian samples: [Int16]) {
        samples.map { $0.littleEndian }.withUnsafeBytes { raw in
            g_checksum_update(checksum, raw.bindMemory(to: UInt8.self).baseAddress, raw.count)
        }
    }

    /// The 16 bytes of the digest of everything added; the digest cannot be updated after.
    public func digest() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 16)
        var length = 16
        g_checksum_get_digest(checksum, &bytes, &length)
        return Array(bytes[0..<length])
    }
}
