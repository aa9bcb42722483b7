@preconcurrency import Glibc
import CWaylandDataControl
import SelectionCore

/// Reads the clipboard or the primary selection from the Wayland compositor named by `WAYLAND_DISPLAY`, as a
/// background client through the wlroots data-control protocol (`zwlr_data_control_manager_v1`; version 2
/// for the primary selection), which wlroots compositors (sway) and KWin offer: the offer's MIME types
/// first, then text/plain;charset=utf-8 (else text/plain, UTF8_STRING) through a pipe. The compositor
/// must answer within `SelectionLimits.stepTimeoutMilliseconds` per round trip, the owner within the same
/// time for each read from the pipe, and at most `SelectionLimits.maximumBytes` are taken.
public enum WaylandSelection {
    /// The text of `kind`, or why there is none: `.cannotConnect` without a compositor, `.noDataControl`
    /// when it does not offer the protocol (GNOME's Mutter).
    public static func read(_ kind: SelectionKind) -> Result<String, SelectionFailure> {
        guard let display = wl_display_connect(nil) else {
            return .failure(.cannotConnect("no Wayland compositor answers at WAYLAND_DISPLAY"))
        }
        defer { wl_display_disconnect(display) }
        let session = DataControlSession(display: display)
        return session.read(kind)
    }
}

/// The globals, offers and selections one connection has learnt, filled in by the listeners.
final class DataControlSession {
    let display: OpaquePointer
    var manager: (name: UInt32, version: UInt32)?
    var seat: UInt32?
    /// Every offer introduced so far, and its MIME types in the order offered.
    var offers: [OpaquePointer: [String]] = [:]
    var clipboard: OpaquePointer?
    var primary: OpaquePointer?
    /// Whether a `primary_selection` event came: a compositor with the primary selection sends one on binding.
    var primaryAnnounced = false
    /// When the whole transfer must be over (`SelectionLimits.transferTimeoutMilliseconds` from the start).
    let transferDeadline = DataControlSession.milliseconds() + Int64(SelectionLimits.transferTimeoutMilliseconds)

    // libwayland keeps the listeners' addresses: they live as long as the session.
    let registryListener = UnsafeMutablePointer<wl_registry_listener>.allocate(capacity: 1)
    let deviceListener = UnsafeMutablePointer<zwlr_data_control_device_v1_listener>.allocate(capacity: 1)
    let offerListener = UnsafeMutablePointer<zwlr_data_control_offer_v1_listener>.allocate(capacity: 1)
    let callbackListener = UnsafeMutablePointer<wl_callback_listener>.allocate(capacity: 1)

    init(display: OpaquePointer) {
        self.display = display
        registryListener.initialize(to: Self.registryEvents)
        deviceListener.initialize(to: Self.deviceEvents)
        offerListener.initialize(to: Self.offerEvents)
        callbackListener.initialize(to: wl_callback_listener(done: { data, _, _ in
            data?.assumingMemoryBound(to: Bool.self).pointee = true
        }))
    }

    deinit {
        registryListener.deallocate()
        deviceListener.deallocate()
        offerListener.deallocate()
        callbackListener.deallocate()
    }

    /// Connects the registry and the data device, then reads `kind`.
    func read(_ kind: SelectionKind) -> Result<String, SelectionFailure> {
        let me = Unmanaged.passUnretained(self).toOpaque()
        guard let registry = wl_display_get_registry(display) else { return .failure(.failed("the compositor did not answer")) }
        defer { wl_registry_destroy(registry) }
        wl_registry_add_listener(registry, registryListener, me)
        guard roundtrip() else { return .failure(.failed("the Wayland compositor did not answer")) }
        guard let manager else { return .failure(.noDataControl) }
        if kind == .primary && manager.version < 2 { return .failure(.noPrimary) }
        guard let seat else { return .failure(.empty) }

        guard let managerProxy = wl_registry_bind(registry, manager.name, lector_data_control_manager_interface(), min(manager.version, 2)),
              let seatProxy = wl_registry_bind(registry, seat, lector_seat_interface(), 1) else {
            return .failure(.failed("the compositor refused the data-control protocol"))
        }
        defer {
            for offer in offers.keys { zwlr_data_control_offer_v1_destroy(offer) }
            zwlr_data_control_manager_v1_destroy(OpaquePointer(managerProxy))
            wl_proxy_destroy(OpaquePointer(seatProxy))
        }
        guard let device = zwlr_data_control_manager_v1_get_data_device(OpaquePointer(managerProxy), OpaquePointer(seatProxy)) else {
            return .failure(.failed("the compositor refused a data device"))
        }
        defer { zwlr_data_control_device_v1_destroy(device) }
        zwlr_data_control_device_v1_add_listener(device, deviceListener, me)
        // The compositor sends the current selections when the device is made.
        guard roundtrip() else { return .failure(.failed("the Wayland compositor did not answer")) }
        if kind == .primary && !primaryAnnounced { return .failure(.noPrimary) }
        guard let offer = kind == .primary ? primary : clipboard else { return .failure(.empty) }
        let choice = TargetChooser.choose(offered: offers[offer] ?? [], preferred: TargetChooser.waylandPreferred)
        switch choice {
        case .empty: return .failure(.empty)
        case .noText(let types): return .failure(.noText(types))
        case .read(let mime, let encoding):
            return receive(offer, mime).flatMap {
                TargetChooser.decode($0, encoding).map { .success($0) } ?? .failure(.empty)
            }
        }
    }

    /// The offer's data as `mime`, through a pipe the owner writes and closes.
    func receive(_ offer: OpaquePointer, _ mime: String) -> Result<[UInt8], SelectionFailure> {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return .failure(.failed("no pipe")) }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        zwlr_data_control_offer_v1_receive(offer, mime, fds[1])
        Glibc.close(fds[1])
        guard wl_display_flush(display) >= 0 else { Glibc.close(fds[0]); return .failure(.failed("the compositor closed the connection")) }
        defer { Glibc.close(fds[0]) }
        var buffer = TransferBuffer()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            var pfd = pollfd(fd: fds[0], events: Int16(POLLIN), revents: 0)
            let left = transferDeadline - Self.milliseconds()
            if left <= 0 { return .failure(.tooSlow) }
            let ready = poll(&pfd, 1, Int32(min(Int64(SelectionLimits.stepTimeoutMilliseconds), left)))
            if ready < 0 && errno == EINTR { continue }
            if ready == 0 { return .failure(transferDeadline <= Self.milliseconds() ? .tooSlow : .timedOut) }
            let n = Glibc.read(fds[0], &chunk, chunk.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return .success(buffer.bytes) }
            guard buffer.append(chunk[0..<n]) else { return .failure(.tooBig) }
        }
    }

    /// One round trip with the compositor, waiting at most `SelectionLimits.stepTimeoutMilliseconds`; false
    /// when the connection broke or the compositor did not answer in time.
    func roundtrip() -> Bool {
        guard let callback = wl_display_sync(display) else { return false }
        let flag = UnsafeMutablePointer<Bool>.allocate(capacity: 1)
        flag.initialize(to: false)
        defer { flag.deallocate() }
        wl_callback_add_listener(callback, callbackListener, flag)
        defer { wl_callback_destroy(callback) }
        let fd = wl_display_get_fd(display)
        let deadline = min(Self.milliseconds() + Int64(SelectionLimits.stepTimeoutMilliseconds), transferDeadline)
        while !flag.pointee {
            while wl_display_prepare_read(display) != 0 {
                if wl_display_dispatch_pending(display) < 0 { return false }
            }
            if flag.pointee { wl_display_cancel_read(display); break }
            if wl_display_flush(display) < 0 { wl_display_cancel_read(display); return false }
            let left = deadline - Self.milliseconds()
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if left <= 0 || poll(&pfd, 1, Int32(left)) <= 0 { wl_display_cancel_read(display); return false }
            if wl_display_read_events(display) < 0 { return false }
            if wl_display_dispatch_pending(display) < 0 { return false }
        }
        return true
    }

    /// The registry's events: the data-control manager and the first seat are remembered.
    static var registryEvents: wl_registry_listener { wl_registry_listener(global: { data, _, name, interface, version in
        guard let data, let interface else { return }
        let session = Unmanaged<DataControlSession>.fromOpaque(data).takeUnretainedValue()
        switch String(cString: interface) {
        case "zwlr_data_control_manager_v1": session.manager = (name, version)
        case "wl_seat": if session.seat == nil { session.seat = name }
        default: break
        }
    }, global_remove: { _, _, _ in }) }

    /// The data device's events: offers are recorded with their MIME types, the selections remembered.
    static var deviceEvents: zwlr_data_control_device_v1_listener { zwlr_data_control_device_v1_listener(
        data_offer: { data, _, offer in
            guard let data, let offer else { return }
            let session = Unmanaged<DataControlSession>.fromOpaque(data).takeUnretainedValue()
            session.offers[offer] = []
            zwlr_data_control_offer_v1_add_listener(offer, session.offerListener, data)
        },
        selection: { data, _, offer in
            guard let data else { return }
            Unmanaged<DataControlSession>.fromOpaque(data).takeUnretainedValue().clipboard = offer
        },
        finished: { _, _ in },
        primary_selection: { data, _, offer in
            guard let data else { return }
            let session = Unmanaged<DataControlSession>.fromOpaque(data).takeUnretainedValue()
            session.primary = offer
            session.primaryAnnounced = true
        }) }

    /// An offer's events: each offered MIME type.
    static var offerEvents: zwlr_data_control_offer_v1_listener { zwlr_data_control_offer_v1_listener(offer: { data, offer, mime in
        guard let data, let offer, let mime else { return }
        Unmanaged<DataControlSession>.fromOpaque(data).takeUnretainedValue().offers[offer, default: []].append(String(cString: mime))
    }) }

    /// A monotonic clock, milliseconds.
    static func milliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}
