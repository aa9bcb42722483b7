/// One stream lowered by a `Ducker`: enough to put its volume back, also from another process after a crash.
public struct DuckedStream: Equatable, Sendable {
    /// The sink input's index on the server (`pa_sink_input_info.index`; indexes are not reused while the
    /// server runs).
    public var index: UInt32
    /// Its volume before ducking, one software volume per channel (`pa_volume_t`, `PA_VOLUME_NORM` = 65536 is
    /// 100 %).
    public var original: [UInt32]
    /// The volume Lector set, per channel. The stream is restored only while it still has this volume: a volume
    /// the user set in between wins.
    public var ducked: [UInt32]

    /// Makes a record (see the properties).
    public init(index: UInt32, original: [UInt32], ducked: [UInt32]) {
        self.index = index
        self.original = original
        self.ducked = ducked
    }
}
