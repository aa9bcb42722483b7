import Testing
@testable import GLibKit

@Suite struct ChecksumTests {
    @Test("MD5 takes samples as signed little-endian bytes, fed in any pieces")
    func md5() {
        let whole = MD5()
        whole.update(littleEndian: [1, -1])
        let pieces = MD5()
        pieces.update(littleEndian: [1])
        pieces.update(littleEndian: [])
        pieces.update(littleEndian: [-1])
        let expected: [UInt8] = [147, 124, 88, 237, 229, 200, 4, 100, 129, 74, 24, 190, 158, 84, 43, 228]
        #expect(whole.digest() == expected && pieces.digest() == expected)
        #expect(MD5().digest() == [0xd4, 0x1d, 0x8c, 0xd9, 0x8f, 0x00, 0xb2, 0x04, 0xe9, 0x80, 0x09, 0x98, 0xec, 0xf8, 0x42, 0x7e])
    }
}
