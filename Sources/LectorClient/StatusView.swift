@preconcurrency import Glibc
import GLibKit
import LectorCommon

/// `lector status --follow`: the state, a progress bar and the sentence being read, updated live from
/// PropertiesChanged and Lector's signals (and every 250 ms while reading, for the position). On a terminal
/// it redraws two lines in place; otherwise it prints a line whenever the state or the sentence changes.
/// Ends when the daemon goes away or on Ctrl-C.
final class StatusView {
    private let client: Client
    private let loop = MainLoop()
    private let terminal = isatty(1) != 0
    private var drawn = false
    private var last = ""
    private var state = ""
    private var text: [Unicode.Scalar] = []
    private var sentence = ""
    private var length: Int64 = 0
    private var timer: Source?

    init(client: Client) {
        self.client = client
    }

    func run() -> Int32 {
        let c = client.connection
        let refresh: (SignalMessage) -> Void = { [unowned self] _ in self.reload() }
        let subscriptions = [
            c.subscribe(sender: Names.bus, path: Names.path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", refresh),
            c.subscribe(sender: Names.bus, path: Names.path, interface: Names.interface, member: Lector1.Signal.sentence.rawValue, refresh),
        ]
        let watch = c.watchName(Names.bus, appeared: { _ in }, vanished: { [unowned self] in
            self.finish("state: not running")
        })
        for sig in [SIGINT, SIGTERM] {
            MainContext.unixSignal(sig) { [unowned self] in self.finish(nil); return false }
        }
        reload()
        loop.run()
        subscriptions.forEach { $0.cancel() }
        watch.cancel()
        return 0
    }

    private func finish(_ message: String?) {
        if let message { if drawn && terminal { fputs("\n", stdout) }; print(message) }
        else if drawn && terminal { fputs("\n", stdout) }
        fflush(stdout)
        loop.quit()
    }

    private func reload() {
        guard let all = try? client.daemonCall(destination: Names.bus, path: Names.path, interface: "org.freedesktop.DBus.Properties",
                                                    method: "GetAll", arguments: [.string(Names.interface)], autoStart: false)
                                                    .first?.dictionary?.named(Lector1.Property.self) else { return }
        state = all[.state]?.string ?? ""
        text = Array((all[.text]?.string ?? "").unicodeScalars)
        length = all[.length]?.int64 ?? 0
        sentence = ""
        if case .tuple(let t)? = all[.sentence]?.unboxed, t.count == 3, let start = t[1].uint32, let count = t[2].uint32 {
            let lo = min(Int(start), text.count), hi = min(lo + Int(count), text.count)
            sentence = String(String.UnicodeScalarView(text[lo..<hi])).split(whereSeparator: \.isNewline).joined(separator: " ")
        }
        draw()
        timer?.cancel()
        timer = nil
        if state == "reading" {
            timer = MainContext.timeout(milliseconds: 250) { [unowned self] in self.draw(); return true }
        }
    }

    private func draw() {
        let position = (try? client.daemonCall(destination: Names.bus, path: Names.path, interface: "org.freedesktop.DBus.Properties",
                                                    method: "Get", arguments: [.string(Names.interface), .string(Lector1.Property.position.rawValue)],
                                                    autoStart: false).first?.int64) ?? 0
        let width = 30
        let fraction = length > 0 ? min(1, Double(position) / Double(length)) : 0
        let filled = Int(fraction * Double(width))
        let bar = "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "]"
        let status = "\(state.padding(7)) \(bar) \(seconds(position)) / \(seconds(length)) s"
        if terminal {
            let columns = 100
            let line2 = sentence.count > columns ? String(sentence.prefix(columns - 1)) + "…" : sentence
            if drawn { fputs("\u{1B}[2A", stdout) }
            fputs("\r\u{1B}[K" + status + "\n\r\u{1B}[K" + line2 + "\n", stdout)
            drawn = true
        } else {
            let line = "\(state): \(sentence)"
            if line != last { print(line); last = line }
        }
        fflush(stdout)
    }
}

private extension String {
    func padding(_ width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
}
