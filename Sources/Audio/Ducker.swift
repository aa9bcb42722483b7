@preconcurrency import Glibc
internal import CPulse

/// Lowers the other playback streams ("ducking") while Lector speaks, and puts them back exactly, without
/// changing what the sound server remembers for other applications.
///
/// Where the server can duck by itself (PulseAudio's `module-role-ducking`, see `ServerDucking`), Lector
/// loads that module once connected and leaves ducking to it: other streams on Lector's sink are lowered by a
/// volume factor, never saved, exactly while Lector's `a11y` stream plays; `duck()` and `restore()` then have
/// nothing to do. Elsewhere (pipewire-pulse: PipeWire 0.3 and WirePlumber 0.4 offer no unsaved volume and no
/// ducking policy enabled by default) the Ducker lowers the streams' own volumes as follows.
///
/// While ducking, every sink input on the sink Lector plays on (the sink of this process's own stream, else the
/// server's default sink) that does not belong to this process is set to its own volume times `attenuation`
/// (`pa_sw_volume_from_dB`), including streams that appear meanwhile (a `pa_context_subscribe` on sink inputs).
/// `restore()` sets each one back to the volume it had — unless its volume was changed by someone else in the
/// meantime (the user moved its slider): that stream is left as the user set it. The server saves the volume
/// put back as the application's own; for a stream that ends while lowered, the remembered volume of its group
/// is put back through the stream-restore extension (`RememberedVolume`). A stream's first second is its
/// server's: a volume change in it (WirePlumber restoring the application's volume after the stream appeared)
/// becomes its volume and is lowered again, and a stream at volume 0 is lowered once it has a volume. PulseAudio and pipewire-pulse
/// both implement these calls. Source: PulseAudio's `pulse/introspect.h`, `pulse/subscribe.h`, `pulse/volume.h`.
///
/// Runs on the GLib main loop with the `SoundServer`'s connection; when the connection is lost the records of
/// that server are dropped (its streams are gone with it).
public final class Ducker {
    /// How much other streams are lowered, in dB (negative; -15 dB by default).
    public var attenuationDecibels: Double

    /// Called on the main loop whenever `ducked` changes, so the owner can keep a copy on disk for
    /// `restore(leftovers:)` after a crash.
    public var onChange: (([DuckedStream]) -> Void)?

    /// The streams lowered now, in the order they were lowered.
    public private(set) var ducked: [DuckedStream] = []

    /// Whether ducking is on (between `duck()` and `restore()`).
    public private(set) var isDucking = false

    private let server: SoundServer
    /// The context the subscription was made on (a reconnection makes a new one).
    private var subscribedContext: OpaquePointer?
    /// Counts info requests; a reply to a request made before Lector's own volume change is stale.
    private var requestSerial: UInt64 = 0
    private var setAtSerial: [UInt32: UInt64] = [:]
    /// Volume changes sent and not yet acknowledged, with what to run when all are.
    private var pendingOperations = 0
    private var whenSettled: [() -> Void] = []
    private var targetSink: UInt32?
    private var pendingLeftovers: [DuckedStream] = []
    private let ownProcessID = String(getpid())
    /// The server's own ducking, when Lector prefers it (nil: always lower stream volumes).
    private let serverDucking: ServerDucking?
    /// The sink index of a stream not linked to a sink (`PA_INVALID_INDEX`, which Swift cannot import).
    static let noSink = UInt32.max
    /// Lector's own sink inputs (this process's), whose sink says where to duck.
    private var ownStreams: Set<UInt32> = []
    /// When streams appeared (monotonic µs), for their first `settleMicroseconds`.
    private var born: [UInt32: Int64] = [:]
    /// The stream-restore group, channel map and mute of each lowered stream that has one.
    private var groups: [UInt32: RememberedGroup] = [:]
    /// The own volume of each group whose lowered stream ended while ducking: the group's next stream may
    /// start with the lowered volume, remembered before Lector's repair reached the server.
    private var groupVolumes: [String: [UInt32]] = [:]
    /// How long after a stream appears a volume change is taken for the server's (restoring the group's
    /// volume), not the user's, µs.
    static let settleMicroseconds: Int64 = 1_000_000

    /// How other streams are being lowered.
    public enum Mechanism: Equatable, Sendable {
        /// Not known yet (no connection, or the server is being asked).
        case unknown
        /// By the server (`module-role-ducking`): volume factors that are never saved.
        case server
        /// By setting the streams' own volumes, and putting back what the server remembers.
        case streamVolumes
    }

    /// How other streams are being lowered on the current connection.
    public var mechanism: Mechanism {
        guard let serverDucking else { return server.state == .ready ? .streamVolumes : .unknown }
        switch serverDucking.status {
        case .unknown, .pending: return .unknown
        case .loaded: return .server
        case .unavailable: return .streamVolumes
        }
    }

    /// - Parameters:
    ///   - server: the connection to the sound server (the daemon's own).
    ///   - attenuationDecibels: how much to lower other streams, in dB (e.g. -15).
    ///   - serverSide: load the server's ducking module where there is one (false: only put back leftovers).
    public init(server: SoundServer, attenuationDecibels: Double = -15, serverSide: Bool = true) {
        self.server = server
        self.attenuationDecibels = attenuationDecibels
        serverDucking = serverSide ? ServerDucking(decibels: attenuationDecibels) : nil
        serverDucking?.onSettled = { [weak self] status in
            guard let self, status == .unavailable, self.isDucking, let ctx = self.server.context else { return }
            self.start(on: ctx)
        }
        server.addStateObserver { [weak self] state in self?.serverStateChanged(state) }
        if server.state == .ready, let ctx = server.context { serverDucking?.setUp(on: ctx) }
    }

    /// Starts ducking: lowers every other stream on Lector's sink now and each new one as it appears.
    /// Idempotent; does nothing while the server is not ready (ducking starts when it is).
    public func duck() {
        guard !isDucking else { return }
        isDucking = true
        guard let ctx = server.context, server.state == .ready, mechanism == .streamVolumes else { return }
        start(on: ctx)
    }

    /// Restores (see `restore(completion:)`) and unloads the server's ducking module, before the daemon exits.
    /// `completion` runs on the main loop once the server has acknowledged both.
    public func shutDown(completion: @escaping () -> Void) {
        restore { [weak self] in
            guard let self, let serverDucking = self.serverDucking else { return completion() }
            serverDucking.tearDown(completion: completion)
        }
    }

    /// Stops ducking: every stream lowered and not changed by someone else since gets its own volume back.
    /// `completion` runs on the main loop once the server has acknowledged every change (at once when there is
    /// nothing to do or no connection).
    public func restore(completion: (() -> Void)? = nil) {
        isDucking = false
        targetSink = nil
        let records = ducked
        ducked = []
        setAtSerial = [:]
        groups = [:]
        groupVolumes = [:]
        if !records.isEmpty { onChange?(ducked) }
        if let ctx = server.context, server.state == .ready {
            for record in records { setVolume(record.index, record.original, on: ctx, onlyIf: record.ducked) }
        }
        if let completion { settle(completion) }
    }

    /// Puts back streams a previous Lector process lowered and never restored (it crashed): each sink input
    /// that still exists with exactly the volume that process set gets its `original` volume back. Done as
    /// soon as the server is ready (now, if it is).
    public func restore(leftovers: [DuckedStream]) {
        guard let ctx = server.context, server.state == .ready else {
            pendingLeftovers += leftovers
            return
        }
        for record in leftovers { setVolume(record.index, record.original, on: ctx, onlyIf: record.ducked) }
    }

    // MARK: - Internals

    private func serverStateChanged(_ state: SoundServer.State) {
        switch state {
        case .ready:
            if !pendingLeftovers.isEmpty {
                let leftovers = pendingLeftovers
                pendingLeftovers = []
                restore(leftovers: leftovers)
            }
            if let ctx = server.context {
                if let serverDucking { serverDucking.setUp(on: ctx) } else if isDucking { start(on: ctx) }
            }
        case .failed, .disconnected:
            serverDucking?.reset()
            born = [:]
            ownStreams = []
            groups = [:]
            groupVolumes = [:]
            subscribedContext = nil
            targetSink = nil
            setAtSerial = [:]
            if !ducked.isEmpty {
                ducked = []
                onChange?(ducked)
            }
        case .connecting:
            break
        }
    }

    private var userdata: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    private func start(on ctx: OpaquePointer) {
        // Volumes being put back (an earlier restore, a crashed process's leftovers) must land first, or the
        // list below would take a lowered volume for a stream's own.
        if pendingOperations > 0 {
            settle { [weak self] in
                guard let self, self.isDucking, let ctx = self.server.context, self.server.state == .ready else { return }
                self.start(on: ctx)
            }
            return
        }
        if subscribedContext != ctx {
            subscribedContext = ctx
            pa_context_set_subscribe_callback(ctx, { ctx, type, index, userdata in
                guard let ctx, let userdata else { return }
                Unmanaged<Ducker>.fromOpaque(userdata).takeUnretainedValue().event(type, index: index, on: ctx)
            }, userdata)
            if let op = pa_context_subscribe(ctx, PA_SUBSCRIPTION_MASK_SINK_INPUT, nil, nil) { pa_operation_unref(op) }
        }
        requestSerial += 1
        let serial = requestSerial
        let box = Unmanaged.passRetained(InfoRequest(ducker: self, serial: serial)).toOpaque()
        // Our own stream tells which sink to duck; the list comes in one reply, so look at it whole.
        let op = pa_context_get_sink_input_info_list(ctx, { ctx, info, eol, box in
            guard let box else { return }
            let request = Unmanaged<InfoRequest>.fromOpaque(box)
            if eol != 0 {
                let r = request.takeRetainedValue()
                r.ducker?.listed(r.collected, on: ctx)
                return
            }
            if let info { request.takeUnretainedValue().collected.append(SinkInput(info.pointee)) }
        }, box)
        if let op { pa_operation_unref(op) } else { Unmanaged<InfoRequest>.fromOpaque(box).release() }
    }

    private func listed(_ inputs: [SinkInput], on ctx: OpaquePointer?) {
        guard isDucking, let ctx, ctx == server.context else { return }
        ownStreams = Set(inputs.filter { $0.processID == ownProcessID }.map(\.index))
        // A stream pipewire-pulse has announced but not linked yet is on no sink (`noSink`).
        if let own = inputs.first(where: { $0.processID == ownProcessID && $0.sink != Self.noSink }) {
            targetSink = own.sink
            for input in inputs { consider(input, on: ctx) }
        } else {
            // No stream of ours on a sink yet: the default sink is where it will most likely play (when the
            // server puts it elsewhere, `updated` moves the ducking there).
            let box = Unmanaged.passRetained(DefaultSinkRequest(ducker: self, inputs: inputs)).toOpaque()
            let op = pa_context_get_sink_info_by_name(ctx, "@DEFAULT_SINK@", { ctx, info, eol, box in
                guard let box else { return }
                if eol == 0, let info {
                    Unmanaged<DefaultSinkRequest>.fromOpaque(box).takeUnretainedValue().sink = info.pointee.index
                    return
                }
                let r = Unmanaged<DefaultSinkRequest>.fromOpaque(box).takeRetainedValue()
                guard let ducker = r.ducker, ducker.isDucking, let ctx, ctx == ducker.server.context else { return }
                ducker.targetSink = r.sink
                for input in r.inputs { ducker.consider(input, on: ctx) }
            }, box)
            if let op { pa_operation_unref(op) } else { Unmanaged<DefaultSinkRequest>.fromOpaque(box).release() }
        }
    }

    /// Lowers `input` if it is another program's stream on our sink and not lowered yet.
    private func consider(_ input: SinkInput, on ctx: OpaquePointer) {
        guard isDucking, input.processID != ownProcessID, input.hasVolume, input.volumeWritable else { return }
        guard input.sink == targetSink, !ducked.contains(where: { $0.index == input.index }) else { return }
        // Silent (or not set up yet, as a stream pipewire-pulse has just announced can be): nothing to lower,
        // and 0 must never be taken for its own volume. A young stream is looked at again when it changes.
        guard input.volume.contains(where: { $0 > 0 }) else { return }
        let original = ownVolume(input)
        let lowered = lower(original)
        ducked.append(DuckedStream(index: input.index, original: original, ducked: lowered))
        setAtSerial[input.index] = requestSerial
        if let group = input.restoreGroup {
            groups[input.index] = RememberedGroup(name: group, channelMap: input.channelMap, mute: input.mute)
        }
        onChange?(ducked)
        setVolume(input.index, lowered, on: ctx, onlyIf: nil)
    }

    /// The volume `input` has of its own: its volume, unless it belongs to a group whose lowered stream ended
    /// while ducking (then that stream's own).
    private func ownVolume(_ input: SinkInput) -> [UInt32] {
        guard let group = input.restoreGroup, let volume = groupVolumes[group], volume.count == input.volume.count
        else { return input.volume }
        return volume
    }

    private func lower(_ volume: [UInt32]) -> [UInt32] {
        let factor = pa_sw_volume_from_dB(attenuationDecibels)
        return volume.map { pa_sw_volume_multiply($0, factor) }
    }

    private static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000 + Int64(time.tv_nsec) / 1_000
    }

    private func isYoung(_ index: UInt32) -> Bool {
        guard let birth = born[index] else { return false }
        return Self.now() - birth < Self.settleMicroseconds
    }

    /// A lowered stream ended: what its server now remembers for its group is Lector's volume; put back its own.
    private func ended(_ record: DuckedStream) {
        guard let group = groups.removeValue(forKey: record.index), let ctx = server.context, server.state == .ready
        else { return }
        if isDucking { groupVolumes[group.name] = record.original }
        pendingOperations += 1
        RememberedVolume.put(group.name, volume: record.original, channelMap: group.channelMap, mute: group.mute,
                             on: ctx) { [weak self] in self?.operationDone() }
    }

    private func event(_ type: pa_subscription_event_type_t, index: UInt32, on ctx: OpaquePointer) {
        guard ctx == server.context else { return }
        let kind = type.rawValue & PA_SUBSCRIPTION_EVENT_TYPE_MASK.rawValue
        if kind == PA_SUBSCRIPTION_EVENT_REMOVE.rawValue {
            born[index] = nil
            ownStreams.remove(index)
            if let i = ducked.firstIndex(where: { $0.index == index }) {
                let record = ducked.remove(at: i)
                setAtSerial[index] = nil
                onChange?(ducked)
                ended(record)
            }
            groups[index] = nil
            return
        }
        let isNew = kind == PA_SUBSCRIPTION_EVENT_NEW.rawValue
        if isNew { born[index] = Self.now() }
        guard isDucking else { return }
        guard isNew || isYoung(index) || ownStreams.contains(index) || ducked.contains(where: { $0.index == index })
        else { return }
        requestSerial += 1
        let box = Unmanaged.passRetained(InfoRequest(ducker: self, serial: requestSerial)).toOpaque()
        let op = pa_context_get_sink_input_info(ctx, index, { ctx, info, eol, box in
            guard let box else { return }
            if eol != 0 {
                let r = Unmanaged<InfoRequest>.fromOpaque(box).takeRetainedValue()
                guard let input = r.collected.first else { return }
                r.ducker?.updated(input, serial: r.serial, on: ctx)
                return
            }
            if let info { Unmanaged<InfoRequest>.fromOpaque(box).takeUnretainedValue().collected.append(SinkInput(info.pointee)) }
        }, box)
        if let op { pa_operation_unref(op) } else { Unmanaged<InfoRequest>.fromOpaque(box).release() }
    }

    /// A new stream, or a change of a lowered one (its volume, its sink) or of one of Lector's own.
    private func updated(_ input: SinkInput, serial: UInt64, on ctx: OpaquePointer?) {
        guard isDucking, let ctx, ctx == server.context else { return }
        if input.processID == ownProcessID {
            ownStreams.insert(input.index)
            if input.sink != Self.noSink, targetSink != nil, input.sink != targetSink { retarget(on: ctx) }
            return
        }
        guard let i = ducked.firstIndex(where: { $0.index == input.index }) else {
            if targetSink != nil { consider(input, on: ctx) }
            return
        }
        // A reply to a request sent before our own change shows the volume from before it.
        guard serial > setAtSerial[input.index, default: 0] else { return }
        // Its own volume again: a report from before Lector's change reached the stream (pipewire-pulse sets a
        // node's volume asynchronously), or the user chose exactly that volume, which restore puts back anyway.
        if input.volume == ducked[i].original, input.sink == targetSink, !isYoung(input.index) { return }
        if input.volume != ducked[i].ducked || input.sink != targetSink {
            if input.sink == targetSink, isYoung(input.index), input.volume.contains(where: { $0 > 0 }) {
                // The server gave the new stream its group's remembered volume: that is its own; lower it.
                let original = ownVolume(input)
                let lowered = lower(original)
                ducked[i] = DuckedStream(index: input.index, original: original, ducked: lowered)
                onChange?(ducked)
                guard lowered != input.volume else { return }
                setAtSerial[input.index] = requestSerial
                setVolume(input.index, lowered, on: ctx, onlyIf: nil)
                return
            }
            // Someone else set this stream's volume (or moved it): theirs to keep, never restored by us.
            ducked.remove(at: i)
            setAtSerial[input.index] = nil
            groups[input.index] = nil
            born[input.index] = nil
            onChange?(ducked)
        }
    }

    /// Lector's stream is on another sink than the one being ducked (the server linked it after ducking began,
    /// away from the default sink, or the user moved it): puts back the streams lowered so far, as `restore`
    /// does, and ducks afresh on the sink Lector's stream is on now.
    private func retarget(on ctx: OpaquePointer) {
        let records = ducked
        ducked = []
        setAtSerial = [:]
        groups = [:]
        targetSink = nil
        if !records.isEmpty { onChange?(ducked) }
        for record in records { setVolume(record.index, record.original, on: ctx, onlyIf: record.ducked) }
        start(on: ctx)
    }

    /// Sets a sink input's volume; with `onlyIf`, only when its volume is exactly that now.
    private func setVolume(_ index: UInt32, _ volume: [UInt32], on ctx: OpaquePointer, onlyIf expected: [UInt32]?) {
        pendingOperations += 1
        guard let expected else {
            send(index, volume, on: ctx)
            return
        }
        let box = Unmanaged.passRetained(ConditionalSet(ducker: self, volume: volume, expected: expected)).toOpaque()
        let op = pa_context_get_sink_input_info(ctx, index, { ctx, info, eol, box in
            guard let box else { return }
            let r = Unmanaged<ConditionalSet>.fromOpaque(box)
            if eol == 0 {
                if let info { r.takeUnretainedValue().current = SinkInput(info.pointee) }
                return
            }
            let set = r.takeRetainedValue()
            guard let ducker = set.ducker else { return }
            if let current = set.current, current.volume == set.expected, let ctx {
                ducker.send(current.index, set.volume, on: ctx)
            } else {
                ducker.operationDone()
            }
        }, box)
        if let op { pa_operation_unref(op) } else {
            Unmanaged<ConditionalSet>.fromOpaque(box).release()
            operationDone()
        }
    }

    private func send(_ index: UInt32, _ volume: [UInt32], on ctx: OpaquePointer) {
        var cvolume = pa_cvolume()
        cvolume.channels = UInt8(min(volume.count, Int(PA_CHANNELS_MAX)))
        withUnsafeMutableBytes(of: &cvolume.values) { raw in
            let values = raw.bindMemory(to: pa_volume_t.self)
            for (i, v) in volume.prefix(values.count).enumerated() { values[i] = v }
        }
        let op = pa_context_set_sink_input_volume(ctx, index, &cvolume, { _, _, userdata in
            guard let userdata else { return }
            Unmanaged<Ducker>.fromOpaque(userdata).takeUnretainedValue().operationDone()
        }, userdata)
        if let op { pa_operation_unref(op) } else { operationDone() }
    }

    private func operationDone() {
        pendingOperations = max(0, pendingOperations - 1)
        guard pendingOperations == 0 else { return }
        let waiting = whenSettled
        whenSettled = []
        for body in waiting { body() }
    }

    private func settle(_ completion: @escaping () -> Void) {
        if pendingOperations == 0 || server.state != .ready {
            completion()
        } else {
            whenSettled.append(completion)
        }
    }
}
