@preconcurrency import Glibc
import GLibKit
import LectorClient
import LectorCommon

/// The window's side of the bus: watches `org.lector.Lector`, starts the daemon when nobody owns it, follows
/// its signals and properties, and calls it, never waiting for a reply (every call is asynchronous, so the
/// window keeps drawing whatever the daemon does).
final class DaemonLink {
    /// The daemon appeared (at start, or after it had gone): read its properties.
    var onAppeared: () -> Void = {}
    /// The daemon left the bus (it ended or died).
    var onVanished: () -> Void = {}
    /// A signal of `org.lector.Lector1`, with its arguments.
    var onSignal: (Lector1.Signal, [Variant]) -> Void = { _, _ in }
    /// PropertiesChanged of `org.lector.Lector1`: the new values, and the names of the invalidated ones.
    var onProperties: ([String: Variant], [String]) -> Void = { _, _ in }
    /// One line for the person (a failed call, a daemon that cannot be started).
    var onProblem: (String) -> Void = { _ in }

    private let connection: DBusConnection
    private var watch: NameWatch?
    private var subscriptions: [Subscription] = []
    private(set) var isConnected = false
    /// Calls asked for while no daemon was on the bus, made once one appears (a file given at launch).
    private var waiting: [() -> Void] = []
    /// Starts made while the daemon is absent, so that one that cannot start is not started in a loop.
    private var starts = 0

    init(connection: DBusConnection) {
        self.connection = connection
    }

    /// Starts watching: `onAppeared` or a start of the daemon follows from the main loop.
    func start() {
        subscriptions.append(connection.subscribe(sender: Names.bus, path: Names.path, interface: Names.interface, member: nil) {
            [weak self] message in
            guard let signal = Lector1.Signal(rawValue: message.member) else { return }
            self?.onSignal(signal, message.arguments)
        })
        subscriptions.append(connection.subscribe(sender: Names.bus, path: Names.path, interface: "org.freedesktop.DBus.Properties",
                                                  member: "PropertiesChanged") { [weak self] message in
            let args = message.arguments
            guard args.count == 3, args[0].string == Names.interface, let changed = args[1].dictionary else { return }
            let invalidated = args[2].array?.compactMap(\.string) ?? []
            self?.onProperties(changed, invalidated)
        })
        watch = connection.watchName(Names.bus, appeared: { [weak self] _ in
            guard let self else { return }
            isConnected = true
            starts = 0
            onAppeared()
            let calls = waiting
            waiting = []
            for call in calls { call() }
        }, vanished: { [weak self] in
            guard let self else { return }
            let was = isConnected
            isConnected = false
            if was { onVanished() }
            startDaemon()
        })
    }

    /// Starts a daemon: by D-Bus activation when Lector is installed, else as a detached `lector-daemon
    /// daemon` (`DaemonLauncher`). At most 3 tries in a row without the daemon appearing in between, 1 s apart.
    private func startDaemon() {
        guard starts < 3 else {
            onProblem("Lector's daemon does not start; see \(DaemonLauncher.logPath)")
            return
        }
        starts += 1
        let delay: UInt32 = starts == 1 ? 0 : 1000
        _ = MainContext.timeout(milliseconds: delay) { [weak self] in
            guard let self, !isConnected else { return false }
            connection.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                            method: "StartServiceByName", arguments: [.string(Names.bus), .uint32(0)],
                            timeoutMilliseconds: 10_000) { [weak self] result in
                guard let self, !isConnected, case .failure = result else { return }
                if let problem = DaemonLauncher.spawn() { onProblem(problem) }
            }
            return false
        }
    }

    /// Calls a method of `org.lector.Lector1`; `reply` gets the out-arguments (failures go to `onProblem`).
    func call(_ method: Lector1.Method, _ arguments: [Variant] = [], fileDescriptors: [Int32] = [],
              reply: @escaping ([Variant]) -> Void = { _ in }) {
        guard isConnected else {
            // Made once the daemon is there; a descriptor is duplicated now, so that it outlives its caller's.
            let copies = fileDescriptors.map { fcntl($0, F_DUPFD_CLOEXEC, 3) }
            waiting.append { [weak self] in
                self?.call(method, arguments, fileDescriptors: copies) { out in
                    for fd in copies { close(fd) }
                    reply(out)
                }
            }
            return
        }
        connection.call(destination: Names.bus, path: Names.path, interface: Names.interface, method: method.rawValue,
                        arguments: arguments, fileDescriptors: fileDescriptors, autoStart: false) { [weak self] result in
            switch result {
            case .success(let out): reply(out)
            case .failure(let error): self?.onProblem(error.message)
            }
        }
    }

    /// Calls a method of the daemon's MPRIS player (Next, Previous, Seek).
    func player(_ method: MPRIS.PlayerMethod, _ arguments: [Variant] = []) {
        connection.call(destination: MPRIS.lectorBusName, path: MPRIS.path, interface: MPRIS.playerInterface, method: method.rawValue,
                        arguments: arguments, autoStart: false) { [weak self] result in
            if case .failure(let error) = result { self?.onProblem(error.message) }
        }
    }

    /// Sets a property of the MPRIS player (LoopStatus).
    func setPlayerProperty(_ name: String, _ value: Variant) {
        connection.call(destination: MPRIS.lectorBusName, path: MPRIS.path, interface: "org.freedesktop.DBus.Properties", method: "Set",
                        arguments: [.string(MPRIS.playerInterface), .string(name), .variant(value)], autoStart: false) {
            [weak self] result in
            if case .failure(let error) = result { self?.onProblem(error.message) }
        }
    }

    /// Reads a property of the MPRIS player (Rate, LoopStatus); `reply` gets its value (nothing on failure).
    func playerProperty(_ name: String, _ reply: @escaping (Variant) -> Void) {
        connection.call(destination: MPRIS.lectorBusName, path: MPRIS.path, interface: "org.freedesktop.DBus.Properties", method: "Get",
                        arguments: [.string(MPRIS.playerInterface), .string(name)], autoStart: false) { result in
            if case .success(let out) = result, case .variant(let value)? = out.first { reply(value) }
        }
    }

    /// Reads every property of `org.lector.Lector1` (GetAll); `reply` gets them by name.
    func properties(_ reply: @escaping ([String: Variant]) -> Void) {
        connection.call(destination: Names.bus, path: Names.path, interface: "org.freedesktop.DBus.Properties", method: "GetAll",
                        arguments: [.string(Names.interface)], timeoutMilliseconds: 60_000, autoStart: false) { result in
            if case .success(let out) = result, let all = out.first?.dictionary { reply(all) }
        }
    }

    /// Reads one property of `org.lector.Lector1` (Get); `reply` gets its value.
    func property(_ property: Lector1.Property, _ reply: @escaping (Variant) -> Void) {
        connection.call(destination: Names.bus, path: Names.path, interface: "org.freedesktop.DBus.Properties", method: "Get",
                        arguments: [.string(Names.interface), .string(property.rawValue)], timeoutMilliseconds: 60_000,
                        autoStart: false) { result in
            if case .success(let out) = result, case .variant(let value)? = out.first { reply(value) }
        }
    }
}
