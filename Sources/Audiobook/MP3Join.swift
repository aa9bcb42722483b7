import SystemKit

/// Joins MP3 files encoded separately (segments of one rendering, encoded in parallel) into one stream: an
/// Info frame for the whole file (frame and byte counts, LAME's encoder delay and the end padding, which
/// gapless decoders trim), then the frames of each file that lie in the part of it the caller keeps.
///
/// Segments overlap: each after the first is encoded from a little before its place, on the same grid of
/// frames as the one before, and the frames of that lead-in are dropped, as are the previous segment's frames
/// after the hand-over point; so the joined stream decodes to exactly the samples of the source, with no
/// encoder delay or padding at a join. A frame's main data may begin in earlier frames (the bit reservoir),
/// which at a join belong to the other encoder: every frame's main data is laid out again, at its own place
/// when that is free, else right after the previous frame's, with main_data_begin (and the CRC) rewritten;
/// where it would overrun its frame so, that frame is given a higher bit rate (a larger slot).
///
/// Source: ISO/IEC 11172-3 and 13818-3 Layer III (side information, main_data_begin: the main data of a
/// frame ends within its own slot); the LAME tag (`MP3InfoFrame`).
public final class MP3Joiner {
    /// LAME's encoder delay, samples: the Info frame's delay field (a decoder adds its own 529 to it).
    public static let encoderDelay = 576
    /// Where LAME's input sample 0 is decoded, samples: its 576 and the decoder's 529.
    public static let codecDelay = 1_105

    private let output: FileDescriptor
    private var first: MP3Header?
    private var infoLength = 0
    /// Frames laid out but not written: their slot may still take main data of later frames.
    private var pending: [(frame: MP3Frame, slot: Int)] = []
    /// The output's main data slots from byte `base` of their stream.
    private var slots: [UInt8] = []
    private var base = 0
    private var slotsEnd = 0
    /// Where the last frame's main data ends, in the output's stream of slots.
    private var cursor = 0
    private var batch: [UInt8] = []
    private var written = 0
    private var crc = LAMECRC()
    /// Audio frames in the joined stream so far.
    public private(set) var frames = 0

    /// A joiner writing to `output` from offset 0 (the Info frame is written there at the end).
    public init(output: FileDescriptor) { self.output = output }

    /// Samples per frame (576 at MPEG-2 rates, 1,152 at MPEG-1's); 576 before the first file.
    public var samplesPerFrame: Int { first?.samples ?? 576 }

    /// Appends the frames of the MP3 file read from `input` (from its current offset: an ID3v2 tag and an
    /// Info frame there are skipped) that lie in `keep`: samples of that file's own frames, counted from its
    /// first audio frame; both bounds must fall between frames.
    /// - Throws: `RetagError` for a file that is not Layer III frames like the first file's, a bound inside a
    ///   frame, or main data that cannot be laid out; the `Errno` of a read or write.
    public func append(_ input: FileDescriptor, keep: Range<Int> = 0..<Int.max) throws {
        let reader = ByteReader(input)
        try reader.skip(ID3v2.size(atStartOf: try reader.peek(10)))
        var source: [UInt8] = []    // the file's slots from byte `sourceBase` of their stream
        var sourceBase = 0
        var sourceEnd = 0
        var position = 0
        var leading = true
        while let frame = try MP3Frame.read(reader) {
            defer { leading = false }
            if leading && frame.isInfoTag { continue }
            if first == nil {
                first = frame.header
                infoLength = MP3InfoFrame.length(like: frame.header)
                batch += [UInt8](repeating: 0, count: infoLength)
            }
            guard let first, frame.header.sampleRate == first.sampleRate, frame.header.isMono == first.isMono,
                  frame.header.isMPEG1 == first.isMPEG1 else { throw RetagError.layout("MP3 segments of different kinds") }
            let slotStart = sourceEnd
            source += frame.bytes[frame.header.prefixLength...]
            sourceEnd += frame.bytes.count - frame.header.prefixLength
            let end = position + first.samples
            defer { position = end }
            if (position < keep.lowerBound && end > keep.lowerBound) || (position < keep.upperBound && end > keep.upperBound) {
                throw RetagError.layout("an MP3 join inside a frame (at \(keep), frame \(position)..<\(end))")
            }
            if position >= keep.lowerBound && end <= keep.upperBound {
                let start = slotStart - frame.mainDataBegin, length = frame.mainDataLength
                guard start >= sourceBase, start + length <= sourceEnd else { throw RetagError.layout("MP3 main data outside its reservoir") }
                try add(frame, data: source[(start - sourceBase)..<(start - sourceBase + length)])
            }
            if source.count > 8_192 {
                sourceBase += source.count - 4_096
                source.removeFirst(source.count - 4_096)
            }
        }
    }

    /// Lays out `frame` with its main data `data`, and writes the frames no later one can reach. Main data
    /// that relied on a reservoir the other encoder filled is given a frame of the next higher bit rates
    /// until it fits: one larger frame at a join, which every decoder takes (bit rates may change per frame).
    private func add(_ frame: MP3Frame, data: ArraySlice<UInt8>) throws {
        var frame = frame
        let slot = slotsEnd
        let start = max(cursor, slot - frame.mainDataBegin)
        while start + data.count > slot + frame.bytes.count - frame.header.prefixLength, frame.header.bitrateIndex < 14 {
            frame = frame.resized(bitrateIndex: frame.header.bitrateIndex + 1)
        }
        let size = frame.bytes.count - frame.header.prefixLength
        slots += [UInt8](repeating: 0, count: size)
        slotsEnd += size
        guard start + data.count <= slot + size, start >= base else {
            throw RetagError.layout("MP3 main data does not fit its frame after a join")
        }
        slots.replaceSubrange((start - base)..<(start - base + data.count), with: data)
        cursor = start + data.count
        frame.setMainDataBegin(slot - start)
        pending.append((frame, slot))
        frames += 1
        try flush(before: slotsEnd - frame.header.maximumBackstep)
    }

    /// Writes the pending frames whose slots end at or before `limit`.
    private func flush(before limit: Int) throws {
        var count = 0
        for (frame, slot) in pending {
            let size = frame.bytes.count - frame.header.prefixLength
            guard slot + size <= limit else { break }
            let bytes = frame.bytes[0..<frame.header.prefixLength] + slots[(slot - base)..<(slot - base + size)]
            crc.update(bytes)
            batch += bytes
            written += bytes.count
            count += 1
        }
        guard count > 0 else { return }
        pending.removeFirst(count)
        let next = pending.first?.slot ?? slotsEnd
        slots.removeFirst(next - base)
        base = next
        if batch.count >= 1 << 20 {
            try output.writeAll(batch)
            batch = []
        }
    }

    /// Writes the last frames and the Info frame for `samples` source samples (the rest of the last frames
    /// is padding), and leaves the offset at the end of the file.
    /// - Throws: `RetagError` when nothing was appended; the `Errno` of a write or seek.
    public func finish(samples: Int) throws {
        guard let first else { throw RetagError.layout("no MP3 segment") }
        try flush(before: Int.max)
        try output.writeAll(batch)
        batch = []
        let padding = frames * first.samples - MP3Joiner.encoderDelay - samples
        let info = MP3InfoFrame.make(like: first, frames: frames, bytes: infoLength + written, kbps: first.bitrate,
                                     delay: MP3Joiner.encoderDelay, padding: padding, musicCRC: crc.value)
        _ = try output.seek(offset: 0, from: .start)
        try output.writeAll(info)
        _ = try output.seek(offset: 0, from: .end)
    }
}
