import CGio
import Foundation

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
        let entryType = g_variant_type_new("{sv}")
        defer { g_variant_type_free(entryType) }
        var entries: [OpaquePointer?] = options.sorted(by: { $0.key < $1.key }).map { key, value in
            g_variant_new_dict_entry(g_variant_new_string(key), g_variant_new_variant(g_variant_new_string(value)))
        }
        let dictionary = entries.withUnsafeMutableBufferPointer {
            g_variant_new_array(entryType, $0.baseAddress, gsize($0.count))
        }
        var children: [OpaquePointer?] = [g_variant_new_string(text), dictionary]
        let parameters = children.withUnsafeMutableBufferPointer { g_variant_new_tuple($0.baseAddress, 2) }
        return bus.call("org.lector.Lector", "/org/lector/Lector", "org.lector.Lector1", "Speak",
                        parameters: parameters, timeoutMs: timeoutMs)
    }
}
