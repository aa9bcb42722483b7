import ArchiveKit
import Testing

/// `ZipReader`: entries decompressed when asked for, in any order, within the limits.
@Suite struct ZipReaderTests {
    /// A zip of stored (uncompressed) entries, as PKWARE's APPNOTE lays it out: local headers and data, then
    /// the central directory and its end record.
    static func zip(_ entries: [(String, String)]) -> [UInt8] {
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(v >> (8 * $0) & 0xFF) } }
        func crc32(_ bytes: [UInt8]) -> UInt32 {
            var crc: UInt32 = 0xFFFF_FFFF
            for b in bytes {
                crc ^= UInt32(b)
                for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
            }
            return ~crc
        }
        var out: [UInt8] = [], central: [UInt8] = []
        for (name, text) in entries {
            let data = Array(text.utf8), nameBytes = Array(name.utf8)
            let common = le16(10) + le16(0) + le16(0) + le16(0) + le16(0) + le32(crc32(data))
                + le32(UInt32(data.count)) + le32(UInt32(data.count)) + le16(nameBytes.count) + le16(0)
            central += le32(0x0201_4B50) + le16(20) + common + le16(0) + le16(0) + le16(0) + le32(0) + le32(UInt32(out.count)) + nameBytes
            out += le32(0x0403_4B50) + common + nameBytes + data
        }
        let start = out.count
        out += central
        out += le32(0x0605_4B50) + le16(0) + le16(0) + le16(entries.count) + le16(entries.count)
            + le32(UInt32(central.count)) + le32(UInt32(start)) + le16(0)
        return out
    }

    @Test func entriesAreReadInAnyOrderAndOnlyWhenAsked() throws {
        let reader = try ZipReader(Self.zip([("a.xml", "first"), ("b.xhtml", "second"), ("c.xhtml", "third")]))
        #expect(reader.names == ["a.xml", "b.xhtml", "c.xhtml"])
        #expect(try reader.contents(of: "c.xhtml") == Array("third".utf8))
        #expect(try reader.contents(of: "a.xml") == Array("first".utf8))  // before the last one read: from the start again
        #expect(try reader.contents(of: "b.xhtml") == Array("second".utf8))
        #expect(try reader.contents(of: "missing.xml") == nil)
    }

    @Test func entriesAskedForInReverseCostOnePass() throws {
        let names = (0..<500).map { "chapter\($0).xhtml" }
        let bytes = Self.zip(names.map { ($0, "text of \($0)") })
        let kept = try ZipReader(bytes, keeping: { $0.hasSuffix(".xhtml") })
        for name in names.reversed() { #expect(try kept.contents(of: name) == Array("text of \(name)".utf8)) }
        #expect(kept.headersRead == names.count)
        // Without keeping, each entry before the last one asked for is looked for from the start again.
        let unkept = try ZipReader(bytes)
        for name in names.reversed().prefix(10) { _ = try unkept.contents(of: name) }
        #expect(unkept.headersRead > 9 * (names.count - 10))
    }

    @Test func anEntryAskedForAgainIsFoundFromTheStart() throws {
        let reader = try ZipReader(Self.zip([("a.xml", "first"), ("b.xml", "second")]), keeping: { _ in true })
        #expect(try reader.contents(of: "b.xml") == Array("second".utf8))
        #expect(try reader.contents(of: "a.xml") == Array("first".utf8))  // kept when passed
        #expect(try reader.contents(of: "b.xml") == Array("second".utf8))  // returned once: read again
        #expect(reader.headersRead == 4)
    }

    @Test func limitsHoldPerEntry() throws {
        var limits = ZipArchive.Limits()
        limits.maximumEntryBytes = 4
        let reader = try ZipReader(Self.zip([("small", "abc"), ("large", "abcdefgh")]), limits: limits)
        #expect(try reader.contents(of: "small") == Array("abc".utf8))
        #expect(throws: ArchiveError.self) { try reader.contents(of: "large") }
    }

    @Test func garbageAndTruncatedZipsAreOneError() {
        #expect(throws: ArchiveError.self) { try ZipReader(Array("not a zip".utf8)) }
        let whole = Self.zip([("a.xml", String(repeating: "x", count: 1000))])
        #expect(throws: ArchiveError.self) { try ZipReader(Array(whole.prefix(whole.count / 2))) }
    }
}
