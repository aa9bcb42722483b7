@preconcurrency import Glibc
import CGio
import Testing
@testable import GLibKit

private let xml = """
<node>
  <interface name="org.lector.Test">
    <method name="Echo">
      <arg name="text" type="s" direction="in"/><arg name="number" type="i" direction="in"/>
      <arg name="text" type="s" direction="out"/><arg name="number" type="x" direction="out"/>
    </method>
    <method name="Options">
      <arg name="options" type="a{sv}" direction="in"/><arg name="keys" type="as" direction="out"/>
    </method>
    <method name="Fail"/>
    <method name="WrongType"><arg type="s" direction="out"/></method>
    <property name="Volume" type="d" access="readwrite"/>
    <property name="Name" type="s" access="read"/>
    <property name="Position" type="x" access="read"/>
    <property name="Broken" type="s" access="read"/>
    <property name="Guarded" type="b" access="readwrite"/>
    <property name="Any" type="v" access="readwrite"/>
    <signal name="Ping"><arg name="text" type="s"/></signal>
  </interface>
</node>
"""

private final class TestObject: DBusObject {
    var volume = 1.0
    var any: Variant = .variant(.string("initial"))
    var calls: [(String, [Variant], String)] = []

    func call(method: String, interface: String, arguments: [Variant], sender: String) throws(DBusError) -> [Variant] {
        calls.append((method, arguments, sender))
        switch method {
        case "Echo": return [arguments[0], arguments[1]]  // .int32 converted to the introspected x
        case "Options": return [.strings(arguments[0].dictionary!.keys.sorted())]
        case "Fail": throw DBusError(name: "org.lector.Test.Error.Custom", message: "custom failure")
        case "WrongType": return [.int32(1)]
        default: throw .unknownMethod(method)
        }
    }

    func property(_ name: String, interface: String) throws(DBusError) -> Variant {
        switch name {
        case "Volume": return .double(volume)
        case "Name": return .string("Lector test")
        case "Position": return .int32(42)
        case "Guarded": return .bool(false)
        case "Any": return any
        default: throw DBusError(name: "org.lector.Test.Error.Broken", message: "no value yet")
        }
    }

    func setProperty(_ name: String, interface: String, value: Variant) throws(DBusError) {
        switch name {
        case "Volume": volume = value.double!
        case "Any": any = value
        default: throw .invalidArgs("Guarded refuses \(value.bool!)")
        }
    }
}

/// Reads the start of a file sent as a Unix file descriptor (`h`).
private final class HeadObject: DBusObject {
    static let xml = """
    <node><interface name="org.lector.Head">
      <method name="Head"><arg name="file" type="h" direction="in"/><arg name="head" type="s" direction="out"/></method>
    </interface></node>
    """
    var sent: [Int] = []

    func call(method: String, interface: String, arguments: [Variant], fileDescriptors: DBusFileDescriptors,
              sender: String) throws(DBusError) -> [Variant] {
        sent.append(fileDescriptors.count)
        guard case .handle(let index) = arguments.first else { throw .invalidArgs("no handle") }
        let head = try fileDescriptors.withDescriptor(index) { fd in
            var buffer = [UInt8](repeating: 0, count: 64)
            let n = read(fd, &buffer, buffer.count)
            return String(decoding: buffer[0..<max(0, n)], as: UTF8.self)
        }
        return [.string(head)]
    }
}

extension MainLoopTests {
    @Test func receivesFileDescriptors() throws {
        let bus = try PrivateBus()
        let connection = try DBusConnection.connect(address: bus.address)
        let object = HeadObject()
        let registration = try connection.register(object, path: "/org/lector/Head", interface: "org.lector.Head",
                                                   introspectionXML: HeadObject.xml)
        defer { registration.unregister() }
        let path = "/tmp/lector-head-\(getpid()).txt"
        defer { unlink(path) }
        let file = fopen(path, "w")
        fputs("first line\n", file)
        fclose(file)
        // gdbus sends its own descriptor N for a handle argument N: here its standard input.
        let call = "exec gdbus call --address \"$0\" --dest \(connection.uniqueName) --object-path /org/lector/Head --method org.lector.Head.Head"
        let ok = try run(["sh", "-c", call + " 0 <\"$1\" 2>&1", bus.address, path])
        #expect(ok.output == "('first line\\n',)\n", "\(ok.output)")
        #expect(object.sent == [1])
    }

    @Test func exportsMethodsAndPropertiesToOtherProcesses() throws {
        let bus = try PrivateBus()
        let connection = try DBusConnection.connect(address: bus.address)
        let object = TestObject()
        let registration = try connection.register(object, path: "/org/lector/Test", interface: "org.lector.Test",
                                                   introspectionXML: xml)
        var acquired = false
        let name = connection.ownName("org.lector.Test", onAcquired: { acquired = true }, onLost: {})
        #expect(spin { acquired })

        func gdbus(_ args: String...) throws -> String {
            try run(["gdbus", "call", "--address", bus.address, "--dest", "org.lector.Test",
                     "--object-path", "/org/lector/Test"] + args, mergeStderr: true).output
        }
        func send(_ args: String...) throws -> String {
            try run(["dbus-send", "--bus=" + bus.address, "--print-reply", "--dest=org.lector.Test",
                     "/org/lector/Test"] + args, mergeStderr: true).output
        }
        let properties = "org.freedesktop.DBus.Properties"

        #expect(try gdbus("--method", "org.lector.Test.Echo", "héllo", "42") == "('héllo', int64 42)\n")
        #expect(object.calls.last?.1 == [.string("héllo"), .int32(42)])
        #expect(object.calls.last?.2.hasPrefix(":") == true)
        #expect(try gdbus("--method", "org.lector.Test.Options", "{'b': <1>, 'a': <'x'>}") == "(['a', 'b'],)\n")

        // GDBus refuses wrong argument types before the object sees them.
        let calls = object.calls.count
        let wrong = try send("org.lector.Test.Echo", "int32:1")
        #expect(wrong.contains("org.freedesktop.DBus.Error.InvalidArgs"))
        #expect(object.calls.count == calls)

        let failed = try send("org.lector.Test.Fail")
        #expect(failed.contains("Error org.lector.Test.Error.Custom: custom failure"), "\(failed)")
        let wrongReturn = try send("org.lector.Test.WrongType")
        #expect(wrongReturn.contains("Error org.freedesktop.DBus.Error.Failed: WrongType returned (i), not (s)"))

        #expect(try gdbus("--method", properties + ".Get", "org.lector.Test", "Volume") == "(<1.0>,)\n")
        #expect(try gdbus("--method", properties + ".Get", "org.lector.Test", "Position") == "(<int64 42>,)\n")
        #expect(try gdbus("--method", properties + ".Set", "org.lector.Test", "Volume", "<0.5>") == "()\n")
        #expect(object.volume == 0.5)
        #expect(try gdbus("--method", properties + ".Get", "org.lector.Test", "Any") == "(<<'initial'>>,)\n")
        let all = try gdbus("--method", properties + ".GetAll", "org.lector.Test")
        #expect(all == "({'Any': <<'initial'>>, 'Guarded': <false>, 'Name': <'Lector test'>, 'Position': <int64 42>, 'Volume': <0.5>},)\n",
                "\(all)")
        let broken = try send(properties + ".Get", "string:org.lector.Test", "string:Broken")
        #expect(broken.contains("Error org.lector.Test.Error.Broken: no value yet"), "\(broken)")
        let guarded = try send(properties + ".Set", "string:org.lector.Test", "string:Guarded", "variant:boolean:true")
        #expect(guarded.contains("Error org.freedesktop.DBus.Error.InvalidArgs: Guarded refuses true"), "\(guarded)")
        let readOnly = try send(properties + ".Set", "string:org.lector.Test", "string:Name", "variant:string:x")
        #expect(readOnly.contains("Error org.freedesktop.DBus.Error"), "\(readOnly)")
        let wrongSetType = try send(properties + ".Set", "string:org.lector.Test", "string:Volume", "variant:int32:1")
        #expect(wrongSetType.contains("Error org.freedesktop.DBus.Error.InvalidArgs"), "\(wrongSetType)")
        #expect(try gdbus("--method", properties + ".Set", "org.lector.Test", "Any", "<<uint32 9>>") == "()\n")
        #expect(object.any == .variant(.uint32(9)))
        #expect(object.volume == 0.5)

        // Our own client side: remote errors keep their name and lose GDBus's prefix.
        let other = try DBusConnection.connect(address: bus.address)
        #expect(other.nameHasOwner("org.lector.Test"))
        #expect(!other.nameHasOwner("org.lector.Nobody"))
        let error = #expect(throws: DBusError.self) {
            try other.call(destination: "org.lector.Nobody", path: "/", interface: "org.lector.X", method: "Y",
                           autoStart: false)
        }
        #expect(error?.name == "org.freedesktop.DBus.Error.NameHasNoOwner")
        #expect(error?.message.hasPrefix("GDBus") == false)
        #expect(error?.description == error?.message)
        let invalid = #expect(throws: DBusError.self) {
            try other.call(destination: "org.lector.Test", path: "no path", interface: "org.lector.Test", method: "Echo")
        }
        #expect(invalid?.name == "org.freedesktop.DBus.Error.InvalidArgs")
        let names = try other.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                   interface: "org.freedesktop.DBus", method: "ListNames")
        #expect(names.first?.array?.contains(.string("org.lector.Test")) == true)

        // A second owner is refused at once (no queueing); the watch follows the name.
        var otherAcquired = false, otherLost = false
        let otherName = other.ownName("org.lector.Test", onAcquired: { otherAcquired = true }, onLost: { otherLost = true })
        #expect(spin { otherLost })
        #expect(!otherAcquired)
        otherName.release()
        var owners: [String] = []
        var vanished = 0
        let watch = other.watchName("org.lector.Test", appeared: { owners.append($0) }, vanished: { vanished += 1 })
        #expect(spin { owners.count == 1 })
        #expect(owners == [connection.uniqueName])
        name.release()
        name.release()
        #expect(spin { vanished == 1 })
        watch.cancel()

        registration.unregister()
        registration.unregister()
        #expect(try send("org.lector.Test.Echo", "string:x", "int32:1").contains("Error"))
    }

    @Test func deliversSignals() throws {
        let bus = try PrivateBus()
        let connection = try DBusConnection.connect(address: bus.address)
        var received: [SignalMessage] = []
        let subscription = connection.subscribe(sender: nil, path: nil, interface: "org.lector.Test", member: nil) {
            received.append($0)
        }
        var changes: [SignalMessage] = []
        let changed = connection.subscribe(sender: connection.uniqueName, path: "/org/lector/Test",
                                           interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged") {
            changes.append($0)
        }
        connection.flush()
        // From another process.
        let emitted = try run(["dbus-send", "--bus=" + bus.address, "--type=signal", "/x", "org.lector.Test.Ping",
                               "string:from dbus-send", "int32:7"], mergeStderr: true)
        #expect(emitted.status == .exited(0), "\(emitted.output)")
        #expect(spin { received.count == 1 })
        #expect(received.first?.path == "/x")
        #expect(received.first?.member == "Ping")
        #expect(received.first?.interface == "org.lector.Test")
        #expect(received.first?.arguments == [.string("from dbus-send"), .int32(7)])
        #expect(received.first?.sender.hasPrefix(":") == true)
        #expect(received.first?.sender != connection.uniqueName)

        // From ourselves, through the bus.
        connection.emitSignal(path: "/org/lector/Test", interface: "org.lector.Test", name: "Ping",
                              arguments: [.string("self")])
        #expect(spin { received.count == 2 })
        #expect(received.last?.arguments == [.string("self")])
        #expect(received.last?.sender == connection.uniqueName)

        connection.emitPropertiesChanged(path: "/org/lector/Test", interface: "org.lector.Test",
                                         changed: ["Volume": .double(0.5)], invalidated: ["Name"])
        #expect(spin { changes.count == 1 })
        #expect(changes.first?.arguments == [.string("org.lector.Test"), .vardict(["Volume": .double(0.5)]),
                                             .strings(["Name"])])

        subscription.cancel()
        subscription.cancel()
        connection.emitSignal(path: "/org/lector/Test", interface: "org.lector.Test", name: "Ping", arguments: [])
        connection.emitSignal(path: "bad path", interface: "org.lector.Test", name: "Ping", arguments: [])
        spin(milliseconds: 100) { false }
        #expect(received.count == 2)
        changed.cancel()
    }

    @Test func refusesBadRegistrations() throws {
        let bus = try PrivateBus()
        let connection = try DBusConnection.connect(address: bus.address)
        let object = TestObject()
        #expect(throws: GLibError.self) {
            try connection.register(object, path: "/a", interface: "org.lector.Missing", introspectionXML: xml)
        }
        #expect(throws: GLibError.self) {
            try connection.register(object, path: "/a", interface: "org.lector.Test", introspectionXML: "<node")
        }
        #expect(throws: GLibError.self) {
            try connection.register(object, path: "a", interface: "org.lector.Test", introspectionXML: xml)
        }
        let first = try connection.register(object, path: "/a", interface: "org.lector.Test", introspectionXML: xml)
        #expect(throws: GLibError.self) {
            try connection.register(object, path: "/a", interface: "org.lector.Test", introspectionXML: xml)
        }
        first.unregister()
        var lost = false
        _ = connection.ownName("not a name", onAcquired: {}, onLost: { lost = true })
        #expect(spin { lost })
    }
}

/// Drops every method call that reaches a connection (a GDBus message filter that returns NULL), so the
/// peer owning a name never answers, as a hung program would.
private func dropIncomingCalls(on connection: DBusConnection) {
    _ = g_dbus_connection_add_filter(connection.connection, { _, message, incoming, _ in
        guard incoming != 0, let message else { return message }
        if g_dbus_message_get_message_type(message) == G_DBUS_MESSAGE_TYPE_METHOD_CALL {
            g_object_unref(UnsafeMutableRawPointer(message))
            return nil
        }
        return message
    }, nil, nil)
}

extension MainLoopTests {
    @Test func callsMethodsWithoutWaiting() throws {
        let bus = try PrivateBus()
        let connection = try DBusConnection.connect(address: bus.address)
        let object = TestObject()
        let registration = try connection.register(object, path: "/org/lector/Test", interface: "org.lector.Test",
                                                   introspectionXML: xml)
        defer { registration.unregister() }
        let other = try DBusConnection.connect(address: bus.address)

        // A reply with its out-arguments, on the main loop, after call returned.
        var echoed: Result<[Variant], DBusError>?
        let echo = other.call(destination: connection.uniqueName, path: "/org/lector/Test",
                              interface: "org.lector.Test", method: "Echo",
                              arguments: [.string("héllo"), .int32(42)]) { echoed = $0 }
        #expect(echoed == nil)
        #expect(echo.isPending)
        #expect(spin { echoed != nil })
        #expect(try echoed?.get() == [.string("héllo"), .int64(42)])
        #expect(!echo.isPending)

        // Remote errors keep their name and lose GDBus's prefix; invalid names come later, from the loop.
        var failed: DBusError?
        other.call(destination: connection.uniqueName, path: "/org/lector/Test", interface: "org.lector.Test",
                   method: "Fail") { if case .failure(let e) = $0 { failed = e } }
        var noOwner: DBusError?
        other.call(destination: "org.lector.Nobody", path: "/", interface: "org.lector.X", method: "Y",
                   autoStart: false) { if case .failure(let e) = $0 { noOwner = e } }
        var invalid: DBusError?
        other.call(destination: "org.lector.Test", path: "no path", interface: "org.lector.Test",
                   method: "Echo") { if case .failure(let e) = $0 { invalid = e } }
        #expect(invalid == nil)
        #expect(spin { failed != nil && noOwner != nil && invalid != nil })
        #expect(failed?.name == "org.lector.Test.Error.Custom")
        #expect(failed?.message == "custom failure")
        #expect(noOwner?.name == "org.freedesktop.DBus.Error.NameHasNoOwner")
        #expect(invalid?.name == "org.freedesktop.DBus.Error.InvalidArgs")

        // A peer that never answers: the call returns at once, the loop keeps serving, and the time-out
        // comes back as NoReply.
        let hung = try DBusConnection.connect(address: bus.address)
        dropIncomingCalls(on: hung)
        let before = MainContext.monotonicMicroseconds
        var late: DBusError?
        other.call(destination: hung.uniqueName, path: "/org/lector/Test", interface: "org.lector.Test",
                   method: "Echo", arguments: [.string("x"), .int32(1)], timeoutMilliseconds: 300) {
            if case .failure(let e) = $0 { late = e }
        }
        #expect(MainContext.monotonicMicroseconds - before < 100_000)
        var answered: Result<[Variant], DBusError>?
        other.call(destination: connection.uniqueName, path: "/org/lector/Test", interface: "org.lector.Test",
                   method: "Echo", arguments: [.string("meanwhile"), .int32(2)]) { answered = $0 }
        #expect(spin { answered != nil })
        #expect(late == nil)
        #expect(spin { late != nil })
        #expect(late?.name == "org.freedesktop.DBus.Error.NoReply")
        #expect(MainContext.monotonicMicroseconds - before >= 300_000)

        // A cancelled call never calls its closure.
        var cancelledCalled = false
        let cancelled = other.call(destination: hung.uniqueName, path: "/org/lector/Test",
                                   interface: "org.lector.Test", method: "Echo",
                                   arguments: [.string("x"), .int32(1)]) { _ in cancelledCalled = true }
        cancelled.cancel()
        cancelled.cancel()
        #expect(!cancelled.isPending)
        spin(milliseconds: 200) { false }
        #expect(!cancelledCalled)
    }
}
