internal import CPulse

/// One playback stream (a libpulse `pa_stream`, a sink input on the server): 16-bit signed little-endian mono
/// PCM (`PA_SAMPLE_S16LE`, one channel) at `sampleRate` Hz, on the server's default sink.
///
/// The stream is created on the server as soon as its `SoundServer` is ready (at once if it already is); until
/// then `write`, `setCorked`, `drain` and `setVolume` are remembered and applied when it is. A stream belongs to
/// one connection: when that connection is lost (or `SoundServer.disconnect()` is called) it reports `onFailed`
/// and is finished; make a new stream after reconnecting.
///
/// Latency: the stream asks for a total latency (`tlength`) of 100 ms in requests of at least 40 ms (`minreq`)
/// with `PA_STREAM_ADJUST_LATENCY`, so the server splits it between the sink's buffer (about
/// (tlength - 2 minreq) / 2 = 10 ms) and the stream's own, and rewinds the sink on cork and on removal: pausing
/// is as quick as with a small buffer, while the server wakes the client 25 times a second instead of 100.
/// pipewire-pulse rewinds nothing and turns `minreq` into the stream's `node.latency`, which sets the graph's
/// period (quantum): a cork is heard at the end of the period, so on PipeWire the stream asks for 10 ms
/// requests (`pipeWireRequestMilliseconds`: a 512-frame quantum at 48 kHz) instead of 40 ms (2048 frames).
/// Source: PipeWire 0.3.65 `module-protocol-pulse/pulse-server.c` (`fix_playback_buffer_attr`). Timing is interpolated (`PA_STREAM_INTERPOLATE_TIMING | PA_STREAM_AUTO_TIMING_UPDATE`), so
/// `playedSamples` is cheap to read at any moment. Source: PulseAudio's `pulse/stream.h` and its "Latency
/// Control" documentation.
///
/// All callbacks run on the GLib main loop, never after `close()` or after `onFailed`.
public final class PlaybackStream {
    /// Target total latency (sink buffer + stream buffer), in ms: the `tlength` buffer attribute.
    public static let targetLatencyMilliseconds = 100
    /// How many ms of audio the server asks for at least per request: the `minreq` buffer attribute.
    public static let minimumRequestMilliseconds = 40
    /// `minreq` on pipewire-pulse, ms: the period of the graph while Lector plays, and so the time a pause or a
    /// resume can wait.
    public static let pipeWireRequestMilliseconds = 10
    /// How many ms of audio must be queued before playback starts (and restarts after an underrun): `prebuf`.
    public static let prebufferMilliseconds = 10

    private enum Phase {
        /// Waiting for the sound server to be ready.
        case waiting
        /// `pa_stream_connect_playback` sent; waiting for the server to create the sink input.
        case creating
        case ready
        /// Closed or failed; nothing more happens.
        case finished
    }

    /// The sample rate, in Hz.
    public let sampleRate: Int

    /// Called when the server asks for more data, with how many samples it can take now
    /// (`pa_stream_writable_size` / 2). Respond by calling `write` with up to that many samples; if you have
    /// less, write what you have and write the rest as soon as you have it (up to `writableSamples`): the server
    /// asks again only once it has consumed more.
    public var onWritable: ((Int) -> Void)?

    /// Called once when a `drain()` completes: everything written before it has been played.
    public var onDrained: (() -> Void)?

    /// Called once if the stream fails, the server removes it, or its connection is lost or disconnected, with a
    /// one-line reason (`pa_strerror` text where libpulse gives one). No callback of this stream runs after it.
    public var onFailed: ((String) -> Void)?

    /// Whether the stream is corked (paused on the server). Changed by `setCorked`; takes effect on the server
    /// when the request arrives (or when the stream is created).
    public private(set) var isCorked: Bool

    /// Total samples handed to `write()` so far.
    public private(set) var writtenSamples: Int64 = 0

    /// How many times the server ran out of data while playing (`pa_stream_set_underflow_callback`), not counting
    /// the end of a drain. For tests and diagnostics; stays 0 when the caller keeps the stream fed.
    public private(set) var underruns = 0

    let server: SoundServer
    /// The connection this stream belongs to (`SoundServer.generation`), 0 while it waits for a `connect()`.
    var generation: Int

    private let name: String
    private var properties: [String: String]
    /// Properties changed while the stream was being created: sent once it is ready.
    private var propertiesChanged = false
    private var phase: Phase = .waiting
    private var stream: OpaquePointer?
    /// Samples written before the stream was ready.
    private var pending: [Int16] = []
    private var drainRequested = false
    private var drainOperation: OpaquePointer?
    private var volume: Double?
    private var corkedOnServer = false
    private var lastPlayed: Int64 = 0
    /// The stream has been uncorked at some time. A stream started corked has played nothing until then,
    /// although `pa_stream_get_time` on it reports the bytes the server has read ahead (some ms).
    private var hasPlayed: Bool
    private var lossToReport = false
    /// A drain was asked for after the last write, so running dry is expected.
    private var drainingSinceWrite = false

    /// Makes a playback stream; it goes to the server as soon as `server` is ready.
    ///
    /// - Parameters:
    ///   - server: the connection to play on; kept alive by the stream.
    ///   - name: the stream's name (`media.name`), shown by volume controls; `properties["media.name"]` wins if given.
    ///   - sampleRate: samples per second, in Hz (e.g. 22050 for eSpeak NG).
    ///   - properties: PulseAudio property-list entries for the sink input (`media.role`, `media.language`,
    ///     `media.title`, `application.*`, ...; see `pulse/proplist.h`).
    ///   - corked: start corked (`PA_STREAM_START_CORKED`): nothing plays until `setCorked(false)`.
    public init(server: SoundServer, name: String, sampleRate: Int, properties: [String: String], corked: Bool) {
        precondition(sampleRate > 0 && sampleRate <= Int(PA_RATE_MAX), "sample rate out of range")
        self.server = server
        self.name = name
        self.sampleRate = sampleRate
        self.properties = properties
        self.isCorked = corked
        self.hasPlayed = !corked
        switch server.state {
        case .connecting, .ready: generation = server.generation
        case .disconnected, .failed: generation = 0
        }
        server.register(self)
        if server.state == .ready { serverReady() }
    }

    deinit {
        detach()
        server.unregister(self)
    }

    // MARK: - Public API

    /// Samples the server can take now without growing its buffer beyond the target (0 unless ready).
    public var writableSamples: Int {
        guard phase == .ready, let stream else { return 0 }
        let bytes = pa_stream_writable_size(stream)
        return bytes < 0 ? 0 : bytes / 2   // (size_t)-1, imported as -1, on error
    }

    /// Samples played so far by this stream, as heard: `pa_stream_get_time` converted at `sampleRate`, clamped
    /// to 0...`writtenSamples`, never decreasing, frozen while corked. 0 before playback starts; keeps its last
    /// value after `close()` or a failure. A time more than a second past what was written is not a time this
    /// stream can have played (libpulse's timing, just after the stream starts, can be far off) and is ignored.
    public var playedSamples: Int64 {
        guard phase == .ready, hasPlayed, let stream else { return lastPlayed }
        var usec: pa_usec_t = 0
        if pa_stream_get_time(stream, &usec) == 0, let samples = Self.samples(microseconds: usec, rate: sampleRate),
           samples <= writtenSamples + Int64(sampleRate) {
            lastPlayed = max(lastPlayed, min(samples, writtenSamples))
        }
        return lastPlayed
    }

    /// `microseconds` of audio at `rate` Hz, in samples; nil when that does not fit in an Int64.
    static func samples(microseconds: pa_usec_t, rate: Int) -> Int64? {
        let (product, overflow) = (microseconds / 1000).multipliedReportingOverflow(by: UInt64(rate))
        guard !overflow, product / 1000 <= UInt64(Int64.max / 2) else { return nil }
        return Int64(product / 1000) + Int64(microseconds % 1000) * Int64(rate) / 1_000_000
    }

    /// The sink input index on the server (`pa_stream_get_index`), nil until the stream is ready and after it
    /// has finished. For tests and diagnostics.
    public var sinkInputIndex: UInt32? {
        guard phase == .ready, let stream else { return nil }
        let index = pa_stream_get_index(stream)
        return index == UInt32.max ? nil : index
    }

    /// The buffer attributes the server granted and the current latency, as one line for logs, e.g.
    /// "tlength 34.9 ms, prebuf 9.9 ms, minreq 9.9 ms, maxlength 4194304 B; latency 23.3 ms". nil unless ready.
    /// For diagnostics (`pa_stream_get_buffer_attr`, `pa_stream_get_latency`).
    public var bufferDescription: String? {
        guard phase == .ready, let stream, let attr = pa_stream_get_buffer_attr(stream) else { return nil }
        func ms(_ bytes: UInt32) -> String {
            let tenths = Int(bytes) * 10_000 / (2 * sampleRate)
            return "\(tenths / 10).\(tenths % 10) ms"
        }
        var text = "tlength \(ms(attr.pointee.tlength)), prebuf \(ms(attr.pointee.prebuf)), "
            + "minreq \(ms(attr.pointee.minreq)), maxlength \(attr.pointee.maxlength) B"
        var usec: pa_usec_t = 0
        var negative: Int32 = 0
        if pa_stream_get_latency(stream, &usec, &negative) == 0 {
            text += "; latency \(negative != 0 ? "-" : "")\(usec / 1000).\(usec % 1000 / 100) ms"
        }
        return text
    }

    /// Appends samples to the stream (copied; `pa_stream_write` with `PA_SEEK_RELATIVE`). Before the stream is
    /// ready they are kept and sent when it is. Ignored after `close()` or a failure.
    public func write(_ samples: ArraySlice<Int16>) {
        guard !samples.isEmpty, phase != .finished else { return }
        writtenSamples += Int64(samples.count)
        drainingSinceWrite = false
        guard phase == .ready, let stream else {
            pending.append(contentsOf: samples)
            return
        }
        let result = samples.withUnsafeBytes { bytes in
            pa_stream_write(stream, bytes.baseAddress, bytes.count, nil, 0, PA_SEEK_RELATIVE)
        }
        if result < 0 { fail(reason: errorText()) }
    }

    /// Corks (pauses) or uncorks (resumes) the stream (`pa_stream_cork`). Corking stops playback on the server at
    /// once without discarding anything (the server rewinds its sink buffer); uncorking resumes at the exact next
    /// sample. Idempotent.
    public func setCorked(_ corked: Bool) {
        guard phase != .finished, corked != isCorked else { return }
        isCorked = corked
        if !corked { hasPlayed = true }
        applyCork()
    }

    /// Asks the server to play out everything written so far and then call `onDrained` (`pa_stream_drain`).
    /// Writing more afterwards cancels nothing, but only the latest `drain()` reports: call it again after the
    /// last write. A corked stream drains once uncorked.
    public func drain() {
        guard phase != .finished else { return }
        drainingSinceWrite = true
        guard phase == .ready, let stream else {
            drainRequested = true
            return
        }
        cancelDrain()
        drainOperation = pa_stream_drain(stream, { _, success, userdata in
            guard let userdata else { return }
            Unmanaged<PlaybackStream>.fromOpaque(userdata).takeUnretainedValue().drainCompleted(success: success != 0)
        }, Unmanaged.passUnretained(self).toOpaque())
        if drainOperation == nil { fail(reason: errorText()) }
    }

    /// Discards everything queued and removes the stream from the server at once (`pa_stream_disconnect`; the
    /// server rewinds the sink, so it falls silent immediately). No callback runs after this. Idempotent;
    /// `deinit` does it too.
    public func close() {
        lossToReport = false
        guard phase != .finished else { return }
        detach()
        server.unregister(self)
    }

    /// Sets the stream volume, linear amplitude 0...1 (clamped), mapped with `pa_sw_volume_from_linear` and set
    /// with `pa_context_set_sink_input_volume` on this stream's sink input; remembered until the stream is created.
    public func setVolume(_ linear: Double) {
        guard phase != .finished else { return }
        volume = min(max(linear.isNaN ? 1 : linear, 0), 1)
        if phase == .ready { applyVolume() }
    }

    /// Sets property-list entries of the sink input (e.g. `media.language` when the language read changes),
    /// replacing those with the same keys and keeping the others (`pa_stream_proplist_update` with
    /// `PA_UPDATE_REPLACE`; PulseAudio's `pulse/stream.h`, `pulse/proplist.h`). Before the stream exists on the
    /// server they are remembered and sent with it. Ignored after `close()` or a failure.
    public func updateProperties(_ changes: [String: String]) {
        guard phase != .finished, !changes.isEmpty else { return }
        properties.merge(changes) { $1 }
        switch phase {
        case .ready: sendProperties(changes)
        case .creating: propertiesChanged = true
        case .waiting, .finished: break
        }
    }

    private func sendProperties(_ entries: [String: String]) {
        guard let stream else { return }
        let proplist = pa_proplist_new()
        defer { pa_proplist_free(proplist) }
        for (key, value) in entries { pa_proplist_sets(proplist, key, Self.bounded(value)) }
        if let op = pa_stream_proplist_update(stream, PA_UPDATE_REPLACE, proplist, nil, nil) {
            pa_operation_unref(op)
        }
    }

    /// The longest property value sent to the server, in UTF-8 bytes. A stream's properties travel in one
    /// packet, and PulseAudio drops a client whose packet is too large (a 70 KB `media.name` ends the
    /// connection); desktops show a line of it at most.
    public static let maximumPropertyBytes = 1024

    /// `value` cut to at most `maximumPropertyBytes` bytes, at a character boundary, with "…" when cut.
    static func bounded(_ value: String) -> String {
        guard value.utf8.count > maximumPropertyBytes else { return value }
        var kept = ""
        var bytes = 3 // "…"
        for character in value {
            bytes += character.utf8.count
            if bytes > maximumPropertyBytes { break }
            kept.append(character)
        }
        return kept + "…"
    }

    // MARK: - Driven by SoundServer

    /// The server is ready: create the stream there (once).
    func serverReady() {
        guard phase == .waiting, let context = server.context else { return }
        var spec = pa_sample_spec(format: PA_SAMPLE_S16LE, rate: UInt32(sampleRate), channels: 1)
        var map = pa_channel_map()
        pa_channel_map_init_mono(&map)

        let proplist = pa_proplist_new()
        defer { pa_proplist_free(proplist) }
        pa_proplist_sets(proplist, PA_PROP_MEDIA_NAME, Self.bounded(name))
        for (key, value) in properties { pa_proplist_sets(proplist, key, Self.bounded(value)) }

        guard let stream = pa_stream_new_with_proplist(context, nil, &spec, &map, proplist) else {
            fail(reason: SoundServer.errorText(context))
            return
        }
        self.stream = stream
        phase = .creating
        let me = Unmanaged.passUnretained(self).toOpaque()
        pa_stream_set_state_callback(stream, { _, userdata in
            guard let userdata else { return }
            Unmanaged<PlaybackStream>.fromOpaque(userdata).takeUnretainedValue().streamStateChanged()
        }, me)
        pa_stream_set_write_callback(stream, { _, _, userdata in
            guard let userdata else { return }
            Unmanaged<PlaybackStream>.fromOpaque(userdata).takeUnretainedValue().serverWantsData()
        }, me)
        pa_stream_set_underflow_callback(stream, { _, userdata in
            guard let userdata else { return }
            let me = Unmanaged<PlaybackStream>.fromOpaque(userdata).takeUnretainedValue()
            if !me.drainingSinceWrite { me.underruns += 1 }
        }, me)

        let bytesPerMs = sampleRate * 2 / 1000
        var attributes = pa_buffer_attr(
            maxlength: UInt32.max,
            tlength: UInt32(Self.targetLatencyMilliseconds * bytesPerMs),
            prebuf: UInt32(Self.prebufferMilliseconds * bytesPerMs),
            minreq: UInt32((server.isPipeWire ? Self.pipeWireRequestMilliseconds : Self.minimumRequestMilliseconds) * bytesPerMs),
            fragsize: UInt32.max)
        var flags = PA_STREAM_INTERPOLATE_TIMING.rawValue | PA_STREAM_AUTO_TIMING_UPDATE.rawValue
            | PA_STREAM_ADJUST_LATENCY.rawValue
        if isCorked { flags |= PA_STREAM_START_CORKED.rawValue }
        corkedOnServer = isCorked
        var cvolume = pa_cvolume()
        let hasVolume = volume != nil
        if let volume { pa_cvolume_set(&cvolume, 1, pa_sw_volume_from_linear(volume)) }
        let result = withUnsafePointer(to: &cvolume) { volumePointer in
            pa_stream_connect_playback(stream, nil, &attributes, pa_stream_flags_t(rawValue: flags),
                                       hasVolume ? volumePointer : nil, nil)
        }
        if result < 0 { fail(reason: SoundServer.errorText(context)) }
    }

    /// The connection is being lost or closed: finish now, silently; `reportLoss` follows.
    func abandon() {
        guard phase != .finished else { return }
        detach()
        server.unregister(self)
        lossToReport = true
    }

    /// Reports the loss announced by `abandon()`, unless the owner closed the stream in between.
    func reportLoss(_ reason: String) {
        guard lossToReport else { return }
        lossToReport = false
        onFailed?(reason)
    }

    // MARK: - Stream callbacks

    private func streamStateChanged() {
        guard let stream else { return }
        switch pa_stream_get_state(stream) {
        case PA_STREAM_READY:
            guard phase == .creating else { return }
            phase = .ready
            if !pending.isEmpty {
                let samples = pending
                pending = []
                writtenSamples -= Int64(samples.count)
                write(samples[...])
            }
            if phase == .ready, isCorked != corkedOnServer { applyCork() }
            if phase == .ready, volume != nil { applyVolume() }
            if phase == .ready, propertiesChanged {
                propertiesChanged = false
                sendProperties(properties)
            }
            if phase == .ready, drainRequested {
                drainRequested = false
                drain()
            }
        case PA_STREAM_FAILED:
            fail(reason: errorText())
        case PA_STREAM_TERMINATED:
            fail(reason: "The sound server removed the stream")
        default:
            break
        }
    }

    private func serverWantsData() {
        guard phase == .ready else { return }
        let samples = writableSamples
        if samples > 0 { onWritable?(samples) }
    }

    private func drainCompleted(success: Bool) {
        if let drainOperation {
            pa_operation_unref(drainOperation)
            self.drainOperation = nil
        }
        guard phase == .ready, success else { return }
        onDrained?()
    }

    // MARK: - Helpers

    private func applyCork() {
        guard phase == .ready, let stream else { return }
        corkedOnServer = isCorked
        if let op = pa_stream_cork(stream, isCorked ? 1 : 0, nil, nil) {
            pa_operation_unref(op)
        } else {
            fail(reason: errorText())
        }
    }

    private func applyVolume() {
        guard let volume, let context = server.context, let index = sinkInputIndex else { return }
        var cvolume = pa_cvolume()
        pa_cvolume_set(&cvolume, 1, pa_sw_volume_from_linear(volume))
        if let op = pa_context_set_sink_input_volume(context, index, &cvolume, nil, nil) {
            pa_operation_unref(op)
        }
    }

    private func cancelDrain() {
        guard let drainOperation else { return }
        pa_operation_cancel(drainOperation)
        pa_operation_unref(drainOperation)
        self.drainOperation = nil
    }

    private func fail(reason: String) {
        guard phase != .finished else { return }
        detach()
        server.unregister(self)
        onFailed?(reason)
    }

    /// Finishes the stream: no callback into this object after it. The `pa_stream` is disconnected (or, while
    /// the server is still creating it, disconnected once created) and released by libpulse's own state
    /// callback, so the sink input never outlives us.
    private func detach() {
        phase = .finished
        pending = []
        drainRequested = false
        cancelDrain()
        guard let stream else { return }
        self.stream = nil
        pa_stream_set_write_callback(stream, nil, nil)
        pa_stream_set_underflow_callback(stream, nil, nil)
        pa_stream_set_state_callback(stream, { stream, _ in
            guard let stream else { return }
            PlaybackStream.releaseOrphan(stream)
        }, nil)
        PlaybackStream.releaseOrphan(stream)
    }

    /// Drives a stream nobody owns any more to its end and drops the reference we held.
    private static func releaseOrphan(_ stream: OpaquePointer) {
        switch pa_stream_get_state(stream) {
        case PA_STREAM_READY:
            // Removes the sink input at once; TERMINATED follows when the server confirms.
            if pa_stream_disconnect(stream) < 0 {
                // The context is going away: it fails the stream shortly, which lands here again.
                break
            }
        case PA_STREAM_CREATING:
            break  // READY or FAILED follows
        default:
            // UNCONNECTED, FAILED, TERMINATED: nothing more will happen to it.
            pa_stream_set_state_callback(stream, nil, nil)
            pa_stream_unref(stream)
        }
    }

    private func errorText() -> String {
        guard let context = server.context else { return "Connection to the sound server lost" }
        return SoundServer.errorText(context)
    }
}
