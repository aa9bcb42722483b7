// The pipe protocol between the daemon and the synthesis worker.
//
// Every message, in both directions, is one frame:
//
//     kind: UInt8 | length: UInt32 little-endian | payload: `length` bytes
//
// Payload fields, in order, with no padding:
// - `Int` fields: Int64 little-endian; tags: UInt32 little-endian;
// - strings: UInt32 little-endian byte count, then that many bytes of UTF-8;
// - audio samples: the rest of the payload, Int16 little-endian each.
// The kinds of the two directions do not overlap, so a pipe wired the wrong way round fails at its first frame.

/// A request from the daemon to the synthesis worker.
///
/// Wire format: see ``WorkerCodec``. Requests are carried out in order, one at a time.
public enum WorkerRequest: Equatable, Sendable {
    /// Selects the eSpeak NG voice and prosody for the requests that follow.
    ///
    /// - `voice`: anything `espeak_SetVoiceByName` accepts (speak_lib.h): a voice identifier such as
    ///   `"gmw/en-US"` (unambiguous; use ``Voice/identifier``), a voice name such as `"English (America)"`,
    ///   or an eSpeak NG language name such as `"en-us"` or `"de"`. Secondary language names of a voice
    ///   (`"zh"`, `"no"`, `"es-mx"`) are not accepted by eSpeak NG 1.51.
    /// - `rate`: speaking rate in words per minute (`espeakRATE`), clamped to 80...450.
    /// - `pitch`: base pitch 0...99 (`espeakPITCH`, 50 is the voice's normal), clamped.
    ///
    /// An unknown voice (`EE_NOT_FOUND`) is not answered at once (this request has no tag): every following
    /// ``synthesize(tag:text:)`` is answered with ``WorkerFrame/failed(tag:message:)`` until a
    /// `configure` succeeds, because eSpeak NG would otherwise keep the previous voice silently.
    case configure(voice: String, rate: Int, pitch: Int)

    /// Synthesizes `text` as plain text (never SSML: `<`, `>` and `&` are read as text, not markup; `[[ ]]`
    /// is not phoneme input).
    ///
    /// Answered with ``WorkerFrame/word(tag:start:length:sample:)`` and ``WorkerFrame/audio(tag:samples:)``
    /// frames as the engine produces them, then exactly one ``WorkerFrame/end(tag:samples:)`` or
    /// ``WorkerFrame/failed(tag:message:)``. The audio ends with eSpeak NG's sentence pause
    /// (`espeakENDPAUSE`), so consecutive requests play back with natural gaps between sentences.
    /// A U+0000 in `text` is read as a space.
    case synthesize(tag: UInt32, text: String)

    /// Synthesizes `markup`, an SSML document (`<speak>…</speak>`), in eSpeak NG's SSML mode (`espeakSSML`,
    /// speak_lib.h). Answered like ``synthesize(tag:text:)``, except that the word frames' `start` and
    /// `length` count the scalars of the document's text content (``SSMLText/content(of:)``: tags removed,
    /// entities decoded), not of the markup.
    ///
    /// The daemon sends only markup it has checked and rebuilt: no DOCTYPE, no entities but the predefined
    /// five and character references, no `<audio>` (eSpeak NG would load a local file named by it).
    case synthesizeSSML(tag: UInt32, markup: String)

    /// The daemon no longer wants request `tag` (a stop, a seek, a new text, a prosody change).
    ///
    /// A request still queued in the worker is answered at once with ``WorkerFrame/end(tag:samples:)``
    /// (0 samples) when its turn comes; the request being synthesized is cut at its next audio chunk (the
    /// synth callback returns 1, speak_lib.h `t_espeak_callback`) and answered with `end` and the samples
    /// sent so far. A tag that is unknown or already answered is ignored. The worker reads cancels while it
    /// synthesizes (it polls its input between chunks), so a cancel does not wait for the request before it.
    case cancel(tag: UInt32)
}

/// A frame from the synthesis worker to the daemon.
///
/// Wire format: see ``WorkerCodec``.
public enum WorkerFrame: Equatable, Sendable {
    /// The sample rate eSpeak NG 1.51 renders at, in Hz: what its worker announces in ``ready(sampleRate:)``.
    public static let eSpeakSampleRate = 22_050

    /// Sent once at start-up after `espeak_Initialize`: the sample rate of all audio in Hz
    /// (22,050 for eSpeak NG 1.51). The audio is always mono, signed 16-bit.
    case ready(sampleRate: Int)

    /// PCM for request `tag`: mono, signed 16-bit, at the sample rate of ``ready(sampleRate:)``, in order.
    /// Chunks are as eSpeak NG delivers them (about 20 ms each).
    case audio(tag: UInt32, samples: [Int16])

    /// A word of request `tag` starts at `sample` (offset from the start of this request's audio, in
    /// samples) and covers the Unicode scalars `start..<start+length` of the request's text (0-based).
    /// Comes before the ``audio(tag:samples:)`` chunk that holds `sample`.
    ///
    /// Source: eSpeak NG's `espeakEVENT_WORD` (speak_lib.h), whose `text_position` is 1-based and counts
    /// code points; the worker converts it and clamps it to the text.
    case word(tag: UInt32, start: Int, length: Int, sample: Int)

    /// Request `tag` is done; `samples` is the total number of samples sent for it in ``audio(tag:samples:)``.
    case end(tag: UInt32, samples: Int)

    /// Request `tag` failed; `message` is one line (e.g. an unknown voice, eSpeak NG's `EE_NOT_FOUND`).
    /// No ``end(tag:samples:)`` follows.
    case failed(tag: UInt32, message: String)
}

/// A malformed frame on the worker pipe: unknown kind, oversized or truncated payload, invalid UTF-8.
///
/// A stream that produced this error is unusable: the decoder keeps throwing it.
public struct WorkerProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong, one line, e.g. `"worker protocol: unknown frame kind 0x07"`.
    public var description: String

    /// Creates an error with the given one-line description.
    public init(_ description: String) {
        self.description = description
    }
}

/// Encodes requests and frames for the worker pipe.
///
/// Frame layout (both directions): kind (1 byte), payload length (UInt32 little-endian), payload.
/// Payload layouts:
///
/// | message | kind | payload |
/// |---|---|---|
/// | `configure` | 0x01 | voice (string), rate (Int64), pitch (Int64) |
/// | `synthesize` | 0x02 | tag (UInt32), text (string) |
/// | `synthesizeSSML` | 0x03 | tag (UInt32), markup (string) |
/// | `cancel` | 0x04 | tag (UInt32) |
/// | `ready` | 0x81 | sampleRate (Int64) |
/// | `audio` | 0x82 | tag (UInt32), samples (Int16 each, to the end of the payload) |
/// | `word` | 0x83 | tag (UInt32), start (Int64), length (Int64), sample (Int64) |
/// | `end` | 0x84 | tag (UInt32), samples (Int64) |
/// | `failed` | 0x85 | tag (UInt32), message (string) |
///
/// Strings are a UInt32 little-endian byte count followed by UTF-8. Payloads are at most
/// ``maximumPayload`` bytes.
public enum WorkerCodec {
    /// The largest payload a decoder accepts, in bytes (64 MiB); a longer length is a protocol error,
    /// so a corrupt length never makes the reader allocate gigabytes.
    public static let maximumPayload = 64 << 20

    /// The bytes of one request frame.
    public static func encode(_ request: WorkerRequest) -> [UInt8] {
        var w = FrameWriter()
        switch request {
        case let .configure(voice, rate, pitch):
            w.begin(Kind.configure)
            w.string(voice)
            w.int(rate)
            w.int(pitch)
        case let .synthesize(tag, text):
            w.begin(Kind.synthesize)
            w.uint32(tag)
            w.string(text)
        case let .synthesizeSSML(tag, markup):
            w.begin(Kind.synthesizeSSML)
            w.uint32(tag)
            w.string(markup)
        case let .cancel(tag):
            w.begin(Kind.cancel)
            w.uint32(tag)
        }
        return w.finish()
    }

    /// The bytes of one worker frame.
    public static func encode(_ frame: WorkerFrame) -> [UInt8] {
        var w = FrameWriter()
        switch frame {
        case let .ready(sampleRate):
            w.begin(Kind.ready)
            w.int(sampleRate)
        case let .audio(tag, samples):
            w.begin(Kind.audio)
            w.uint32(tag)
            w.samples(samples)
        case let .word(tag, start, length, sample):
            w.begin(Kind.word)
            w.uint32(tag)
            w.int(start)
            w.int(length)
            w.int(sample)
        case let .end(tag, samples):
            w.begin(Kind.end)
            w.uint32(tag)
            w.int(samples)
        case let .failed(tag, message):
            w.begin(Kind.failed)
            w.uint32(tag)
            w.string(message)
        }
        return w.finish()
    }

    /// Appends an audio frame straight from the engine's buffer, without an intermediate `[Int16]`.
    static func appendAudio(tag: UInt32, samples: UnsafeBufferPointer<Int16>, to out: inout [UInt8]) {
        var w = FrameWriter()
        swap(&w.bytes, &out)  // append in place, no copy of what is already buffered
        w.begin(Kind.audio)
        w.uint32(tag)
        w.samples(samples)
        out = w.finish()
    }

    /// Appends one encoded frame to `out`.
    static func append(_ frame: WorkerFrame, to out: inout [UInt8]) {
        out.append(contentsOf: encode(frame))
    }
}

/// Frame kinds on the wire.
enum Kind {
    static let configure: UInt8 = 0x01
    static let synthesize: UInt8 = 0x02
    static let synthesizeSSML: UInt8 = 0x03
    static let cancel: UInt8 = 0x04
    static let ready: UInt8 = 0x81
    static let audio: UInt8 = 0x82
    static let word: UInt8 = 0x83
    static let end: UInt8 = 0x84
    static let failed: UInt8 = 0x85

    static func name(_ kind: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return "0x" + String(digits[Int(kind >> 4)]) + String(digits[Int(kind & 0xF)])
    }
}

/// Builds one frame: header placeholder, payload, then the length patched in.
struct FrameWriter {
    var bytes: [UInt8]
    private var start = 0

    init(bytes: [UInt8] = []) {
        self.bytes = bytes
    }

    mutating func begin(_ kind: UInt8) {
        start = bytes.count
        bytes.append(kind)
        bytes.append(contentsOf: [0, 0, 0, 0])
    }

    mutating func uint32(_ value: UInt32) {
        bytes.append(UInt8(truncatingIfNeeded: value))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value >> 16))
        bytes.append(UInt8(truncatingIfNeeded: value >> 24))
    }

    mutating func int(_ value: Int) {
        let v = UInt64(bitPattern: Int64(value))
        for shift in stride(from: 0, to: 64, by: 8) {
            bytes.append(UInt8(truncatingIfNeeded: v >> UInt64(shift)))
        }
    }

    mutating func string(_ value: String) {
        let utf8 = value.utf8
        uint32(UInt32(utf8.count))
        bytes.append(contentsOf: utf8)
    }

    mutating func samples(_ samples: [Int16]) {
        samples.withUnsafeBufferPointer { self.samples($0) }
    }

    mutating func samples(_ samples: UnsafeBufferPointer<Int16>) {
        bytes.reserveCapacity(bytes.count + 2 * samples.count)
        for s in samples {
            let u = UInt16(bitPattern: s)
            bytes.append(UInt8(truncatingIfNeeded: u))
            bytes.append(UInt8(truncatingIfNeeded: u >> 8))
        }
    }

    mutating func finish() -> [UInt8] {
        let length = UInt32(bytes.count - start - 5)
        bytes[start + 1] = UInt8(truncatingIfNeeded: length)
        bytes[start + 2] = UInt8(truncatingIfNeeded: length >> 8)
        bytes[start + 3] = UInt8(truncatingIfNeeded: length >> 16)
        bytes[start + 4] = UInt8(truncatingIfNeeded: length >> 24)
        return bytes
    }
}

/// Reads the fields of one payload; every read checks the bounds.
struct PayloadReader {
    let bytes: [UInt8]
    var index: Int
    let end: Int

    mutating func uint32() throws(WorkerProtocolError) -> UInt32 {
        guard end - index >= 4 else { throw WorkerProtocolError("worker protocol: payload truncated") }
        var v: UInt32 = 0
        for i in 0..<4 { v |= UInt32(bytes[index + i]) << UInt32(8 * i) }
        index += 4
        return v
    }

    mutating func int() throws(WorkerProtocolError) -> Int {
        guard end - index >= 8 else { throw WorkerProtocolError("worker protocol: payload truncated") }
        var v: UInt64 = 0
        for i in 0..<8 { v |= UInt64(bytes[index + i]) << UInt64(8 * i) }
        index += 8
        let signed = Int64(bitPattern: v)
        guard let value = Int(exactly: signed) else {
            throw WorkerProtocolError("worker protocol: integer out of range")
        }
        return value
    }

    mutating func string() throws(WorkerProtocolError) -> String {
        let count = Int(try uint32())
        guard end - index >= count else { throw WorkerProtocolError("worker protocol: string truncated") }
        let slice = bytes[index..<index + count]
        index += count
        guard let s = String(validating: slice, as: UTF8.self) else {
            throw WorkerProtocolError("worker protocol: string is not valid UTF-8")
        }
        return s
    }

    mutating func samples() throws(WorkerProtocolError) -> [Int16] {
        let count = end - index
        guard count % 2 == 0 else { throw WorkerProtocolError("worker protocol: odd audio payload length") }
        let start = index
        index = end
        // Little-endian on the wire as in memory (on little-endian hosts): one copy of the payload rather than a
        // loop over its bytes, for the ~44 KB of audio a second the daemon reads from the worker.
        let out = [Int16](unsafeUninitializedCapacity: count / 2) { buffer, initialized in
            bytes.withUnsafeBytes { source in
                UnsafeMutableRawBufferPointer(buffer).copyMemory(from: UnsafeRawBufferPointer(rebasing: source[start..<end]))
            }
            initialized = count / 2
        }
        #if _endian(big)
        return out.map { Int16(littleEndian: $0) }
        #else
        return out
        #endif
    }

    func finish() throws(WorkerProtocolError) {
        guard index == end else { throw WorkerProtocolError("worker protocol: \(end - index) trailing payload bytes") }
    }
}

/// Splits a byte stream into frames: buffering, header checks, error latching.
struct FrameSplitter {
    private var buffer: [UInt8] = []
    private var head = 0
    private var error: WorkerProtocolError?
    let kinds: Set<UInt8>
    let direction: String

    init(kinds: Set<UInt8>, direction: String) {
        self.kinds = kinds
        self.direction = direction
    }

    var bufferedByteCount: Int { buffer.count - head }

    mutating func append(_ bytes: ArraySlice<UInt8>) {
        if head > 0 && head >= buffer.count / 2 {
            buffer.removeFirst(head)
            head = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete frame's kind and payload reader, or nil if more bytes are needed.
    mutating func next() throws(WorkerProtocolError) -> (kind: UInt8, payload: PayloadReader)? {
        if let error { throw error }
        guard buffer.count - head >= 1 else { return nil }
        let kind = buffer[head]
        guard kinds.contains(kind) else {
            return try fail("worker protocol: unknown \(direction) kind \(Kind.name(kind))")
        }
        guard buffer.count - head >= 5 else { return nil }
        var length = 0
        for i in 0..<4 { length |= Int(buffer[head + 1 + i]) << (8 * i) }
        guard length <= WorkerCodec.maximumPayload else {
            return try fail("worker protocol: \(direction) payload of \(length) bytes exceeds \(WorkerCodec.maximumPayload)")
        }
        guard buffer.count - head - 5 >= length else { return nil }
        let start = head + 5
        head = start + length
        return (kind, PayloadReader(bytes: buffer, index: start, end: start + length))
    }

    mutating func fail<T>(_ message: String) throws(WorkerProtocolError) -> T {
        let e = WorkerProtocolError(message)
        error = e
        throw e
    }

    mutating func latch(_ e: WorkerProtocolError) {
        error = e
    }
}

/// Incremental decoder for the worker's frames (the daemon's side of the pipe).
///
/// Feed bytes as they arrive with ``append(_:)``, then call ``next()`` until it returns nil.
public struct WorkerFrameDecoder {
    private var splitter = FrameSplitter(
        kinds: [Kind.ready, Kind.audio, Kind.word, Kind.end, Kind.failed], direction: "worker frame")

    /// Creates an empty decoder.
    public init() {}

    /// Adds bytes read from the pipe.
    public mutating func append(_ bytes: ArraySlice<UInt8>) {
        splitter.append(bytes)
    }

    /// Bytes received but not yet returned as a message: non-zero at end of stream means the stream was cut
    /// in the middle of a frame.
    public var bufferedByteCount: Int { splitter.bufferedByteCount }

    /// The next complete frame, or nil when more bytes are needed.
    ///
    /// - Throws: ``WorkerProtocolError`` for an unknown kind, a payload over ``WorkerCodec/maximumPayload``,
    ///   a payload that does not match its kind, or invalid UTF-8; thereafter every call throws it again.
    public mutating func next() throws(WorkerProtocolError) -> WorkerFrame? {
        guard let (kind, payload) = try splitter.next() else { return nil }
        do {
            var r = payload
            let frame: WorkerFrame
            switch kind {
            case Kind.ready: frame = .ready(sampleRate: try r.int())
            case Kind.audio: frame = .audio(tag: try r.uint32(), samples: try r.samples())
            case Kind.word: frame = .word(tag: try r.uint32(), start: try r.int(), length: try r.int(), sample: try r.int())
            case Kind.end: frame = .end(tag: try r.uint32(), samples: try r.int())
            default: frame = .failed(tag: try r.uint32(), message: try r.string())
            }
            try r.finish()
            return frame
        } catch {
            splitter.latch(error)
            throw error
        }
    }
}

/// Incremental decoder for requests (the worker's side of the pipe).
///
/// Feed bytes as they arrive with ``append(_:)``, then call ``next()`` until it returns nil.
public struct WorkerRequestDecoder {
    private var splitter = FrameSplitter(kinds: [Kind.configure, Kind.synthesize, Kind.synthesizeSSML, Kind.cancel], direction: "worker request")

    /// Creates an empty decoder.
    public init() {}

    /// Adds bytes read from the pipe.
    public mutating func append(_ bytes: ArraySlice<UInt8>) {
        splitter.append(bytes)
    }

    /// Bytes received but not yet returned as a message: non-zero at end of stream means the stream was cut
    /// in the middle of a frame.
    public var bufferedByteCount: Int { splitter.bufferedByteCount }

    /// The next complete request, or nil when more bytes are needed.
    ///
    /// - Throws: ``WorkerProtocolError`` for an unknown kind, a payload over ``WorkerCodec/maximumPayload``,
    ///   a payload that does not match its kind, or invalid UTF-8; thereafter every call throws it again.
    public mutating func next() throws(WorkerProtocolError) -> WorkerRequest? {
        guard let (kind, payload) = try splitter.next() else { return nil }
        do {
            var r = payload
            let request: WorkerRequest
            switch kind {
            case Kind.configure: request = .configure(voice: try r.string(), rate: try r.int(), pitch: try r.int())
            case Kind.synthesizeSSML: request = .synthesizeSSML(tag: try r.uint32(), markup: try r.string())
            case Kind.cancel: request = .cancel(tag: try r.uint32())
            default: request = .synthesize(tag: try r.uint32(), text: try r.string())
            }
            try r.finish()
            return request
        } catch {
            splitter.latch(error)
            throw error
        }
    }
}
