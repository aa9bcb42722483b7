import GLibKit

/// A test's own connection to a private session bus, for many calls in a row with any arguments — also the
/// wrong ones a well-behaved client would never send. Arguments are written in GVariant text format
/// (`Variant(parsing:)`, e.g. `("hello", @a{sv} {})` or `(int32 5,)`), or given as `Variant`s for what text
/// cannot carry cheaply (a 10 MB string) or at all (NaN).
///
/// Calls are synchronous and may come from any thread: a GDBus connection is thread-safe (GIO Reference
/// Manual, "GDBusConnection"), hence `@unchecked Sendable`.
final class BusConnection: @unchecked Sendable {
    /// The outcome of a call: the reply printed as GVariant text, or the D-Bus error.
    enum Reply: CustomStringConvertible {
        case value(String)
        /// `name` is "" when GDBus itself failed the call (no reply in time, connection closed).
        case error(name: String, message: String)

        var errorName: String? {
            if case .error(let name, _) = self { return name }
            return nil
        }

        var value: String? {
            if case .value(let v) = self { return v }
            return nil
        }

        var description: String {
            switch self {
            case .value(let v): return v
            case .error(let name, let message): return "\(name): \(message.prefix(200))"
            }
        }
    }

    private let connection: DBusConnection

    /// Connects to the bus at `address`.
    /// - Throws: `HarnessError` when the bus cannot be reached.
    init(address: String) throws {
        do {
            connection = try DBusConnection.connect(address: address)
        } catch {
            throw HarnessError("cannot connect to \(address): \(error.message)")
        }
    }

    /// Calls `interface.method` on `destination` at `path` with `arguments` in GVariant text format (a tuple).
    /// Text that does not parse is a harness error (a `.error` with the name "parse").
    func call(_ destination: String, _ path: String, _ interface: String, _ method: String,
              _ arguments: String = "()", timeoutMs: Int32 = 10_000) -> Reply {
        let parsed: Variant
        do {
            parsed = try Variant(parsing: arguments)
        } catch {
            return .error(name: "parse", message: error.message + " in " + arguments)
        }
        return call(destination, path, interface, method, arguments: parsed.tuple ?? [parsed], timeoutMs: timeoutMs)
    }

    /// The same with the arguments as values.
    func call(_ destination: String, _ path: String, _ interface: String, _ method: String,
              arguments: [Variant], timeoutMs: Int32 = 10_000) -> Reply {
        do {
            let reply = try connection.call(destination: destination, path: path, interface: interface, method: method,
                                            arguments: arguments, timeoutMilliseconds: timeoutMs, autoStart: false)
            return .value(Variant.tuple(reply).text)
        } catch {
            return .error(name: error.isLocal ? "" : error.name, message: error.message)
        }
    }

    /// Lector's own interface.
    func lector(_ method: String, _ arguments: String = "()") -> Reply {
        call("org.lector.Lector", "/org/lector/Lector", "org.lector.Lector1", method, arguments)
    }

    /// MPRIS's Player interface.
    func player(_ method: String, _ arguments: String = "()") -> Reply {
        call("org.mpris.MediaPlayer2.lector", "/org/mpris/MediaPlayer2", "org.mpris.MediaPlayer2.Player", method, arguments)
    }

    /// A property, as printed GVariant text (e.g. `<'reading'>`), or nil on an error.
    func property(_ destination: String, _ path: String, _ interface: String, _ name: String) -> String? {
        call(destination, path, "org.freedesktop.DBus.Properties", "Get", "('\(interface)', '\(name)')").value
    }

    /// Every sentence of Lector's current text (`Sentences`, 4096 at a time): its start and length in Text,
    /// and what is said of it; nil on an error.
    func lectorSentences() -> [(start: Int, length: Int, heard: String)]? {
        var all: [(start: Int, length: Int, heard: String)] = []
        while true {
            guard let reply = try? connection.call(
                destination: "org.lector.Lector", path: "/org/lector/Lector", interface: "org.lector.Lector1",
                method: "Sentences", arguments: [.uint32(UInt32(all.count)), .uint32(4096)], timeoutMilliseconds: 60_000,
                autoStart: false), case .array(_, let items)? = reply.first else { return nil }
            for item in items {
                guard case .tuple(let f) = item, f.count == 3, case .uint32(let start) = f[0], case .uint32(let length) = f[1],
                      case .string(let heard) = f[2] else { return nil }
                all.append((Int(start), Int(length), heard))
            }
            if items.count < 4096 { return all }
        }
    }

    /// A property of Lector's interface (unboxed), or nil on an error.
    private func lectorValue(_ name: String) -> Variant? {
        let reply = try? connection.call(
            destination: "org.lector.Lector", path: "/org/lector/Lector", interface: "org.freedesktop.DBus.Properties",
            method: "Get", arguments: [.string("org.lector.Lector1"), .string(name)], timeoutMilliseconds: 10_000,
            autoStart: false)
        return reply?.first?.unboxed
    }

    /// Lector's State: "reading", "paused", "stopped", or nil when the daemon does not answer.
    var lectorState: String? {
        guard case .string(let state) = lectorValue("State") else { return nil }
        return state
    }

    /// Lector's Position in µs, or nil.
    var lectorPosition: Int64? {
        guard case .int64(let position) = lectorValue("Position") else { return nil }
        return position
    }

    /// Lector's Text, or nil.
    var lectorText: String? {
        guard case .string(let text) = lectorValue("Text") else { return nil }
        return text
    }

    /// Lector's Sentence (index, start, length in Unicode scalars of Text), or nil.
    var lectorSentence: (index: Int, start: Int, length: Int)? {
        guard case .tuple(let fields) = lectorValue("Sentence"), fields.count == 3,
            case .uint32(let index) = fields[0], case .uint32(let start) = fields[1], case .uint32(let length) = fields[2]
        else { return nil }
        return (Int(index), Int(start), Int(length))
    }

    /// The unique name owning `name`, or nil.
    func owner(_ name: String) -> String? {
        let reply = try? connection.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            method: "GetNameOwner", arguments: [.string(name)], timeoutMilliseconds: 10_000, autoStart: false)
        return reply?.first?.string
    }
}
