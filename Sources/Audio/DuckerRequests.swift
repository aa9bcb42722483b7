internal import CPulse

// What the `Ducker` copies out of libpulse's callbacks, and the boxes that carry a request's state through a
// callback's `userdata` until its reply has come whole.

/// What Lector needs of a `pa_sink_input_info`, copied out of the callback.
struct SinkInput {
    var index: UInt32
    var sink: UInt32
    var volume: [UInt32]
    var hasVolume: Bool
    var volumeWritable: Bool
    /// `application.process.id` of the stream's client, if it says.
    var processID: String?
    var mute: Bool
    var channelMap: pa_channel_map
    /// The stream-restore group the server files its volume under (`module-stream-restore.id`, set by
    /// PulseAudio's module-stream-restore and by pipewire-pulse).
    var restoreGroup: String?

    init(_ info: pa_sink_input_info) {
        index = info.index
        sink = info.sink
        var cv = info.volume
        let channels = Int(cv.channels)
        volume = withUnsafeBytes(of: &cv.values) { Array($0.bindMemory(to: pa_volume_t.self).prefix(channels)) }
        hasVolume = info.has_volume != 0
        volumeWritable = info.volume_writable != 0
        processID = info.proplist.flatMap { pa_proplist_gets($0, "application.process.id") }.map { String(cString: $0) }
        mute = info.mute != 0
        channelMap = info.channel_map
        restoreGroup = info.proplist.flatMap { pa_proplist_gets($0, "module-stream-restore.id") }.map { String(cString: $0) }
    }
}

/// Where a lowered stream's server remembers its volume (see `RememberedVolume`).
struct RememberedGroup {
    var name: String
    var channelMap: pa_channel_map
    var mute: Bool
}

/// A request for sink-input info: the inputs the replies carried, and the `Ducker`'s request serial when it
/// was sent (a reply to a request older than Lector's own volume change is stale).
final class InfoRequest {
    weak var ducker: Ducker?
    let serial: UInt64
    var collected: [SinkInput] = []
    init(ducker: Ducker, serial: UInt64) {
        self.ducker = ducker
        self.serial = serial
    }
}

/// A request for the default sink, with the sink inputs listed before it, to be lowered once its index is known.
final class DefaultSinkRequest {
    weak var ducker: Ducker?
    let inputs: [SinkInput]
    var sink: UInt32?
    init(ducker: Ducker, inputs: [SinkInput]) {
        self.ducker = ducker
        self.inputs = inputs
    }
}

/// A volume to set only if the sink input's current volume is still `expected` (a change by the user wins).
final class ConditionalSet {
    weak var ducker: Ducker?
    let volume: [UInt32]
    let expected: [UInt32]
    var current: SinkInput?
    init(ducker: Ducker, volume: [UInt32], expected: [UInt32]) {
        self.ducker = ducker
        self.volume = volume
        self.expected = expected
    }
}
