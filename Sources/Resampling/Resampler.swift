import CSoxr

/// A streaming sample-rate converter over libsoxr: 16-bit mono in, float mono out (what the Opus encoder
/// takes without another conversion).
///
/// Source: libsoxr 0.1.3 `soxr.h` (`soxr_create`, `soxr_process`; input nil flushes the filter's tail).
/// Not thread-safe: one converter per stream.
public final class Resampler {
    private let handle: soxr_t
    private let ratio: Double

    /// A converter from `inputRate` to `outputRate` Hz at libsoxr's high quality (`SOXR_HQ`).
    /// - Throws: `ResamplerError` with libsoxr's message when the rates are not accepted.
    public init(from inputRate: Int, to outputRate: Int) throws(ResamplerError) {
        var io = soxr_io_spec(SOXR_INT16_I, SOXR_FLOAT32_I)
        var quality = soxr_quality_spec(UInt(SOXR_HQ), 0)
        var error: soxr_error_t?
        guard let handle = soxr_create(Double(inputRate), Double(outputRate), 1, &error, &io, &quality, nil), error == nil else {
            throw ResamplerError(description: error.map { String(cString: $0) } ?? "libsoxr failed")
        }
        self.handle = handle
        ratio = Double(outputRate) / Double(inputRate)
    }

    deinit { soxr_delete(handle) }

    /// Converts `samples`, returning what is ready (the filter holds back a few ms until `flush`).
    public func process(_ samples: [Int16]) -> [Float] {
        guard !samples.isEmpty else { return [] }
        return run(samples, count: samples.count)
    }

    /// The rest held in the filter, at the end of the stream.
    public func flush() -> [Float] {
        run(nil, count: 0)
    }

    private func run(_ samples: [Int16]?, count: Int) -> [Float] {
        var out: [Float] = []
        var capacity = Int(Double(count) * ratio) + 1_024
        var consumed = 0
        while true {
            var chunk = [Float](repeating: 0, count: capacity)
            var used = 0, done = 0
            _ = chunk.withUnsafeMutableBufferPointer { o in
                if let samples {
                    samples.withUnsafeBufferPointer { i in
                        soxr_process(handle, i.baseAddress! + consumed, count - consumed, &used, o.baseAddress, capacity, &done)
                    }
                } else {
                    soxr_process(handle, nil, 0, nil, o.baseAddress, capacity, &done)
                }
            }
            consumed += used
            out.append(contentsOf: chunk[0..<done])
            // Input left, or an output buffer filled up: go on; otherwise all that is ready has been taken.
            if consumed < count || done == capacity { capacity = max(capacity, 4_096); continue }
            return out
        }
    }
}

/// A rejected conversion, one line.
public struct ResamplerError: Error, CustomStringConvertible {
    /// libsoxr's message.
    public var description: String
}
