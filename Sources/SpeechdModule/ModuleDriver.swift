@preconcurrency import Glibc
import GLibKit
import LectorClient
import LectorCommon
import SystemKit

/// The Speech Dispatcher output module's process: the protocol on standard input and output, Lector's
/// daemon over D-Bus, all on one GLib main loop. Commands are read as they come (a STOP is never stuck
/// behind a call to the daemon: every call is asynchronous), and the daemon's signals become events.
public final class ModuleDriver {
    private let loop = MainLoop()
    private var reader = ModuleReader()
    private var core = ModuleCore()
    private var connection: DBusConnection?
    private var subscription: Subscription?
    private var watch: NameWatch?
    private var input: Source?
    private var buffer: [UInt8] = []
    /// Whether the bytes read are the rest of a line too long to keep, skipped up to its newline.
    private var skipping = false
    /// The time-outs armed for answers the daemon owes (`ModuleDeadline`), by deadline.
    private var deadlines: [ModuleDeadline: Source] = [:]
    private var status: Int32 = 0
    /// A line longer than this (16 MiB) is skipped to its newline and answered with an error: the server never
    /// sends one, and memory stays bounded.
    static let maximumLine = 16 << 20

    /// A driver reading the module protocol on standard input.
    public init() {}

    /// Runs until QUIT or the end of standard input; returns the exit status.
    public func run() -> Int32 {
        try? FileDescriptor.standardInput.setNonBlocking()
        input = MainContext.watch(fd: .standardInput) { [unowned self] _ in self.readInput() }
        loop.run()
        return status
    }

    /// Reads what standard input holds and handles each complete line; false ends the watch (end of input).
    private func readInput() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count: Int
            do { count = try FileDescriptor.standardInput.read(into: &chunk) } catch {
                if error == .wouldBlock || error == .interrupted { break }
                loop.quit()
                return false
            }
            if count == 0 {
                loop.quit()
                return false
            }
            let searched = buffer.count
            buffer += chunk[0..<count]
            // Lines are cut by index and the buffer shortened once per read: removing each line from the front
            // would move the rest of the buffer once per line. Only the bytes just read are searched for a newline.
            var start = 0
            while let newline = buffer[max(start, searched)...].firstIndex(of: 10) {
                if skipping || newline - start > Self.maximumLine {
                    skipping = false
                    overlong()
                } else {
                    handle(String(decoding: buffer[start..<newline], as: UTF8.self))
                }
                start = newline + 1
            }
            buffer.removeFirst(start)
            if skipping || buffer.count > Self.maximumLine {
                buffer.removeAll()
                skipping = true
            }
        }
        return true
    }

    /// A line longer than `maximumLine` ended: nothing of it is read as protocol.
    private func overlong() {
        printError("a line of more than \(Self.maximumLine) bytes was skipped")
        let (replies, command) = reader.overlong()
        if !replies.isEmpty { send(replies) }
        if let command { perform(core.handle(command)) }
    }

    private func handle(_ line: String) {
        let (replies, command) = reader.read(line)
        if !replies.isEmpty { send(replies) }
        guard let command else { return }
        if command == .initialize, let problem = connect() {
            send(["399-\(problem)", "399 ERR CANT INIT MODULE"])
            status = 1
            loop.quit()
            return
        }
        perform(core.handle(command))
    }

    /// Connects to the session bus, starts the daemon if needed and follows its signals.
    private func connect() -> String? {
        let bus: DBusConnection
        do { bus = try DBusConnection.session() } catch { return "cannot reach the session bus: \(error.message)" }
        if let problem = DaemonLauncher.ensureRunning() { return problem }
        connection = bus
        subscription = bus.subscribe(sender: Names.bus, path: Names.path, interface: Names.interface, member: nil) {
            [unowned self] message in self.signal(message)
        }
        watch = bus.watchName(Names.bus, appeared: { _ in }, vanished: { [unowned self] in
            self.perform(self.core.daemonVanished())
        })
        return nil
    }

    private func signal(_ message: SignalMessage) {
        guard let id = message.arguments.first?.uint64 else { return }
        let event: DaemonEvent
        switch Lector1.Signal(rawValue: message.member) {
        case .started: event = .started
        case .paused: event = .paused
        case .resumed: event = .resumed
        case .stopped: event = .stopped
        case .finished: event = .finished
        case .mark:
            guard message.arguments.count == 2, let name = message.arguments[1].string else { return }
            event = .mark(name)
        case .error:
            guard message.arguments.count == 3, message.arguments[2].bool == true else { return }
            event = .failed(message.arguments[1].string ?? "")
        default: return
        }
        perform(core.receive(event, utterance: id))
    }

    private func perform(_ actions: [ModuleAction]) {
        for action in actions {
            switch action {
            case .send(let lines): send(lines)
            case .log(let line): printError(line)
            case .quit:
                connection?.flush()
                loop.quit()
            case .request(let request): call(request)
            case .deadline(let deadline): arm(deadline)
            }
        }
    }

    /// Calls `ModuleCore.timedOut` for `deadline` after `ModuleCore.answerMilliseconds` (once).
    private func arm(_ deadline: ModuleDeadline) {
        deadlines[deadline]?.cancel()
        deadlines[deadline] = MainContext.timeout(milliseconds: UInt32(ModuleCore.answerMilliseconds)) {
            [unowned self] in
            self.deadlines[deadline] = nil
            self.perform(self.core.timedOut(deadline))
            return false
        }
    }

    private func call(_ request: DaemonRequest) {
        guard let connection else { return }
        switch request {
        case .speak(let document, let options):
            if !connection.nameHasOwner(Names.bus), let problem = DaemonLauncher.ensureRunning() {
                printError(problem)
            }
            let serial = core.messageSerial
            connection.call(destination: Names.bus, path: Names.path, interface: Names.interface,
                            method: Lector1.Method.speak.rawValue,
                            arguments: [.string(document), .vardict(options.dbusOptions)],
                            timeoutMilliseconds: ModuleCore.speakMilliseconds) { [unowned self] result in
                let answer: Result<UInt64, SpeakFailure> = switch result {
                case .success(let out): .success(out.first?.uint64 ?? 0)
                case .failure(let error): .failure(SpeakFailure(name: error.name, message: error.message))
                }
                self.perform(self.core.spoke(answer, document: document, serial: serial))
            }
        case .stop, .pause, .resume:
            let method: Lector1.Method
            let id: UInt64
            switch request {
            case .stop(let u): (method, id) = (.stop, u)
            case .pause(let u): (method, id) = (.pause, u)
            default:
                guard case .resume(let u) = request else { return }
                (method, id) = (.resume, u)
            }
            connection.call(destination: Names.bus, path: Names.path, interface: Names.interface,
                            method: method.rawValue, autoStart: false) { result in
                if case .failure(let error) = result { printError("\(method.rawValue) of \(id) failed: \(error.message)") }
            }
        case .listVoices:
            connection.call(destination: Names.bus, path: Names.path, interface: Names.interface,
                            method: Lector1.Method.listVoices.rawValue) { [unowned self] result in
                var voices: [(name: String, languages: [String])] = []
                if case .success(let out) = result {
                    for v in out.first?.array ?? [] {
                        guard let fields = v.tuple, fields.count == 4, let name = fields[0].string else { continue }
                        voices.append((name, (fields[2].array ?? []).compactMap(\.string)))
                    }
                }
                self.perform(self.core.listed(voices))
            }
        }
    }

    /// Writes `lines` to standard output at once (blocking: the server reads its pipe).
    private func send(_ lines: [String]) {
        let bytes = Array((lines.joined(separator: "\n") + "\n").utf8)
        try? FileDescriptor.standardOutput.writeAll(bytes)
    }
}
