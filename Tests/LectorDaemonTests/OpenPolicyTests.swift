@preconcurrency import Glibc
import GLibKit
import Testing
@testable import LectorDaemon

/// MPRIS OpenUri's policy (`OpenPolicy`) and how callers are told apart (`CallerCredentials`, `Caller`): the
/// sandboxed branches, which no end-to-end test can reach without Flatpak or snapd, are covered here.
@Suite struct OpenPolicyTests {
    static let uid: UInt32 = 1000

    /// A `GetConnectionCredentials` answer as the bus sends it (`a{sv}`, the label NUL-terminated).
    static func answer(uid: UInt32? = uid, pid: UInt32? = 4242, label: String? = nil) -> [String: Variant] {
        var d: [String: Variant] = [:]
        if let uid { d["UnixUserID"] = .variant(.uint32(uid)) }
        if let pid { d["ProcessID"] = .variant(.uint32(pid)) }
        if let label {
            d["LinuxSecurityLabel"] = .variant(.array(elementType: "y", (Array(label.utf8) + [0]).map { .byte($0) }))
        }
        d["UnixGroupIDs"] = .variant(.array(elementType: "u", [.uint32(100)]))
        return d
    }

    static func classify(_ d: [String: Variant], ownLabel: String? = nil,
                         root: Caller.RootFacts = .plain) -> Caller {
        Caller.classify(CallerCredentials(d), ownUserID: uid, ownLabel: ownLabel) { _ in root }
    }

    @Test("Credentials are parsed from the bus's answer; missing or odd keys stay nil")
    func parsesCredentials() {
        let c = CallerCredentials(Self.answer(label: "snap.foliate.foliate (enforce)"))
        #expect(c == CallerCredentials(userID: 1000, processID: 4242, securityLabel: "snap.foliate.foliate (enforce)"))
        #expect(CallerCredentials([:]) == CallerCredentials(userID: nil, processID: nil, securityLabel: nil))
        #expect(CallerCredentials(["UnixUserID": .variant(.string("1000"))]).userID == nil)
        #expect(CallerCredentials.label(Array("unconfined\n".utf8)) == "unconfined")
        #expect(CallerCredentials.label([0]) == nil)
    }

    @Test("A plain process of the user may name files; a Flatpak app (its root holds .flatpak-info) may not")
    func userAndFlatpak() {
        #expect(Self.classify(Self.answer()) == .user)
        #expect(Self.classify(Self.answer(label: "unconfined")) == .user)
        #expect(Self.classify(Self.answer(), root: .flatpakInfo) == .flatpak)
        #expect(OpenPolicy.decide(caller: .user) == .allowed)
        guard case .refused(let why) = OpenPolicy.decide(caller: .flatpak) else {
            Issue.record("a Flatpak app may name files")
            return
        }
        #expect(why.contains("a Flatpak app") && why.contains("SpeakFile") && !why.contains("\n"))
    }

    @Test("Snaps and other AppArmor profiles are confined, unless the daemon runs under the same label")
    func appArmor() {
        #expect(Self.classify(Self.answer(label: "snap.foliate.foliate (enforce)")) == .snap("foliate"))
        #expect(Self.classify(Self.answer(label: "snap.foliate.foliate (complain)")) == .snap("foliate"))
        #expect(Self.classify(Self.answer(label: "firefox (enforce)")) == .confined("firefox"))
        #expect(Self.classify(Self.answer(label: "firefox (complain)")) == .user)
        #expect(Self.classify(Self.answer(label: "docker-default (enforce)"), ownLabel: "docker-default (enforce)") == .user)
        // SELinux labels are not judged; the Flatpak marker still is.
        #expect(Self.classify(Self.answer(label: "unconfined_u:unconfined_r:unconfined_t:s0-s0:c0.c1023")) == .user)
        #expect(Self.classify(Self.answer(label: "unconfined_u:unconfined_r:unconfined_t:s0"), root: .flatpakInfo) == .flatpak)
        for caller in [Caller.snap("foliate"), .confined("firefox")] {
            #expect(OpenPolicy.decide(caller: caller) != .allowed, "\(caller)")
        }
    }

    @Test("Callers that cannot be identified, and other users, are refused")
    func failsClosed() {
        #expect(Self.classify(Self.answer(uid: nil)) == .unidentified("the bus gave no user id"))
        #expect(Self.classify(Self.answer(uid: 0)) == .otherUser(0))
        #expect(Self.classify(Self.answer(pid: nil)) == .unidentified("the bus gave no process id"))
        #expect(Self.classify(Self.answer(), root: .unreadable("gone")) == .unidentified("gone"))
        for caller in [Caller.unidentified("gone"), .otherUser(0)] {
            #expect(OpenPolicy.decide(caller: caller) != .allowed, "\(caller)")
        }
    }

    @Test("The root of a process is inspected through /proc: this one is plain; a gone one cannot be looked at")
    func inspectsRoots() {
        #expect(OpenUriGate.inspectRoot(UInt32(getpid())) == .plain)
        if case .unreadable = OpenUriGate.inspectRoot(UInt32(Int32.max)) {} else {
            Issue.record("a process that does not exist was inspected")
        }
    }

    static func facts(_ path: String, resolved: String? = nil, type: String = "text/plain", isText: Bool = true,
                      dataType: String? = nil, dataIsText: Bool? = nil, key: Bool = false) -> FileFacts {
        FileFacts(path: path, resolvedPath: resolved ?? path, contentType: type, contentTypeIsText: isText,
                  dataContentType: dataType ?? type, dataContentTypeIsText: dataIsText ?? isText, holdsPrivateKey: key)
    }

    @Test("Hidden files and folders are refused, as named and once links are resolved")
    func hidden() {
        #expect(OpenPolicy.decide(file: Self.facts("/home/u/docs/notes.txt")) == .allowed)
        #expect(OpenPolicy.decide(file: Self.facts("/home/u/docs/../docs/./notes.txt")) == .allowed)
        for facts in [Self.facts("/home/u/.ssh/id_rsa"), Self.facts("/home/u/.notes.txt"),
                      Self.facts("/home/u/notes.txt", resolved: "/home/u/.gnupg/secring.txt"),
                      Self.facts("/home/u/.config/link.txt", resolved: "/home/u/notes.txt"),
                      Self.facts("/home/u/notes.txt", resolved: nil).with(resolved: nil)] {
            guard case .refused(let why) = OpenPolicy.decide(file: facts) else {
                Issue.record("\(facts) was allowed")
                continue
            }
            #expect(why.hasPrefix("OpenUri refused: ") && !why.contains("\n"), "\(why)")
        }
        // A second hard link may be a hidden file's other name.
        var linked = Self.facts("/home/u/docs/config.txt")
        linked.linkCount = 2
        if case .refused(let why) = OpenPolicy.decide(file: linked) {
            #expect(why.contains("2 hard links"), "\(why)")
        } else {
            Issue.record("a hard link was allowed")
        }
        #expect(OpenPolicy.hiddenComponent(in: "/home/u/.ssh/id_rsa") == ".ssh")
        #expect(OpenPolicy.hiddenComponent(in: "/a/../b/./c") == nil)
    }

    @Test("Only text (text/plain and its subclasses) and SSML are read; key material is not, whatever its type")
    func types() {
        #expect(OpenPolicy.decide(file: Self.facts("/d/a.xml", type: "application/xml")) == .allowed)
        #expect(OpenPolicy.decide(file: Self.facts("/d/a.ssml", type: "application/ssml+xml", isText: false)) == .allowed)
        #expect(OpenPolicy.decide(file: Self.facts("/d/empty", type: "application/x-zerosize", isText: false)) == .allowed)
        for facts in [Self.facts("/d/program", type: "application/x-executable", isText: false),
                      Self.facts("/d/picture.png", type: "image/png", isText: false),
                      Self.facts("/d/notes.txt", dataType: "application/x-executable", dataIsText: false),
                      Self.facts("/d/key.asc", type: "application/pgp-keys"),
                      Self.facts("/d/id_rsa", key: true)] {
            #expect(OpenPolicy.decide(file: facts) != .allowed, "\(facts)")
        }
        #expect(OpenPolicy.holdsPrivateKey(Array("-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\n".utf8)))
        #expect(OpenPolicy.holdsPrivateKey(Array("notes\n-----BEGIN RSA PRIVATE KEY-----\n".utf8)))
        #expect(OpenPolicy.holdsPrivateKey(Array("-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQ".utf8)))
        #expect(!OpenPolicy.holdsPrivateKey(Array("-----BEGIN CERTIFICATE-----\nMII".utf8)))
        #expect(!OpenPolicy.holdsPrivateKey(Array("A story about a private key, not one.".utf8)))
    }
}

extension FileFacts {
    fileprivate func with(resolved: String?) -> FileFacts {
        var copy = self
        copy.resolvedPath = resolved
        return copy
    }
}
