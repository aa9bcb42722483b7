internal import CPulse

/// A connection to the sound server (a libpulse `pa_context`) driven by the GLib main loop through
/// `pa_glib_mainloop` (libpulse-mainloop-glib), so every callback runs on the thread that iterates GLib's
/// default main context; nothing here starts a thread.
///
/// Works with PulseAudio and with pipewire-pulse (both speak the native protocol).
/// Source of the behaviour: PulseAudio's client API documentation, `pulse/context.h` and `pulse/glib-mainloop.h`.
///
/// Keep the `SoundServer` alive for as long as you use it: every `PlaybackStream` made on it holds it strongly.
public final class SoundServer {
    /// The connection state, as far as the owner needs it (`pa_context_state_t` folded to four cases).
    public enum State: Equatable, Sendable {
        /// Not connected: before the first `connect()` and after `disconnect()`.
        case disconnected
        /// `connect()` was called and the server has not answered yet (connecting, authorizing, setting the name).
        case connecting
        /// Connected; streams can play.
        case ready
        /// The connection could not be made or was lost (server killed, socket closed). The text is the one-line
        /// `pa_strerror` message of the context error, e.g. "Connection refused" or "Connection terminated".
        case failed(String)
    }

    /// Called on every change of `state`, on the main loop, after `state` was updated.
    /// On `.failed`, the streams of the lost connection report `onFailed` right after this call.
    public var onStateChange: ((State) -> Void)?

    /// The current connection state. `.disconnected` until `connect()` is called.
    public private(set) var state: State = .disconnected

    /// The server's name and version, e.g. "pulseaudio 16.1" ("PulseAudio (on PipeWire 1.0.5) 15.0.0" under
    /// pipewire-pulse), from `pa_context_get_server_info`. `nil` until shortly after `.ready`, and when not connected.
    /// For diagnostics only.
    public private(set) var serverDescription: String?

    /// Whether the server is pipewire-pulse (its name says "PulseAudio (on PipeWire …)"); false until the
    /// server's information has arrived, a few ms after `ready`.
    public var isPipeWire: Bool { serverDescription?.contains("on PipeWire") == true }

    private let applicationName: String
    private let properties: [String: String]
    private let mainloop: OpaquePointer
    /// The live connection, or nil when disconnected or failed.
    private(set) var context: OpaquePointer?
    /// Counts connections: a stream belongs to the connection it was created on.
    private(set) var generation = 0
    private var streams: [WeakStream] = []
    /// Other parts of the Audio target that follow the connection (e.g. `Ducker`), told after `onStateChange`.
    private var stateObservers: [(State) -> Void] = []
    /// Reconnection after a loss (`keepConnected`): the first and the longest delay, in ms; nil: none.
    private var retryPolicy: (first: Int, maximum: Int)?
    /// The delay before the next attempt, in ms.
    private var retryDelay = 0
    /// The pending attempt (a libpulse time event on our main loop), if any.
    private var retryEvent: OpaquePointer?

    private struct WeakStream {
        weak var stream: PlaybackStream?
    }

    /// Prepares a connection; does not connect yet (call `connect()`).
    ///
    /// - Parameters:
    ///   - applicationName: `application.name` as the sound server shows it (e.g. in the volume control).
    ///   - properties: more PulseAudio property-list entries for the client (`pa_proplist` keys such as
    ///     `application.id`, `application.icon_name`, `application.version`); see `pulse/proplist.h`.
    public init(applicationName: String, properties: [String: String]) {
        self.applicationName = applicationName
        self.properties = properties
        // NULL: GLib's default main context, the one the daemon runs with g_main_loop_run.
        mainloop = pa_glib_mainloop_new(nil)
        Self.dispatchWithoutBlocking(mainloop, in: g_main_context_default())
    }

    /// Same, on a given `GMainContext` (tests drive a private one, away from anything else in the process).
    init(applicationName: String, properties: [String: String], mainContext: OpaquePointer?) {
        self.applicationName = applicationName
        self.properties = properties
        mainloop = pa_glib_mainloop_new(mainContext)
        Self.dispatchWithoutBlocking(mainloop, in: mainContext ?? g_main_context_default())
    }

    /// Lets GLib dispatch libpulse's main-loop source without blocking it (`g_source_set_can_recurse`).
    ///
    /// GLib (2.74, Debian 12) blocks a source that cannot recurse while dispatching it: it takes the source's
    /// file descriptors out of the poll set and puts them back afterwards, and each of those changes signals the
    /// context's wakeup eventfd. libpulse's source holds a few descriptors (the server's socket, the shared-memory
    /// ring buffer's eventfds), so every dispatch (the server asking for audio 25 times a second, the
    /// releases of the blocks written, timing replies) cost about three eventfd writes and an extra, empty
    /// main-loop iteration: some 70 iterations and 270 writes per second of reading. Recursion itself never happens here: nothing iterates the
    /// main context from inside a libpulse callback.
    ///
    /// `pa_glib_mainloop` is a `GSource` (libpulse-mainloop-glib makes it with `g_source_new` and its first
    /// member is the `GSource`; `pulse/glib-mainloop.c`); the source is left alone unless it is attached to
    /// the expected context, as such a source is.
    private static func dispatchWithoutBlocking(_ mainloop: OpaquePointer, in context: OpaquePointer?) {
        let source = UnsafeMutablePointer<GSource>(mainloop)
        guard let context, g_source_get_context(source) == context, g_source_get_id(source) != 0 else { return }
        g_source_set_can_recurse(source, 1)
    }

    deinit {
        cancelRetry()
        tearDownContext()
        pa_glib_mainloop_free(mainloop)
    }

    /// Connects now (like `connect()`), and from then on reconnects by itself whenever the connection fails
    /// or is lost: after `firstDelayMilliseconds`, then after twice as long each time up to
    /// `maximumDelayMilliseconds`, until the server answers (the delay starts again from the first one after
    /// each success). Between attempts nothing runs: one timer, no polling. `disconnect()` ends it.
    ///
    /// libpulse has no reconnection of its own for clients: a context whose connection is lost stays
    /// `PA_CONTEXT_FAILED`, and `PA_CONTEXT_NOFAIL` only waits for a server that autospawns or announces
    /// itself on D-Bus, never for one restarted on the same socket (PulseAudio's `pulse/context.h`), so every
    /// attempt here is a new `pa_context` (see `connect()`). Each attempt is reported through `onStateChange`
    /// (`.connecting`, then `.ready` or `.failed`).
    public func keepConnected(firstDelayMilliseconds: Int = 500, maximumDelayMilliseconds: Int = 5000) {
        let first = max(1, firstDelayMilliseconds)
        retryPolicy = (first, max(first, maximumDelayMilliseconds))
        retryDelay = first
        connect()
    }

    /// Whether an automatic reconnection attempt is scheduled (`keepConnected`). For tests and diagnostics.
    public var isWaitingToReconnect: Bool { retryEvent != nil }

    /// Connects to the default server (`$PULSE_SERVER`, then the client configuration, then the user's runtime
    /// socket), without autospawning a daemon (`PA_CONTEXT_NOAUTOSPAWN`). The outcome arrives through
    /// `onStateChange` (`.connecting`, then `.ready` or `.failed`).
    ///
    /// Does nothing while connecting or connected. After `.failed` or `.disconnected` it makes a new `pa_context`
    /// and tries again; streams created while not connected wait for that connection.
    public func connect() {
        switch state {
        case .connecting, .ready: return
        case .disconnected, .failed: break
        }
        cancelRetry()
        tearDownContext()
        generation += 1
        // Streams made while not connected belong to this attempt from now on.
        for stream in streams.compactMap(\.stream) where stream.generation == 0 {
            stream.generation = generation
        }

        let proplist = pa_proplist_new()
        defer { pa_proplist_free(proplist) }
        for (key, value) in properties { pa_proplist_sets(proplist, key, value) }
        pa_proplist_sets(proplist, PA_PROP_APPLICATION_NAME, applicationName)

        guard let api = pa_glib_mainloop_get_api(mainloop),
              let ctx = pa_context_new_with_proplist(api, applicationName, proplist) else {
            setState(.failed("Cannot create a sound server context"))
            return
        }
        context = ctx
        pa_context_set_state_callback(ctx, { _, userdata in
            guard let userdata else { return }
            Unmanaged<SoundServer>.fromOpaque(userdata).takeUnretainedValue().contextStateChanged()
        }, Unmanaged.passUnretained(self).toOpaque())

        setState(.connecting)
        guard context == ctx else { return }   // onStateChange disconnected again
        if pa_context_connect(ctx, nil, PA_CONTEXT_NOAUTOSPAWN, nil) < 0, context == ctx {
            connectionLost(reason: Self.errorText(ctx))
        }
    }

    /// Closes the connection at once. Streams on it stop immediately and report `onFailed`; `state` becomes
    /// `.disconnected` (reported through `onStateChange`). Does nothing when not connected.
    public func disconnect() {
        retryPolicy = nil
        cancelRetry()
        guard context != nil else {
            if case .failed = state { setState(.disconnected) }
            return
        }
        let lost = streamsOfCurrentConnection()
        for stream in lost { stream.abandon() }
        tearDownContext()
        setState(.disconnected)
        for stream in lost { stream.reportLoss("Disconnected from the sound server") }
    }

    // MARK: - Streams (internal)

    func register(_ stream: PlaybackStream) {
        streams.removeAll { $0.stream == nil }
        streams.append(WeakStream(stream: stream))
    }

    func unregister(_ stream: PlaybackStream) {
        streams.removeAll { $0.stream == nil || $0.stream === stream }
    }

    private func streamsOfCurrentConnection() -> [PlaybackStream] {
        streams.compactMap(\.stream).filter { $0.generation == generation }
    }

    // MARK: - Context callbacks

    private func contextStateChanged() {
        guard let ctx = context else { return }
        switch pa_context_get_state(ctx) {
        case PA_CONTEXT_READY:
            guard state != .ready else { return }
            if let retryPolicy { retryDelay = retryPolicy.first }
            setState(.ready)
            requestServerInfo()
            guard context == ctx else { return }
            // Streams created while connecting (or before connect) go to the server now.
            for stream in streamsOfCurrentConnection() where context == ctx {
                stream.serverReady()
            }
        case PA_CONTEXT_FAILED, PA_CONTEXT_TERMINATED:
            connectionLost(reason: Self.errorText(ctx))
        default:
            break
        }
    }

    private func connectionLost(reason: String) {
        // Streams first go quiet (no callback from libpulse reaches them any more), then the owner hears of the
        // loss, then each stream reports it.
        let lost = streamsOfCurrentConnection()
        for stream in lost { stream.abandon() }
        // The context object stays with libpulse until its state callback returns; we only drop our reference.
        tearDownContext()
        scheduleRetry()
        setState(.failed(reason))
        for stream in lost { stream.reportLoss(reason) }
    }

    // MARK: - Reconnection

    /// Arms one attempt after the current delay and doubles the delay for the next (with `keepConnected`).
    private func scheduleRetry() {
        guard let retryPolicy, retryEvent == nil, let api = pa_glib_mainloop_get_api(mainloop),
              let timeNew = api.pointee.time_new else { return }
        var when = timeval()
        pa_gettimeofday(&when)
        pa_timeval_add(&when, pa_usec_t(retryDelay) * 1000)
        retryDelay = min(retryDelay * 2, retryPolicy.maximum)
        retryEvent = timeNew(api, &when, { _, _, _, userdata in
            guard let userdata else { return }
            let server = Unmanaged<SoundServer>.fromOpaque(userdata).takeUnretainedValue()
            server.cancelRetry()
            server.connect()
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    private func cancelRetry() {
        guard let event = retryEvent else { return }
        retryEvent = nil
        if let api = pa_glib_mainloop_get_api(mainloop), let timeFree = api.pointee.time_free { timeFree(event) }
    }

    private func requestServerInfo() {
        guard let ctx = context else { return }
        let op = pa_context_get_server_info(ctx, { _, info, userdata in
            guard let userdata, let info else { return }
            let server = Unmanaged<SoundServer>.fromOpaque(userdata).takeUnretainedValue()
            let name = info.pointee.server_name.map { String(cString: $0) } ?? "unknown"
            let version = info.pointee.server_version.map { String(cString: $0) } ?? "?"
            server.serverDescription = "\(name) \(version)"
        }, Unmanaged.passUnretained(self).toOpaque())
        // Cancelled by libpulse when the context goes away, so the callback never outlives us.
        if let op { pa_operation_unref(op) }
    }

    private func setState(_ newState: State) {
        guard newState != state else { return }
        state = newState
        onStateChange?(newState)
        for observer in stateObservers { observer(newState) }
    }

    /// Adds an observer of `state`, called on every change after `onStateChange`.
    func addStateObserver(_ observer: @escaping (State) -> Void) {
        stateObservers.append(observer)
    }

    /// Drops the context: no callback from it after this (pending operations are cancelled by libpulse).
    private func tearDownContext() {
        guard let ctx = context else { return }
        context = nil
        serverDescription = nil
        pa_context_set_state_callback(ctx, nil, nil)
        pa_context_disconnect(ctx)
        pa_context_unref(ctx)
    }

    static func errorText(_ ctx: OpaquePointer) -> String {
        let code = pa_context_errno(ctx)
        guard code != 0, let text = pa_strerror(code) else { return "Connection terminated" }
        return String(cString: text)
    }
}
