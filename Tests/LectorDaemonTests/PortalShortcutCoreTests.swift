import Testing
@testable import LectorDaemon

@Suite struct PortalShortcutCoreTests {
    static let request = "/org/freedesktop/portal/desktop/request/1_42/"
    static let session = "/org/freedesktop/portal/desktop/session/1_42/Lector"

    @Test("CreateSession, its Response, BindShortcuts, its Response: bound; Activated then reads the selection")
    func binds() {
        var core = PortalShortcutCore(uniqueName: ":1.42")
        #expect(core.start() == [.createSession(handleToken: "lector1", sessionToken: "Lector")])
        #expect(core.start().isEmpty)
        #expect(core.phase == .creating && core.expectedRequest == Self.request + "lector1")
        // A Response on another request is not ours.
        #expect(core.response(path: Self.request + "other", code: 0, sessionHandle: Self.session).isEmpty)
        #expect(core.response(path: Self.request + "lector1", code: 0, sessionHandle: Self.session)
            == [.bindShortcuts(session: Self.session, handleToken: "lector2")])
        #expect(core.phase == .binding && core.session == Self.session)
        let bound = core.response(path: Self.request + "lector2", code: 0, sessionHandle: nil)
        #expect(core.phase == .bound && bound.count == 1)
        #expect(core.activated(session: Self.session, shortcut: "read-selection") == [.readSelection])
        #expect(core.activated(session: Self.session, shortcut: "something-else").isEmpty)
        #expect(core.activated(session: Self.session + "2", shortcut: "read-selection").isEmpty)
        // The same Response again changes nothing.
        #expect(core.response(path: Self.request + "lector2", code: 0, sessionHandle: nil).isEmpty)
    }

    @Test("A portal that answers with another request path is followed to it")
    func followsTheRequestPath() {
        var core = PortalShortcutCore(uniqueName: ":1.42")
        _ = core.start()
        core.requestMade("/org/freedesktop/portal/desktop/request/x/y")
        #expect(core.response(path: "/org/freedesktop/portal/desktop/request/x/y", code: 0, sessionHandle: Self.session).count == 1)
        #expect(core.phase == .binding)
    }

    @Test("No portal, a refusal, no session, or the session closed: one line, and the key does nothing")
    func failures() {
        var missing = PortalShortcutCore(uniqueName: ":1.42")
        _ = missing.start()
        let line = missing.callFailed("No such interface “org.freedesktop.portal.GlobalShortcuts”")
        #expect(missing.phase == .failed && line.count == 1)
        if case .log(let text) = line.first { #expect(text.contains("not available")) } else { Issue.record("\(line)") }
        #expect(missing.callFailed("again").isEmpty)

        var refused = PortalShortcutCore(uniqueName: ":1.42")
        _ = refused.start()
        #expect(refused.response(path: Self.request + "lector1", code: 1, sessionHandle: nil)
            == [.log("the GlobalShortcuts portal answered CreateSession with cancelled; no shortcut through it")])
        #expect(refused.phase == .failed)

        var sessionless = PortalShortcutCore(uniqueName: ":1.42")
        _ = sessionless.start()
        #expect(sessionless.response(path: Self.request + "lector1", code: 0, sessionHandle: nil).count == 1)
        #expect(sessionless.phase == .failed)

        var closed = PortalShortcutCore(uniqueName: ":1.42")
        _ = closed.start()
        _ = closed.response(path: Self.request + "lector1", code: 0, sessionHandle: Self.session)
        _ = closed.response(path: Self.request + "lector2", code: 0, sessionHandle: nil)
        #expect(closed.closed(session: "/elsewhere").isEmpty)
        #expect(closed.closed(session: Self.session).count == 1)
        #expect(closed.activated(session: Self.session, shortcut: "read-selection").isEmpty)
    }
}
