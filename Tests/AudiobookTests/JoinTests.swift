@preconcurrency import Glibc
import SystemKit
import Testing
@testable import Audiobook

/// Synthetic FLAC: mono 16-bit frames at 22,050 Hz of one CONSTANT subframe each (RFC 9639 §9.2.3).
enum SyntheticFLAC {
    /// A frame numbered `number` of `blockSize` samples (4096, or 1–256 coded in 8 bits) of `value`.
    static func frame(number: UInt64, blockSize: Int = FLACSegment.blockSize, value: Int16) -> [UInt8] {
        let sizeCode: UInt8 = blockSize == 4_096 ? 12 : 6
        var out: [UInt8] = [0xFF, 0xF8, sizeCode << 4 | 6, 4 << 1] + FLACSegment.codedNumber(number)
        if sizeCode == 6 { out.append(UInt8(blockSize - 1)) }
        out.append(FLACSegment.crc8(out[...]))
        out += [0, UInt8(UInt16(bitPattern: value) >> 8), UInt8(UInt16(bitPattern: value) & 0xFF)]
        let crc = FLACSegment.crc16(out[...])
        return out + [UInt8(crc >> 8), UInt8(crc & 0xFF)]
    }

    /// A file of `blocks` whole frames (and a short last one of `tail` samples), STREAMINFO and a SEEKTABLE.
    static func file(blocks: Int, tail: Int = 0) -> [UInt8] {
        let samples = blocks * 4_096 + tail
        var info = [UInt8](repeating: 0, count: 34)
        info[0] = 0x10; info[2] = 0x10 // block sizes 4096
        // 22,050 Hz in 20 bits, mono, 16 bits per sample (15 in 5 bits across bytes 12 and 13).
        info[10] = 0x05; info[11] = 0x62; info[12] = 0x20; info[13] = 0xF0
        for i in 0..<4 { info[14 + i] = UInt8(truncatingIfNeeded: samples >> (8 * (3 - i))) }
        var out = Array("fLaC".utf8) + [0, 0, 0, 34] + info + [0x83, 0, 0, 18] + [UInt8](repeating: 0, count: 18)
        for n in 0..<blocks { out += frame(number: UInt64(n), value: Int16(n)) }
        if tail > 0 { out += frame(number: UInt64(blocks), blockSize: tail, value: -1) }
        return out
    }
}

/// A temporary file holding `bytes`, open for reading and writing; removed when closed by the test.
func temporaryFile(_ bytes: [UInt8] = []) throws -> FileDescriptor {
    var template = Array("/tmp/lector-join-XXXXXX".utf8CString)
    let raw = mkstemp(&template)
    template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
    let fd = FileDescriptor(rawValue: raw)
    try fd.writeAll(bytes)
    _ = try fd.seek(offset: 0, from: .start)
    return fd
}

func contents(_ fd: FileDescriptor) throws -> [UInt8] {
    _ = try fd.seek(offset: 0, from: .start)
    var out: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
        let n = try fd.read(into: &chunk)
        if n == 0 { return out }
        out += chunk[0..<n]
    }
}

@Suite struct FLACJoinTests {
    @Test("Frame numbers are coded as FLAC codes them, and read back from the header")
    func numbers() throws {
        #expect(FLACSegment.codedNumber(0x7F) == [0x7F])
        #expect(FLACSegment.codedNumber(0x80) == [0xC2, 0x80])
        #expect(FLACSegment.codedNumber(0x7FF) == [0xDF, 0xBF])
        #expect(FLACSegment.codedNumber(0x800) == [0xE0, 0xA0, 0x80])
        for n: UInt64 in [0, 127, 128, 2_047, 2_048, 65_535, 65_536, 1 << 21, (1 << 31) - 1] {
            let header = try #require(FLACSegment.header(SyntheticFLAC.frame(number: n, value: 1), at: 0))
            #expect(header.number == n && header.blockSize == 4_096 && header.numberLength == FLACSegment.codedNumber(n).count)
        }
        var broken = SyntheticFLAC.frame(number: 5, value: 1)
        broken[4] ^= 1
        #expect(FLACSegment.header(broken, at: 0) == nil)
    }

    @Test("A segment's frames are renumbered with valid CRCs, and its STREAMINFO gets the new frame sizes")
    func renumber() throws {
        let segment = SyntheticFLAC.file(blocks: 3, tail: 100)
        let out = try FLACSegment.renumber(segment, firstFrame: 200)
        var at = try FLACSegment.audioStart(out)
        var numbers: [UInt64] = []
        var sizes: [Int] = []
        while at < out.count {
            let header = try #require(FLACSegment.header(out, at: at))
            numbers.append(header.number)
            let size = header.length + 5
            #expect(FLACSegment.crc16(out[at..<at + size]) == 0)
            sizes.append(size)
            at += size
        }
        #expect(numbers == [200, 201, 202, 203])
        #expect(Array(out[12..<18]) == [0, 0, UInt8(sizes.min()!), 0, 0, UInt8(sizes.max()!)])
        #expect(throws: RetagError.self) { try FLACSegment.renumber(Array(segment.dropLast()), firstFrame: 0) }
        // Only the last block of a segment may be short.
        var early = SyntheticFLAC.file(blocks: 1, tail: 100)
        early += SyntheticFLAC.frame(number: 2, value: 3)
        #expect(throws: RetagError.self) { try FLACSegment.renumber(early, firstFrame: 0) }
    }

    @Test("Segments join after one set of metadata, without the SEEKTABLE, with the total samples and the MD5")
    func join() throws {
        let output = try temporaryFile()
        defer { try? output.close() }
        let joiner = FLACJoiner(output: output)
        let first = try temporaryFile(try FLACSegment.renumber(SyntheticFLAC.file(blocks: 2), firstFrame: 0))
        let second = try temporaryFile(try FLACSegment.renumber(SyntheticFLAC.file(blocks: 1, tail: 10), firstFrame: 2))
        defer { try? first.close(); try? second.close() }
        try joiner.append(first)
        try joiner.append(second)
        let md5 = [UInt8](1...16)
        try joiner.finish(md5: md5)
        let bytes = try contents(output)
        #expect(bytes[4] == 0x80) // STREAMINFO, the last block
        #expect(Array(bytes[8 + 13..<8 + 18]) == [0xF0, 0, 0, 0x30, 0x0A]) // 3 × 4096 + 10
        #expect(Array(bytes[8 + 18..<8 + 34]) == md5)
        var at = try FLACSegment.audioStart(bytes)
        var numbers: [UInt64] = []
        while at < bytes.count, let header = FLACSegment.header(bytes, at: at) {
            numbers.append(header.number)
            at += header.length + 5
        }
        #expect(numbers == [0, 1, 2, 3] && at == bytes.count)
        // A segment ending on part of a block cannot be followed.
        #expect(throws: RetagError.self) { try joiner.append(try temporaryFile(SyntheticFLAC.file(blocks: 1))) }
    }
}

@Suite struct VorbisJoinTests {
    /// An Ogg Vorbis file: the three headers on two pages, then audio pages of one-byte packets whose
    /// value is their block size / 256 (the fake block size function reads it back).
    static func file(serial: UInt32, blocks: [[Int]], lastGranule: UInt64, setup: UInt8 = 5) -> [UInt8] {
        let id = [1] + Array("vorbis".utf8) + [UInt8](repeating: 0, count: 23)
        let comment = [3] + Array("vorbis".utf8) + [0, 0, 0, 0, 0, 0, 0, 0, 1]
        let setupPacket = [5] + Array("vorbis".utf8) + [setup]
        var out = OggPage(flags: OggPage.beginning, granule: 0, serial: serial, sequence: 0, lacing: [UInt8(id.count)], body: id).bytes
        out += OggPage(flags: 0, granule: 0, serial: serial, sequence: 1, lacing: [UInt8(comment.count), UInt8(setupPacket.count)],
                       body: comment + setupPacket).bytes
        var granule: UInt64 = 0
        var previous: Int?
        for (i, page) in blocks.enumerated() {
            for block in page {
                if let previous { granule += UInt64(previous / 4 + block / 4) }
                previous = block
            }
            let last = i == blocks.count - 1
            out += OggPage(flags: last ? 4 : 0, granule: last ? lastGranule : granule, serial: serial, sequence: UInt32(2 + i),
                           lacing: page.map { _ in 1 }, body: page.map { UInt8($0 / 256) }).bytes
        }
        return out
    }

    static func pages(_ bytes: [UInt8]) throws -> [OggPage] {
        let fd = try temporaryFile(bytes)
        defer { try? fd.close() }
        let reader = ByteReader(fd)
        var pages: [OggPage] = []
        while let page = try OggPage.read(reader) { pages.append(page) }
        return pages
    }

    /// The audio packets' block sizes in a joined file, and its pages.
    static func joined(_ output: FileDescriptor) throws -> (blocks: [Int], pages: [OggPage]) {
        let bytes = try contents(output)
        let fd = try temporaryFile(bytes)
        defer { try? fd.close() }
        let packets = OggPacketReader(ByteReader(fd))
        var blocks: [Int] = []
        while let packet = try packets.next() {
            if packet.count == 1 { blocks.append(Int(packet[0]) * 256) }
        }
        return (blocks, try pages(bytes))
    }

    @Test("A segment hands over where the blocks of both share a centre: one stream, the lead-in dropped, granules counted on, the end trimmed")
    func join() throws {
        let output = try temporaryFile()
        defer { try? output.close() }
        let joiner = OggVorbisJoiner(output: output) { headers in
            #expect(headers.count == 3)
            return { Int($0[0]) * 256 }
        }
        // Centres 0, 384, 896 … 3456; the next segment starts at 1024: centres 1024, 1408, 1920, 2432, 2944, 3456.
        let first = try temporaryFile(Self.file(serial: 1, blocks: [[512, 1024, 1024], [1024, 1024, 1024, 1024, 1024]], lastGranule: 3_456))
        let second = try temporaryFile(Self.file(serial: 2, blocks: [[512, 1024, 1024], [1024, 1024, 1024]], lastGranule: 2_432))
        defer { try? first.close(); try? second.close() }
        try joiner.append(first, start: 0, handover: 1_964..<2_988)
        try joiner.append(second, start: 1_024, handover: nil)
        try joiner.finish(samples: 3_300)
        #expect(joiner.shift == 0)
        let (blocks, pages) = try Self.joined(output)
        // The first six packets (through the centre at 2432), then the second's from the one centred at 2944.
        #expect(blocks == [512] + [Int](repeating: 1_024, count: 7))
        #expect(pages.map(\.sequence) == Array(0..<UInt32(pages.count)))
        #expect(Set(pages.map(\.serial)) == [1])
        #expect(pages.first?.flags == 2 && pages.last?.flags == 4 && pages.last?.granule == 3_300)
        let other = try temporaryFile(Self.file(serial: 3, blocks: [[1024]], lastGranule: 0, setup: 6))
        defer { try? other.close() }
        #expect(throws: RetagError.self) { try joiner.append(other, start: 0, handover: nil) }
    }

    @Test("Where no centre is shared, the pair that keeps the audio nearest its place is taken, and its shift reported")
    func shifted() throws {
        let output = try temporaryFile()
        defer { try? output.close() }
        let joiner = OggVorbisJoiner(output: output) { _ in { Int($0[0]) * 256 } }
        let first = try temporaryFile(Self.file(serial: 1, blocks: [[512, 1024, 1024], [1024, 1024, 1024, 1024, 1024]], lastGranule: 3_456))
        let second = try temporaryFile(Self.file(serial: 2, blocks: [[512, 1024, 1024], [1024, 1024, 1024]], lastGranule: 2_432))
        defer { try? first.close(); try? second.close() }
        try joiner.append(first, start: 0, handover: 1_964..<2_988)
        // Centres 1152, 1536, 2048, 2560, 3072, 3584: a quarter of a long block off the first's.
        try joiner.append(second, start: 1_152, handover: nil)
        try joiner.finish(samples: 3_300)
        #expect(joiner.shift == -128)
        let (blocks, pages) = try Self.joined(output)
        #expect(blocks.count == 8 && pages.last?.granule == 3_172)
    }
}

@Suite struct OggPacketTests {
    @Test("Packets of any length, 255 bytes and its multiples too, come back whole across pages")
    func lacing() throws {
        let output = try temporaryFile()
        defer { try? output.close() }
        let writer = OggPacketWriter(output: output, serial: 7)
        let packets: [[UInt8]] = [[1, 2, 3], [UInt8](repeating: 9, count: 255), [UInt8](repeating: 4, count: 70_000), [], [5]]
        try writer.writeHeader(packets[0])
        for (i, packet) in packets.dropFirst().enumerated() { try writer.write(packet, granule: UInt64(i + 1)) }
        try writer.finish(granule: 3)
        let fd = try temporaryFile(try contents(output))
        defer { try? fd.close() }
        let reader = OggPacketReader(ByteReader(fd))
        var read: [[UInt8]] = []
        while let packet = try reader.next() { read.append(packet) }
        #expect(read == packets)
        let pages = try VorbisJoinTests.pages(try contents(output))
        #expect(pages.first?.flags == 2 && pages.last?.flags == 4 && pages.last?.granule == 3)
        #expect(pages.allSatisfy { $0.lacing.count <= 255 })
    }
}

@Suite struct JoinPlanTests {
    @Test("Overlapping MP3 and Opus segments start on the previous one's frame grid and hand over on a boundary of both, before the cut")
    func grids() {
        let mp3 = JoinPlan.Codec.mp3(frameSamples: 576)
        var start = 0, lower = 0
        for cut in [1_323_017, 2_646_101, 3_970_000] {
            let (segment, next, nextLower) = JoinPlan.cut(mp3, start: start, lower: lower, cut: cut)
            #expect((next - start) % 576 == 0 && next < cut - 2_000)
            #expect(segment.keep.lowerBound == lower && segment.keep.upperBound % 576 == 0 && nextLower % 576 == 0)
            // The hand-over point is the same source sample in both segments' decoded streams.
            let handover = start + segment.keep.upperBound - MP3Joiner.codecDelay
            #expect(handover == next + nextLower - MP3Joiner.codecDelay && handover <= cut - 1_152 && nextLower >= 3 * 576)
            (start, lower) = (next, nextLower)
        }
        let opus = JoinPlan.Codec.opus(sourceRate: 22_050, preSkip: 312)
        #expect(JoinPlan.opusGrid(sourceRate: 22_050) == 441 && JoinPlan.opusGrid(sourceRate: 16_000) == 320)
        start = 0; lower = 0
        for cut in [1_323_017, 2_646_101] {
            let (segment, next, nextLower) = JoinPlan.cut(opus, start: start, lower: lower, cut: cut)
            #expect((next - start) % 441 == 0 && segment.keep.upperBound % 960 == 0 && nextLower % 960 == 0 && nextLower >= 960)
            #expect(start * 320 / 147 + segment.keep.upperBound == next * 320 / 147 + nextLower)
            (start, lower) = (next, nextLower)
        }
    }
}

/// Synthetic MP3: MPEG-1 Layer III mono frames at 44,100 Hz and 128 kbit/s (417 bytes, a 396-byte slot after
/// the header and 17 bytes of side information), whose main data is given bytes at a given main_data_begin.
enum SyntheticMP3 {
    static let slot = 396

    /// One frame's header and side information: main_data_begin `begin`, `length` bytes of main data in its
    /// two granules' part2_3_length; the slot left zero.
    static func frame(begin: Int, length: Int) -> [UInt8] {
        var bits: [Bool] = []
        func put(_ value: Int, _ count: Int) { for i in (0..<count).reversed() { bits.append(value >> i & 1 == 1) } }
        put(begin, 9); put(0, 5); put(0, 4)
        let first = min(length * 8, 4_000)
        for granule in [first, length * 8 - first] { put(granule, 12); put(0, 47) }
        let side = stride(from: 0, to: bits.count, by: 8).map { at in
            bits[at..<at + 8].reduce(UInt8(0)) { $0 << 1 | ($1 ? 1 : 0) }
        }
        return [0xFF, 0xFB, 9 << 4, 0xC0] + side + [UInt8](repeating: 0, count: slot)
    }

    /// A file of frames whose main data are `data` in order, each at `begins`' main_data_begin, written into
    /// the slots as an encoder's bit reservoir holds them.
    static func file(_ data: [[UInt8]], begins: [Int]) -> [UInt8] {
        var frames = zip(data, begins).map { frame(begin: $1, length: $0.count) }
        var stream = [UInt8](repeating: 0, count: frames.count * slot)
        for (n, bytes) in data.enumerated() {
            let start = n * slot - begins[n]
            stream.replaceSubrange(start..<start + bytes.count, with: bytes)
        }
        for n in frames.indices { frames[n].replaceSubrange(21..., with: stream[n * slot..<(n + 1) * slot]) }
        return frames.flatMap { $0 }
    }

    /// The main data of each audio frame of an MP3 stream (after its Info frame), read through the reservoir.
    static func mainData(_ bytes: [UInt8]) -> [[UInt8]] {
        var at = 0, stream: [UInt8] = [], out: [[UInt8]] = []
        while at + 4 <= bytes.count, let header = MP3Header(bytes[at...]) {
            let frame = MP3Frame(header: header, bytes: Array(bytes[at..<at + header.length]))
            at += header.length
            if frame.isInfoTag { continue }
            let start = stream.count - frame.mainDataBegin
            stream += frame.bytes[header.prefixLength...]
            out.append(Array(stream[start..<start + frame.mainDataLength]))
        }
        return out
    }
}

@Suite struct MP3JoinTests {
    @Test("A frame whose main data used a reservoir the other encoder filled gets a larger frame at the join, and every frame's main data comes through")
    func reservoirAtAJoin() throws {
        let full = (0..<3).map { n in [UInt8](repeating: UInt8(n + 1), count: SyntheticMP3.slot) }
        let first = try temporaryFile(SyntheticMP3.file(full, begins: [0, 0, 0]))
        // The second file's lead-in frame leaves room that its next frame's main data starts in.
        let leadIn = [UInt8](repeating: 0xA0, count: 200), late = (0..<546).map { UInt8(truncatingIfNeeded: $0) }
        let second = try temporaryFile(SyntheticMP3.file([leadIn, late, [0xB0]], begins: [0, 150, 0]))
        let output = try temporaryFile()
        let joiner = MP3Joiner(output: output)
        try joiner.append(first)
        try joiner.append(second, keep: 1_152..<Int.max)
        try joiner.finish(samples: 5 * 1_152 - MP3Joiner.encoderDelay)
        let joined = try contents(output)
        #expect(SyntheticMP3.mainData(joined) == full + [late, [0xB0]])
        #expect(joiner.frames == 5)
    }
}
