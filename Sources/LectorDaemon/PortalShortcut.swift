@preconcurrency import Glibc
import GLibKit

/// "Read selection" as a global shortcut through the XDG GlobalShortcuts portal, held by the daemon
/// (`[daemon] portal-shortcut=true`): the portal's shortcuts live as long as the session that bound them, and
/// the daemon is the one long-running process of Lector in a desktop session. The steps are
/// `PortalShortcutCore`'s; this drives them with asynchronous D-Bus calls on the main loop (nothing waits),
/// and on Activated runs `lector read --selection` as a child process (reaped on the main loop; while one
/// runs, another press is ignored), which reads the selection and pauses or resumes the same one.
final class PortalShortcut {
    static let service = "org.freedesktop.portal.Desktop"
    static let path = "/org/freedesktop/portal/desktop"
    static let interface = "org.freedesktop.portal.GlobalShortcuts"

    private let connection: DBusConnection
    private var core: PortalShortcutCore
    private var subscriptions: [Subscription] = []
    private var reading: ChildProcess?

    init(connection: DBusConnection) {
        self.connection = connection
        core = PortalShortcutCore(uniqueName: connection.uniqueName)
    }

    /// The shortcut as the portal takes it: `a(sa{sv})` with its description and preferred trigger.
    private var shortcuts: Variant {
        .array(elementType: "(sa{sv})", [.tuple([
            .string(PortalShortcutCore.shortcutID),
            .vardict(["description": .string(PortalShortcutCore.description),
                      "preferred_trigger": .string(PortalShortcutCore.preferredTrigger)]),
        ])])
    }

    /// Subscribes to the portal's signals, then creates the session.
    func start() {
        subscriptions.append(connection.subscribe(sender: Self.service, path: nil, interface: "org.freedesktop.portal.Request",
                                                  member: "Response") { [unowned self] signal in
            let code = signal.arguments.first?.uint32 ?? 2
            let session = signal.arguments.dropFirst().first?.dictionary?["session_handle"]?.unboxed
            self.perform(self.core.response(path: signal.path, code: code,
                                            sessionHandle: session?.string ?? session?.objectPath))
        })
        subscriptions.append(connection.subscribe(sender: Self.service, path: Self.path, interface: Self.interface,
                                                  member: "Activated") { [unowned self] signal in
            guard let session = signal.arguments.first?.objectPath, let id = signal.arguments.dropFirst().first?.string else { return }
            self.perform(self.core.activated(session: session, shortcut: id))
        })
        subscriptions.append(connection.subscribe(sender: Self.service, path: nil, interface: "org.freedesktop.portal.Session",
                                                  member: "Closed") { [unowned self] signal in
            self.perform(self.core.closed(session: signal.path))
        })
        perform(core.start())
    }

    /// Ends the subscriptions (the portal closes the session when the daemon leaves the bus).
    func stop() {
        for subscription in subscriptions { subscription.cancel() }
        subscriptions.removeAll()
    }

    private func perform(_ actions: [PortalShortcutCore.Action]) {
        for action in actions {
            switch action {
            case .createSession(let handleToken, let sessionToken):
                call("CreateSession", [.vardict(["handle_token": .string(handleToken),
                                                 "session_handle_token": .string(sessionToken),
                                                 "shortcuts": shortcuts])])
            case .bindShortcuts(let session, let handleToken):
                call("BindShortcuts", [.objectPath(session), shortcuts, .string(""),
                                       .vardict(["handle_token": .string(handleToken)])])
            case .readSelection:
                readSelection()
            case .log(let line):
                Log.message(line)
            }
        }
    }

    private func call(_ method: String, _ arguments: [Variant]) {
        connection.call(destination: Self.service, path: Self.path, interface: Self.interface, method: method,
                        arguments: arguments, timeoutMilliseconds: 10_000) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let reply):
                if let request = reply.first?.objectPath { self.core.requestMade(request) }
            case .failure(let error):
                self.perform(self.core.callFailed(error.message))
            }
        }
    }

    /// Where `lector` is: beside the daemon (a build folder), in `../../bin/` (installed, the daemon in
    /// `libexec/lector/`), else on PATH.
    static func lectorExecutable() -> String? {
        let dir = executableDirectory()
        return [dir + "/lector", dir + "/../../bin/lector"].first { access($0, X_OK) == 0 && fileTest($0, .isRegular) }
            ?? findProgramInPath("lector")
    }

    private func readSelection() {
        guard reading == nil else { return Log.message("the shortcut was pressed while the previous press is still being handled; ignored") }
        guard let lector = Self.lectorExecutable() else { return Log.warning("the shortcut was pressed, but no lector executable was found") }
        let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
        guard null >= 0 else { return Log.warning("the shortcut was pressed, but /dev/null cannot be opened") }
        do {
            let child = try ChildProcess(argv: [lector, "read", "--selection"], standardInput: null)
            reading = child
            child.onExit { [weak self] status in
                if status != .exited(0) { Log.message("lector read --selection (the shortcut) ended with \(status)") }
                self?.reading = nil
            }
        } catch {
            Log.warning("the shortcut was pressed, but lector read --selection cannot be started: \(error.message)")
        }
    }
}
