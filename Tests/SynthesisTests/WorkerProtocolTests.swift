import Testing
@testable import Synthesis

@Suite struct WorkerProtocolTests {
    static let requests: [WorkerRequest] = [
        .configure(voice: "en-us", rate: 175, pitch: 50),
        .configure(voice: "Chinese (Cantonese, latin as Jyutping)", rate: 80, pitch: 0),
        .configure(voice: "", rate: -1, pitch: Int.max),
        .synthesize(tag: 0, text: ""),
        .synthesize(tag: 7, text: "Hello world."),
        .synthesize(tag: UInt32.max, text: "Grüße, 你好 🙂 <b>&amp; \u{0}nul"),
        .cancel(tag: 0),
        .cancel(tag: UInt32.max),
    ]

    static let frames: [WorkerFrame] = [
        .ready(sampleRate: 22050),
        .audio(tag: 1, samples: []),
        .audio(tag: 2, samples: [0, 1, -1, Int16.max, Int16.min, 12345]),
        .word(tag: 3, start: 0, length: 5, sample: 0),
        .word(tag: UInt32.max, start: 6, length: 5, sample: Int.max),
        .end(tag: 4, samples: 23190),
        .end(tag: 5, samples: Int.min),
        .failed(tag: 6, message: "unknown voice 'xx' (eSpeak NG: EE_NOT_FOUND)"),
        .failed(tag: 0, message: ""),
    ]

    @Test func requestsRoundTrip() throws {
        for request in Self.requests {
            var decoder = WorkerRequestDecoder()
            decoder.append(WorkerCodec.encode(request)[...])
            #expect(try decoder.next() == request)
            #expect(try decoder.next() == nil)
            #expect(decoder.bufferedByteCount == 0)
        }
    }

    @Test func framesRoundTrip() throws {
        for frame in Self.frames {
            var decoder = WorkerFrameDecoder()
            decoder.append(WorkerCodec.encode(frame)[...])
            #expect(try decoder.next() == frame)
            #expect(try decoder.next() == nil)
        }
    }

    @Test func wireLayoutIsLittleEndianWithLengthPrefix() {
        #expect(WorkerCodec.encode(.end(tag: 0x0102_0304, samples: 5))
            == [0x84, 12, 0, 0, 0, 4, 3, 2, 1, 5, 0, 0, 0, 0, 0, 0, 0])
        #expect(WorkerCodec.encode(.synthesize(tag: 1, text: "é"))
            == [0x02, 10, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0xC3, 0xA9])
        #expect(WorkerCodec.encode(.audio(tag: 0, samples: [-2])) == [0x82, 6, 0, 0, 0, 0, 0, 0, 0, 0xFE, 0xFF])
    }

    @Test func byteByByteFeedsDecodeAllFrames() throws {
        let stream = Self.frames.flatMap { WorkerCodec.encode($0) }
        var decoder = WorkerFrameDecoder()
        var decoded: [WorkerFrame] = []
        for byte in stream {
            decoder.append([byte][...])
            while let frame = try decoder.next() { decoded.append(frame) }
        }
        #expect(decoded == Self.frames)
        #expect(decoder.bufferedByteCount == 0)

        let requestStream = Self.requests.flatMap { WorkerCodec.encode($0) }
        var requestDecoder = WorkerRequestDecoder()
        var requests: [WorkerRequest] = []
        for byte in requestStream {
            requestDecoder.append([byte][...])
            while let request = try requestDecoder.next() { requests.append(request) }
        }
        #expect(requests == Self.requests)
    }

    @Test func unevenChunksDecodeAllFrames() throws {
        let stream = (Self.frames + Self.frames).flatMap { WorkerCodec.encode($0) }
        var decoder = WorkerFrameDecoder()
        var decoded: [WorkerFrame] = []
        var i = 0, step = 1
        while i < stream.count {
            let end = min(i + step, stream.count)
            decoder.append(stream[i..<end])
            while let frame = try decoder.next() { decoded.append(frame) }
            i = end
            step = step % 13 + 3
        }
        #expect(decoded == Self.frames + Self.frames)
    }

    @Test func audioFromEngineBufferMatchesArrayEncoding() {
        let samples: [Int16] = [1, -1, 300, Int16.min]
        var out: [UInt8] = [9]
        samples.withUnsafeBufferPointer { WorkerCodec.appendAudio(tag: 5, samples: $0, to: &out) }
        #expect(out == [9] + WorkerCodec.encode(.audio(tag: 5, samples: samples)))
    }

    static func decodeFrames(_ bytes: [UInt8]) -> Result<[WorkerFrame], WorkerProtocolError> {
        var decoder = WorkerFrameDecoder()
        decoder.append(bytes[...])
        var frames: [WorkerFrame] = []
        do {
            while let frame = try decoder.next() { frames.append(frame) }
            return .success(frames)
        } catch {
            return .failure(error)
        }
    }

    @Test(arguments: [
        ([0x07, 0, 0, 0, 0], "unknown worker frame kind 0x07"),
        ([0x01, 0, 0, 0, 0], "unknown worker frame kind 0x01"),   // a request sent the wrong way
        ([0x82, 0xFF, 0xFF, 0xFF, 0xFF], "exceeds"),                // bogus length: no 4 GiB allocation
        ([0x82, 0x01, 0x00, 0x00, 0x04], "exceeds"),                // 64 MiB + 1
        ([0x84, 3, 0, 0, 0, 1, 2, 3], "truncated"),
        ([0x84, 13, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 9], "trailing"),
        ([0x82, 5, 0, 0, 0, 1, 0, 0, 0, 7], "odd audio"),
        ([0x85, 9, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0xFF], "UTF-8"),
        ([0x85, 8, 0, 0, 0, 1, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0x7F], "truncated"),
    ] as [([UInt8], String)])
    func malformedFramesThrow(bytes: [UInt8], message: String) {
        guard case let .failure(error) = Self.decodeFrames(bytes) else {
            Issue.record("decoded \(bytes) without error")
            return
        }
        #expect(error.description.contains(message), "\(error)")
        #expect(!error.description.contains("\n"))
    }

    @Test func errorsLatch() throws {
        var decoder = WorkerRequestDecoder()
        decoder.append([0x02, 1, 0, 0, 0, 0][...])
        #expect(throws: WorkerProtocolError.self) { try decoder.next() }
        decoder.append(WorkerCodec.encode(.synthesize(tag: 1, text: "x"))[...])
        #expect(throws: WorkerProtocolError.self) { try decoder.next() }
    }

    @Test func partialFrameWaitsForMoreBytes() throws {
        let bytes = WorkerCodec.encode(.synthesize(tag: 3, text: "Hello"))
        var decoder = WorkerRequestDecoder()
        decoder.append(bytes[0..<(bytes.count - 1)])
        #expect(try decoder.next() == nil)
        #expect(decoder.bufferedByteCount == bytes.count - 1)
        decoder.append(bytes[(bytes.count - 1)...])
        #expect(try decoder.next() == .synthesize(tag: 3, text: "Hello"))
    }

    @Test func largeAudioFrame() throws {
        let samples = (0..<200_000).map { Int16(truncatingIfNeeded: $0 &* 31) }
        var decoder = WorkerFrameDecoder()
        decoder.append(WorkerCodec.encode(.audio(tag: 1, samples: samples))[...])
        #expect(try decoder.next() == .audio(tag: 1, samples: samples))
    }
}

@Suite struct WAVTests {
    @Test func monoHeader() {
        let h = WAV.header(sampleRate: 22050, samples: 100)
        #expect(h.count == 44)
        #expect(Array(h[0..<4]) == Array("RIFF".utf8))
        #expect(Array(h[4..<8]) == [236, 0, 0, 0])            // 36 + 200
        #expect(Array(h[8..<16]) == Array("WAVEfmt ".utf8))
        #expect(Array(h[16..<24]) == [16, 0, 0, 0, 1, 0, 1, 0])
        #expect(Array(h[24..<28]) == [0x22, 0x56, 0, 0])      // 22050
        #expect(Array(h[28..<32]) == [0x44, 0xAC, 0, 0])      // 44100 bytes/s
        #expect(Array(h[32..<36]) == [2, 0, 16, 0])
        #expect(Array(h[36..<40]) == Array("data".utf8))
        #expect(Array(h[40..<44]) == [200, 0, 0, 0])
    }

    @Test func stereoAndClamping() {
        let h = WAV.header(sampleRate: 48000, channels: 2, samples: 10)
        #expect(Array(h[22..<24]) == [2, 0])
        #expect(Array(h[32..<34]) == [4, 0])
        #expect(Array(h[40..<44]) == [40, 0, 0, 0])
        let huge = WAV.header(sampleRate: 22050, samples: 3_000_000_000)
        #expect(huge.count == 44)
        #expect(Array(huge[4..<8]) == [0xFE, 0xFF, 0xFF, 0xFF])   // clamped to whole samples under 4 GiB
        #expect(Array(huge[40..<44]) == [0xDA, 0xFF, 0xFF, 0xFF])
        #expect(WAV.header(sampleRate: 22050, samples: 0)[40..<44].allSatisfy { $0 == 0 })
    }
}
