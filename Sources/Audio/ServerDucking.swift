internal import CPulse

/// Ducking done by the sound server itself: PulseAudio's `module-role-ducking`, loaded with
/// `trigger_roles=a11y ducking_roles=any_role global=false volume=NdB`.
///
/// While a stream whose `media.role` is `a11y` (Lector's own) plays uncorked and unmuted on a sink, the module
/// lowers every other stream on that sink whose role is not `a11y`, streams that start later included, with a
/// *volume factor* (`pa_sink_input_add_volume_factor`), and removes the factor when the trigger stream is
/// corked, muted or gone. A volume factor is not the stream's volume: clients do not see it, and
/// `module-stream-restore` never saves it, so nothing the server remembers for another application changes.
/// Source: PulseAudio 16 `src/modules/stream-interaction.c`, `module-role-ducking.c`.
///
/// pipewire-pulse (PipeWire 0.3) has no such module: `pa_context_load_module` fails there, and the `Ducker`
/// lowers stream volumes itself instead. The module stays loaded for the daemon's life and is unloaded at
/// exit; a module left by a crashed daemon (same arguments up to the volume) is taken over, or replaced when
/// its volume differs.
final class ServerDucking {
    /// The module's name.
    static let moduleName = "module-role-ducking"
    /// The arguments that identify a module loaded by Lector, followed by `volume=…dB`.
    static let argumentPrefix = "trigger_roles=a11y ducking_roles=any_role global=false volume="

    /// What is known about the server's ducking module.
    enum Status: Equatable {
        /// Not asked yet (or asked on a context since lost).
        case unknown
        /// Being looked up or loaded.
        case pending
        /// Loaded (by this process or taken over) at this module index.
        case loaded(UInt32)
        /// The server has no such module (pipewire-pulse) or refused it.
        case unavailable
    }

    private(set) var status: Status = .unknown
    /// Called on the main loop once `status` is `.loaded` or `.unavailable`.
    var onSettled: ((Status) -> Void)?
    private let arguments: String
    private var context: OpaquePointer?

    /// - Parameter decibels: how much other streams are lowered, in dB (negative).
    init(decibels: Double) {
        arguments = Self.argumentPrefix + Self.decibelText(decibels) + "dB"
    }

    /// The dB value as PulseAudio's `pa_parse_volume` reads it ("-15", "-7.5").
    static func decibelText(_ decibels: Double) -> String {
        let tenths = Int((decibels * 10).rounded())
        let sign = tenths < 0 ? "-" : ""
        let whole = abs(tenths) / 10, fraction = abs(tenths) % 10
        return fraction == 0 ? "\(sign)\(whole)" : "\(sign)\(whole).\(fraction)"
    }

    private var userdata: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// Looks for Lector's module on the server behind `ctx` and loads it when it is missing.
    func setUp(on ctx: OpaquePointer) {
        context = ctx
        status = .pending
        let box = Unmanaged.passRetained(ModuleList(owner: self, context: ctx)).toOpaque()
        let op = pa_context_get_module_info_list(ctx, { ctx, info, eol, box in
            guard let box else { return }
            let list = Unmanaged<ModuleList>.fromOpaque(box)
            if eol == 0 {
                if let info, let name = info.pointee.name, String(cString: name) == ServerDucking.moduleName {
                    let argument = info.pointee.argument.map { String(cString: $0) } ?? ""
                    list.takeUnretainedValue().found.append((info.pointee.index, argument))
                }
                return
            }
            let done = list.takeRetainedValue()
            done.owner?.listed(done.found, on: done.context, failed: eol < 0)
        }, box)
        if let op { pa_operation_unref(op) } else {
            Unmanaged<ModuleList>.fromOpaque(box).release()
            settle(.unavailable)
        }
    }

    /// Forgets the module of a lost connection (the server, if it comes back, is asked again).
    func reset() {
        context = nil
        status = .unknown
    }

    /// Unloads the module, if loaded; `completion` runs once the server has answered (at once otherwise).
    func tearDown(completion: @escaping () -> Void) {
        guard case .loaded(let index) = status, let ctx = context else { return completion() }
        status = .unknown
        let box = Unmanaged.passRetained(Completion(completion)).toOpaque()
        let op = pa_context_unload_module(ctx, index, { _, _, box in
            guard let box else { return }
            Unmanaged<Completion>.fromOpaque(box).takeRetainedValue().body()
        }, box)
        if let op { pa_operation_unref(op) } else {
            Unmanaged<Completion>.fromOpaque(box).release()
            completion()
        }
    }

    private func listed(_ modules: [(UInt32, String)], on ctx: OpaquePointer?, failed: Bool) {
        guard let ctx, ctx == context, status == .pending else { return }
        var reuse: UInt32?
        for (index, argument) in modules where argument.hasPrefix(Self.argumentPrefix) {
            if argument == arguments, reuse == nil {
                reuse = index
            } else if let op = pa_context_unload_module(ctx, index, nil, nil) {
                pa_operation_unref(op)   // a crashed daemon's module with another volume
            }
        }
        if let reuse { return settle(.loaded(reuse)) }
        let op = pa_context_load_module(ctx, Self.moduleName, arguments, { ctx, index, userdata in
            guard let userdata else { return }
            let me = Unmanaged<ServerDucking>.fromOpaque(userdata).takeUnretainedValue()
            guard ctx == me.context, me.status == .pending else { return }
            me.settle(index == UInt32.max ? .unavailable : .loaded(index))
        }, userdata)
        if let op { pa_operation_unref(op) } else { settle(.unavailable) }
    }

    private func settle(_ status: Status) {
        self.status = status
        onSettled?(status)
    }
}

private final class ModuleList {
    weak var owner: ServerDucking?
    let context: OpaquePointer
    var found: [(UInt32, String)] = []
    init(owner: ServerDucking, context: OpaquePointer) {
        self.owner = owner
        self.context = context
    }
}

private final class Completion {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}
