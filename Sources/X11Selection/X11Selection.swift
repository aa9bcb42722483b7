@preconcurrency import Glibc
import CXCB
import SelectionCore

/// Reads the primary selection or the clipboard from the X server named by `DISPLAY`, through libxcb, as the
/// ICCCM (§2.4–2.7) describes: the owner is asked for TARGETS first (text is told from other data and from
/// nothing), then for the chosen text target (UTF8_STRING, else STRING), into a property of a window of our
/// own; an owner that answers with INCR hands the text over in chunks (§2.7.2). Every step waits at most
/// `SelectionLimits.stepTimeoutMilliseconds`, the whole transfer `SelectionLimits.transferTimeoutMilliseconds`,
/// and at most `SelectionLimits.maximumBytes` are taken.
public enum X11Selection {
    /// The text of `kind`, or why there is none (`SelectionFailure.cannotConnect` when no X server answers).
    public static func read(_ kind: SelectionKind) -> Result<String, SelectionFailure> {
        guard let reader = XReader() else { return .failure(.cannotConnect("no X server answers at DISPLAY")) }
        defer { reader.close() }
        return reader.read(kind)
    }
}

/// One connection to the X server and an unmapped window whose property receives the selection.
final class XReader {
    private let connection: OpaquePointer
    private let window: xcb_window_t
    private var atoms: [String: xcb_atom_t] = [:]
    /// When the whole transfer must be over (`SelectionLimits.transferTimeoutMilliseconds` from the start).
    private let deadline = XReader.milliseconds() + Int64(SelectionLimits.transferTimeoutMilliseconds)

    /// Connects to `DISPLAY` and makes the receiving window; nil when the server cannot be reached.
    init?() {
        var screenNumber: Int32 = 0
        guard let c = xcb_connect(nil, &screenNumber) else { return nil }
        guard xcb_connection_has_error(c) == 0 else { xcb_disconnect(c); return nil }
        var roots = xcb_setup_roots_iterator(xcb_get_setup(c))
        for _ in 0..<max(0, screenNumber) where roots.rem > 1 { xcb_screen_next(&roots) }
        guard let screen = roots.data else { xcb_disconnect(c); return nil }
        connection = c
        window = xcb_generate_id(c)
        // Property changes on our window pace an incremental transfer.
        var mask = [XCB_EVENT_MASK_PROPERTY_CHANGE.rawValue]
        xcb_create_window(c, 0, window, screen.pointee.root, 0, 0, 1, 1, 0, UInt16(XCB_WINDOW_CLASS_INPUT_ONLY.rawValue),
                          0, XCB_CW_EVENT_MASK.rawValue, &mask)
    }

    func close() { xcb_disconnect(connection) }

    /// Learns the atoms named `names` (made if the server does not know them yet) in one round trip.
    func intern(_ names: [String]) {
        let cookies = names.map { xcb_intern_atom(connection, 0, UInt16($0.utf8.count), $0) }
        for (name, cookie) in zip(names, cookies) {
            guard let reply = xcb_intern_atom_reply(connection, cookie, nil) else { continue }
            atoms[name] = reply.pointee.atom
            free(reply)
        }
    }

    /// The atom named `name`; 0 when the server does not answer.
    func atom(_ name: String) -> xcb_atom_t {
        if atoms[name] == nil { intern([name]) }
        return atoms[name] ?? 0
    }

    /// The names of `list`, in one round trip; "" for an atom the server does not know.
    func names(of list: [xcb_atom_t]) -> [String] {
        let cookies = list.map { xcb_get_atom_name(connection, $0) }
        return cookies.map { cookie in
            guard let reply = xcb_get_atom_name_reply(connection, cookie, nil) else { return "" }
            defer { free(reply) }
            let length = Int(xcb_get_atom_name_name_length(reply))
            guard length > 0, let start = xcb_get_atom_name_name(reply) else { return "" }
            return start.withMemoryRebound(to: UInt8.self, capacity: length) {
                String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
            }
        }
    }

    func read(_ kind: SelectionKind) -> Result<String, SelectionFailure> {
        intern([kind.x11Atom, "TARGETS", "LECTOR_SELECTION", "INCR"] + TargetChooser.x11Preferred.map(\.0))
        let selection = atom(kind.x11Atom)
        guard let ownerReply = xcb_get_selection_owner_reply(connection, xcb_get_selection_owner(connection, selection), nil) else {
            return .failure(.failed("the X server did not answer"))
        }
        let owner = ownerReply.pointee.owner
        free(ownerReply)
        if owner == 0 { return .failure(.empty) }

        // What the owner offers; nil when it does not list its targets.
        var offered: [String]?
        switch convert(selection, to: atom("TARGETS")) {
        case .failure(let failure): return .failure(failure)
        case .success(let reply):
            if let reply, reply.type == 4 /* ATOM */ || reply.type == atom("TARGETS") {
                let values = reply.bytes.withUnsafeBytes { Array($0.bindMemory(to: UInt32.self)) }
                offered = names(of: values)
            }
        }
        var choice = TargetChooser.choose(offered: offered, preferred: TargetChooser.x11Preferred)
        while case .read(let target, var encoding) = choice {
            switch convert(selection, to: atom(target)) {
            case .failure(let failure): return .failure(failure)
            case .success(nil):
                // Refused: an owner that did not list its targets may still give STRING.
                if offered == nil && target == "UTF8_STRING" {
                    choice = .read("STRING", .latin1)
                    continue
                }
                return .failure(offered == nil ? .noText([]) : .empty)
            case .success(let reply?):
                if reply.type == atom("STRING") { encoding = .latin1 }
                guard let text = TargetChooser.decode(reply.bytes, encoding) else { return .failure(.empty) }
                return .success(text)
            }
        }
        if case .noText(let types) = choice { return .failure(.noText(types)) }
        return .failure(.empty)
    }

    /// A converted selection: the property's type and its bytes.
    struct Property {
        var type: xcb_atom_t
        var bytes: [UInt8]
    }

    /// Asks the owner to convert `selection` to `target` into our window's property, and waits for it (and
    /// for every chunk of an INCR transfer). nil when the owner refused.
    func convert(_ selection: xcb_atom_t, to target: xcb_atom_t) -> Result<Property?, SelectionFailure> {
        let property = atom("LECTOR_SELECTION")
        xcb_delete_property(connection, window, property)
        xcb_convert_selection(connection, window, selection, target, property, 0 /* CurrentTime */)
        xcb_flush(connection)
        let notified = waitForEvent { type, event in
            guard type == XCB_SELECTION_NOTIFY else { return nil }
            return event.withMemoryRebound(to: xcb_selection_notify_event_t.self, capacity: 1) { $0.pointee.property }
        }
        guard case .success(let answer) = notified else { return notified.map { _ -> Property? in nil } }
        if answer == 0 { return .success(nil) }
        var buffer = TransferBuffer()
        let first = readProperty(property, into: &buffer)
        guard case .success(let type) = first else { return first.map { _ -> Property? in nil } }
        if type != atom("INCR") { return .success(Property(type: type, bytes: buffer.bytes)) }
        // Incremental: deleting the property asks for each chunk; an empty chunk ends the transfer.
        buffer = TransferBuffer()
        var chunkType: xcb_atom_t = 0
        while true {
            let changed = waitForEvent { type, event in
                guard type == XCB_PROPERTY_NOTIFY else { return nil }
                return event.withMemoryRebound(to: xcb_property_notify_event_t.self, capacity: 1) {
                    $0.pointee.atom == property && $0.pointee.state == UInt8(XCB_PROPERTY_NEW_VALUE.rawValue) ? 1 : nil
                }
            }
            if case .failure(let failure) = changed { return .failure(failure) }
            let before = buffer.bytes.count
            switch readProperty(property, into: &buffer) {
            case .failure(let failure): return .failure(failure)
            case .success(let type): if type != 0 { chunkType = type }
            }
            if buffer.bytes.count == before { return .success(Property(type: chunkType, bytes: buffer.bytes)) }
        }
    }

    /// Reads our window's `property` whole into `buffer` and deletes it; its type (0 when there is none).
    /// Fails with `.tooBig` past the buffer's limit.
    func readProperty(_ property: xcb_atom_t, into buffer: inout TransferBuffer) -> Result<xcb_atom_t, SelectionFailure> {
        defer {
            xcb_delete_property(connection, window, property)
            xcb_flush(connection)
        }
        var offset: UInt32 = 0, type: xcb_atom_t = 0
        while true {
            let cookie = xcb_get_property(connection, 0, window, property, 0 /* AnyPropertyType */, offset, 1 << 18)
            guard let reply = xcb_get_property_reply(connection, cookie, nil) else { return .failure(.failed("the X server did not answer")) }
            defer { free(reply) }
            type = reply.pointee.type
            let length = Int(xcb_get_property_value_length(reply))
            if length > 0, let value = xcb_get_property_value(reply) {
                let chunk = UnsafeRawBufferPointer(start: value, count: length)
                guard buffer.append(chunk) else { return .failure(.tooBig) }
            }
            if reply.pointee.bytes_after == 0 { return .success(type) }
            offset += UInt32(length / 4)
        }
    }

    /// Waits for the first event that `match` accepts (given its type without the "sent" bit, and the event),
    /// discarding the others; fails after `SelectionLimits.stepTimeoutMilliseconds`, past the transfer's
    /// deadline, or when the connection breaks.
    func waitForEvent(_ match: (Int32, UnsafeMutablePointer<xcb_generic_event_t>) -> UInt32?) -> Result<UInt32, SelectionFailure> {
        let fd = xcb_get_file_descriptor(connection)
        var left = Int64(SelectionLimits.stepTimeoutMilliseconds)
        let start = Self.milliseconds()
        while true {
            while let event = xcb_poll_for_event(connection) {
                defer { free(event) }
                if let value = match(Int32(event.pointee.response_type & 0x7f), event) { return .success(value) }
            }
            if xcb_connection_has_error(connection) != 0 { return .failure(.failed("the X server closed the connection")) }
            let now = Self.milliseconds()
            if deadline - now <= 0 { return .failure(.tooSlow) }
            left = min(Int64(SelectionLimits.stepTimeoutMilliseconds) - (now - start), deadline - now)
            if left <= 0 { return .failure(.timedOut) }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&pfd, 1, Int32(left))
        }
    }

    /// A monotonic clock, milliseconds.
    static func milliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}
