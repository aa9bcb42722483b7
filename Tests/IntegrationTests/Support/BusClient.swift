import Foundation
import GLibKit

/// Calls Lector's D-Bus interface directly through GDBus, for what `gdbus call` cannot carry: texts longer
/// than one command-line argument may be (128 KiB) and texts with characters its parser would interpret.
///
/// D-Bus strings must be valid UTF-8, so a text that is not cannot go through D-Bus at all: like every
/// client must, this one repairs it first (invalid bytes become U+FFFD) — see `repairedText(_:)`.
enum BusClient {
    /// The outcome of a method call: its reply printed as GVariant text, or the D-Bus error.
    typealias Reply = BusConnection.Reply

    /// The text a client sends for `bytes`: valid UTF-8 unchanged, invalid sequences replaced by U+FFFD.
    static func repairedText(_ bytes: Data) -> String { String(decoding: bytes, as: UTF8.self) }

    /// Calls `org.lector.Lector1.Speak(text, options)` on the bus at `address` with string options.
    static func speak(address: String, text: String, options: [String: String] = [:], timeoutMs: Int32 = 10_000)
        -> Reply
    {
        let bus: BusConnection
        do { bus = try BusConnection(address: address) } catch { return .error(name: "connect", message: "\(error)") }
        return bus.call("org.lector.Lector", "/org/lector/Lector", "org.lector.Lector1", "Speak",
                        arguments: [.string(text), .vardict(options.mapValues { .string($0) })], timeoutMs: timeoutMs)
    }
}
