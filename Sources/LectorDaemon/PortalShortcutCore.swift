/// The steps of binding "Read selection" through the XDG GlobalShortcuts portal (xdg-desktop-portal,
/// `org.freedesktop.portal.GlobalShortcuts` version 1: CreateSession, BindShortcuts, the Activated signal),
/// as a pure state machine: inputs (replies, signals) in, actions out. `PortalShortcut` drives it on the
/// daemon's main loop.
///
/// Each portal call answers at once with a request object, and later with a Response signal on it
/// (xdg-desktop-portal, org.freedesktop.portal.Request). The request's path is known before the call
/// (`/org/freedesktop/portal/desktop/request/SENDER/TOKEN`, SENDER the caller's unique name without ":" and
/// with "." as "_"), so a Response that comes before the call's reply is not missed; a portal that answers
/// with another path is followed to that one.
///
/// The session's token is fixed (`sessionToken`): xdg-desktop-portal-kde 5.27 names the kglobalaccel
/// component of the session after it (for an application without an app id), so the key a user chose in
/// System Settings is found again by the next session. KDE 5.27 also registers the shortcuts given in
/// CreateSession's options (`shortcuts`), and its BindShortcuts only opens System Settings: the shortcuts go
/// in both calls.
struct PortalShortcutCore: Equatable {
    /// Where binding stands.
    enum Phase: Equatable {
        /// Not started.
        case idle
        /// CreateSession sent; waiting for its Response.
        case creating
        /// BindShortcuts sent on the session; waiting for its Response.
        case binding
        /// The shortcut is bound: Activated signals of the session read the selection.
        case bound
        /// The portal refused or is missing; nothing more happens.
        case failed
    }

    /// What the driver does.
    enum Action: Equatable {
        /// Calls CreateSession with `handle_token` and `session_handle_token` (and the shortcuts).
        case createSession(handleToken: String, sessionToken: String)
        /// Calls BindShortcuts on `session` with `handle_token`.
        case bindShortcuts(session: String, handleToken: String)
        /// Runs `lector read --selection`.
        case readSelection
        /// Writes one line to the daemon's log.
        case log(String)
    }

    /// The token of the portal session, hence of its kglobalaccel component on Plasma.
    static let sessionToken = "Lector"
    /// The shortcut's id in the session.
    static let shortcutID = "read-selection"
    /// The shortcut's description, shown by the desktop.
    static let description = "Read selection (Lector)"
    /// The key proposed to the desktop (XDG shortcuts syntax, xdg-specs "shortcuts"); the user's choice wins.
    static let preferredTrigger = "LOGO+ALT+r"

    private(set) var phase = Phase.idle
    /// The path of the request whose Response is awaited.
    private(set) var expectedRequest: String?
    /// The session's object path, once created.
    private(set) var session: String?
    /// The caller's unique name as it appears in portal object paths.
    let sender: String
    private var requests = 0

    /// `uniqueName`: the daemon's unique bus name (":1.42").
    init(uniqueName: String) {
        sender = String(uniqueName.drop { $0 == ":" }).replacing(".", with: "_")
    }

    private mutating func nextToken() -> String {
        requests += 1
        return "lector\(requests)"
    }

    private func requestPath(_ token: String) -> String {
        "/org/freedesktop/portal/desktop/request/\(sender)/\(token)"
    }

    /// Starts: creates the session.
    mutating func start() -> [Action] {
        guard phase == .idle else { return [] }
        let token = nextToken()
        phase = .creating
        expectedRequest = requestPath(token)
        return [.createSession(handleToken: token, sessionToken: Self.sessionToken)]
    }

    /// A call's reply: the request object the portal made. A path other than the expected one is followed.
    mutating func requestMade(_ path: String) {
        guard phase == .creating || phase == .binding else { return }
        expectedRequest = path
    }

    /// A call failed at once (no portal, no GlobalShortcuts interface, an error).
    mutating func callFailed(_ message: String) -> [Action] {
        guard phase == .creating || phase == .binding else { return [] }
        phase = .failed
        expectedRequest = nil
        return [.log("the GlobalShortcuts portal is not available (\(message)); no shortcut through it")]
    }

    /// A Response signal on `path`: `code` 0 success, 1 cancelled by the user, 2 other;
    /// `sessionHandle` the `session_handle` result of CreateSession, if any.
    mutating func response(path: String, code: UInt32, sessionHandle: String?) -> [Action] {
        guard path == expectedRequest else { return [] }
        expectedRequest = nil
        guard code == 0 else {
            let what = phase == .creating ? "CreateSession" : "BindShortcuts"
            phase = .failed
            return [.log("the GlobalShortcuts portal answered \(what) with \(code == 1 ? "cancelled" : "failure"); no shortcut through it")]
        }
        switch phase {
        case .creating:
            guard let sessionHandle, !sessionHandle.isEmpty else {
                phase = .failed
                return [.log("the GlobalShortcuts portal made no session; no shortcut through it")]
            }
            session = sessionHandle
            phase = .binding
            let token = nextToken()
            expectedRequest = requestPath(token)
            return [.bindShortcuts(session: sessionHandle, handleToken: token)]
        case .binding:
            phase = .bound
            return [.log("\"\(Self.description)\" is bound through the GlobalShortcuts portal")]
        default:
            return []
        }
    }

    /// An Activated signal: reads the selection when it is this session's shortcut.
    func activated(session path: String, shortcut: String) -> [Action] {
        guard phase == .bound || phase == .binding, path == session, shortcut == Self.shortcutID else { return [] }
        return [.readSelection]
    }

    /// The session was closed by the portal (Session.Closed): the shortcut is gone.
    mutating func closed(session path: String) -> [Action] {
        guard path == session, phase != .failed else { return [] }
        phase = .failed
        session = nil
        return [.log("the GlobalShortcuts portal closed Lector's session; the shortcut is gone until the daemon starts again")]
    }
}
