import GLibKit

/// What the bus knows of a caller's process (`org.freedesktop.DBus.GetConnectionCredentials`, D-Bus
/// Specification, "Message Bus Messages"): recorded by the bus when the caller connected, from the socket's
/// peer credentials, so the caller cannot forge them.
struct CallerCredentials: Equatable {
    /// `UnixUserID`: the caller's user id.
    var userID: UInt32?
    /// `ProcessID`: the caller's process id, in the bus's PID namespace.
    var processID: UInt32?
    /// `LinuxSecurityLabel`: the caller's LSM label as the kernel reports it (`SO_PEERSEC`), e.g. AppArmor's
    /// "snap.foliate.foliate (enforce)" or "unconfined", SELinux's "unconfined_u:unconfined_r:unconfined_t:s0";
    /// without its trailing NUL. Nil when no LSM labels the socket.
    var securityLabel: String?

    /// The credentials in a `GetConnectionCredentials` answer (`a{sv}`); keys that are missing or of another
    /// type are left nil (the specification lets a bus omit any key).
    init(_ dictionary: [String: Variant]) {
        userID = dictionary["UnixUserID"]?.int64.flatMap { UInt32(exactly: $0) }
        processID = dictionary["ProcessID"]?.int64.flatMap { UInt32(exactly: $0) }
        if case .array(elementType: "y", let items)? = dictionary["LinuxSecurityLabel"]?.unboxed {
            securityLabel = Self.label(items.compactMap { if case .byte(let b) = $0 { b } else { nil } })
        }
    }

    init(userID: UInt32?, processID: UInt32?, securityLabel: String?) {
        self.userID = userID
        self.processID = processID
        self.securityLabel = securityLabel
    }

    /// A label given as bytes (`ay`, NUL-terminated by the bus, sometimes ended by a line feed when read from
    /// `/proc/PID/attr/current`): the text before the first NUL, without trailing white space; nil when empty.
    static func label(_ bytes: [UInt8]) -> String? {
        let text = String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        let trimmed = String(text.reversed().drop { $0.isWhitespace }.reversed())
        return trimmed.isEmpty ? nil : trimmed
    }
}

/// Who a caller is, as far as opening files on its behalf goes (see `OpenPolicy`).
enum Caller: Equatable {
    /// A process of the daemon's user, no more confined than the daemon.
    case user
    /// Another user's process (a session bus normally admits only its user).
    case otherUser(UInt32)
    /// A Flatpak app: its root holds `/.flatpak-info` (how xdg-desktop-portal recognises one).
    case flatpak
    /// A strictly confined snap: an AppArmor label `snap.NAME.APP`; the snap's name.
    case snap(String)
    /// A process confined by another AppArmor profile than the daemon's (in enforce mode); the profile.
    case confined(String)
    /// Credentials that could not be established (the bus gave none, the process is gone, `/proc/PID/root`
    /// cannot be inspected); why.
    case unidentified(String)

    /// How a refusal names the caller, e.g. "a Flatpak app", "the snap foliate".
    var description: String {
        switch self {
        case .user: return "a process of this user"
        case .otherUser(let uid): return "a process of user \(uid)"
        case .flatpak: return "a Flatpak app"
        case .snap(let name): return "the snap \(name)"
        case .confined(let profile): return "a process confined by AppArmor profile \(profile)"
        case .unidentified(let why): return "a caller that cannot be identified (\(why))"
        }
    }

    /// What a process's root tells of it: the sandbox marker found or not, or the root could not be looked at.
    enum RootFacts: Equatable {
        case flatpakInfo
        case plain
        case unreadable(String)
    }

    /// Classifies a caller from its credentials.
    /// - Parameters:
    ///   - credentials: the bus's answer for the caller.
    ///   - ownUserID: the daemon's user id.
    ///   - ownLabel: the daemon's own LSM label (nil: none); a caller with the same label is no more confined
    ///     than the daemon (a session running wholly under one profile is not a sandbox).
    ///   - root: inspects the root of process `pid` (`/proc/PID/root`) for the Flatpak marker; called only
    ///     for a caller of the daemon's user whose label does not already say it is confined.
    static func classify(_ credentials: CallerCredentials, ownUserID: UInt32, ownLabel: String?,
                         root: (UInt32) -> RootFacts) -> Caller {
        guard let uid = credentials.userID else { return .unidentified("the bus gave no user id") }
        guard uid == ownUserID else { return .otherUser(uid) }
        if let label = credentials.securityLabel, label != ownLabel, let profile = appArmorProfile(label) {
            if profile.hasPrefix("snap.") {
                let name = profile.dropFirst(5).split(separator: ".").first.map(String.init) ?? profile
                return .snap(name)
            }
            if profile != "unconfined" && !label.hasSuffix("(unconfined)") && !label.hasSuffix("(complain)") {
                return .confined(profile)
            }
        }
        guard let pid = credentials.processID else { return .unidentified("the bus gave no process id") }
        switch root(pid) {
        case .flatpakInfo: return .flatpak
        case .plain: return .user
        case .unreadable(let why): return .unidentified(why)
        }
    }

    /// The AppArmor profile a label names ("NAME (MODE)" or "unconfined"), or nil for a label of another LSM
    /// (SELinux and Smack labels contain ':' or no mode, and are not judged).
    static func appArmorProfile(_ label: String) -> String? {
        if label == "unconfined" { return label }
        guard label.hasSuffix(")"), let open = label.lastIndex(of: "(") else { return nil }
        let profile = label[..<open].trimmingSuffix(while: \.isWhitespace)
        return profile.isEmpty ? nil : String(profile)
    }
}

extension Substring {
    /// `self` without the trailing characters that match `predicate`.
    fileprivate func trimmingSuffix(while predicate: (Character) -> Bool) -> Substring {
        var end = endIndex
        while end > startIndex, predicate(self[index(before: end)]) { end = index(before: end) }
        return self[..<end]
    }
}
