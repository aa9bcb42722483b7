import CSndFile
@preconcurrency import Glibc
import SystemKit

/// The audio file formats Lector writes, each one libsndfile major format and codec.
///
/// Source: libsndfile 1.2 `sndfile.h` (`SF_FORMAT_*`); Opus takes only 8, 12, 16, 24 or 48 kHz (RFC 7845 §5.1
/// and libsndfile's `ogg_opus.c`), every other format takes eSpeak NG's 22,050 Hz as it is.
public enum AudioFormat: String, CaseIterable, Sendable {
    /// RIFF/WAVE, 16-bit PCM.
    case wav
    /// FLAC, 16-bit, lossless.
    case flac
    /// Ogg Vorbis.
    case ogg
    /// Ogg Opus (48 kHz).
    case opus
    /// MPEG-1/2 Audio Layer III.
    case mp3

    /// The format of a file name's extension (`.wav`, `.flac`, `.ogg`/`.oga`, `.opus`, `.mp3`, any case);
    /// nil for any other name.
    public init?(fileName: String) {
        guard let dot = fileName.lastIndex(of: "."), !fileName[dot...].contains("/") else { return nil }
        let ext = fileName[fileName.index(after: dot)...].lowercased()
        self.init(rawValue: ext == "oga" ? "ogg" : ext)
    }

    /// The sample rate the codec is fed, Hz, for PCM at `sourceRate`.
    public func encodingRate(forSourceRate sourceRate: Int) -> Int {
        self == .opus ? 48_000 : sourceRate
    }

    /// The bit rates the codec accepts, kbit/s, and its default for speech; nil for lossless formats.
    /// Opus: libsndfile maps [6, 256] kbit/s per channel; MP3 at 16–24 kHz (MPEG-2) LAME's [8, 160]; Vorbis
    /// takes a quality, which the bit rate is mapped onto.
    public var bitrates: (range: ClosedRange<Int>, speechDefault: Int)? {
        switch self {
        case .wav, .flac: return nil
        case .opus: return (6...256, 32)
        case .mp3: return (8...160, 48)
        case .ogg: return (32...160, 48)
        }
    }

    fileprivate var sndfileFormat: Int32 {
        switch self {
        case .wav: return Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_16)
        case .flac: return Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_16)
        case .ogg: return Int32(SF_FORMAT_OGG | SF_FORMAT_VORBIS)
        case .opus: return Int32(SF_FORMAT_OGG | SF_FORMAT_OPUS)
        case .mp3: return Int32(SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III)
        }
    }

    /// libsndfile's compression level (0 best quality … 1 smallest) for `kbps`, by the inverse of the mapping
    /// libsndfile 1.2 applies (`ogg_opus.c`, `mpeg_l3_encode.c`; Vorbis: quality = 1 − level, ~48 kbit/s at
    /// 22 kHz mono for 0.4).
    fileprivate func compressionLevel(kbps: Int) -> Double? {
        guard let (range, _) = bitrates else { return nil }
        let rate = Double(min(max(kbps, range.lowerBound), range.upperBound))
        switch self {
        case .opus: return 1 - (rate - 6) / 250
        case .mp3: return (160 - rate) / 152
        default: return 1 - (rate - 32) / 128
        }
    }
}

/// A failure of libsndfile, one line (its `sf_strerror`).
public struct SoundFileError: Error, CustomStringConvertible {
    /// What failed, for the user.
    public var description: String
}

/// One audio file being written by libsndfile to an open file descriptor, mono 16-bit input.
///
/// Not thread-safe: one writer is used by one thread at a time. The descriptor is the caller's (not closed).
public final class SoundFileWriter {
    private let handle: OpaquePointer
    private var closed = false
    /// The format written.
    public let format: AudioFormat
    /// Sample frames written so far.
    public private(set) var frames = 0

    /// Opens a writer of `format` at `sampleRate` Hz (mono) on `fd`, with the `bitrate` (kbit/s) for lossy
    /// formats (clamped to ``AudioFormat/bitrates``; nil: the format's speech default) and the tags given
    /// (`track`: the track number, as text).
    /// - Throws: `SoundFileError` when libsndfile lacks the format or cannot write to `fd`.
    public init(fd: FileDescriptor, format: AudioFormat, sampleRate: Int, bitrate: Int?, title: String?, artist: String?,
                album: String? = nil, track: String? = nil, originalRate: Int? = nil) throws(SoundFileError) {
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = 1
        info.format = format.sndfileFormat
        guard sf_format_check(&info) != 0 else {
            throw SoundFileError(description: "this libsndfile cannot write \(format.rawValue) at \(sampleRate) Hz")
        }
        guard let handle = sf_open_fd(fd.rawValue, Int32(SFM_WRITE), &info, 0) else {
            throw SoundFileError(description: String(cString: sf_strerror(nil)))
        }
        self.handle = handle
        self.format = format
        if format == .mp3 {
            var mode = Int32(SF_BITRATE_MODE_CONSTANT)
            _ = sf_command(handle, Int32(SFC_SET_BITRATE_MODE), &mode, Int32(MemoryLayout<Int32>.size))
        }
        if let level = format.compressionLevel(kbps: bitrate ?? format.bitrates?.speechDefault ?? 0) {
            var level = level
            _ = sf_command(handle, Int32(SFC_SET_COMPRESSION_LEVEL), &level, Int32(MemoryLayout<Double>.size))
        }
        if var originalRate, format == .opus {
            _ = sf_command(handle, Int32(SFC_SET_ORIGINAL_SAMPLERATE), &originalRate, Int32(MemoryLayout<Int32>.size))
        }
        if let title, !title.isEmpty { _ = sf_set_string(handle, Int32(SF_STR_TITLE), title) }
        if let artist, !artist.isEmpty { _ = sf_set_string(handle, Int32(SF_STR_ARTIST), artist) }
        if let album, !album.isEmpty { _ = sf_set_string(handle, Int32(SF_STR_ALBUM), album) }
        if let track, !track.isEmpty { _ = sf_set_string(handle, Int32(SF_STR_TRACKNUMBER), track) }
        _ = sf_set_string(handle, Int32(SF_STR_SOFTWARE), "Lector")
    }

    deinit { if !closed { sf_close(handle) } }

    /// Encodes and writes `samples` (16-bit mono).
    /// - Throws: `SoundFileError` when libsndfile cannot write all of them (a full disk, an I/O error).
    public func write(_ samples: [Int16]) throws(SoundFileError) {
        guard !samples.isEmpty else { return }
        let written = samples.withUnsafeBufferPointer { sf_write_short(handle, $0.baseAddress, sf_count_t($0.count)) }
        frames += Int(written)
        if Int(written) != samples.count { throw SoundFileError(description: String(cString: sf_strerror(handle))) }
    }

    /// Encodes and writes `samples` (float, −1…1, mono).
    /// - Throws: `SoundFileError` when libsndfile cannot write all of them.
    public func write(_ samples: [Float]) throws(SoundFileError) {
        guard !samples.isEmpty else { return }
        let written = samples.withUnsafeBufferPointer { sf_write_float(handle, $0.baseAddress, sf_count_t($0.count)) }
        frames += Int(written)
        if Int(written) != samples.count { throw SoundFileError(description: String(cString: sf_strerror(handle))) }
    }

    /// Flushes the encoder and finishes the file (headers, last pages: `sf_close`); the writer must not be
    /// used after.
    /// - Throws: `SoundFileError` when the end cannot be written.
    public func finish() throws(SoundFileError) {
        guard !closed else { return }
        sf_write_sync(handle)
        let error = sf_error(handle)
        let message = error != 0 ? String(cString: sf_strerror(handle)) : nil
        closed = true
        if sf_close(handle) != 0 || message != nil {
            throw SoundFileError(description: message ?? "libsndfile could not finish the file")
        }
    }
}
