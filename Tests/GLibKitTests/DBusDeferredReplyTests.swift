@preconcurrency import Glibc
import Testing
@testable import GLibKit

private let deferringXML = """
<node>
  <interface name="org.lector.Later">
    <method name="Later">
      <arg name="text" type="s" direction="in"/><arg name="number" type="x" direction="out"/>
    </method>
    <method name="Now"><arg name="text" type="s" direction="out"/></method>
    <property name="Name" type="s" access="read"/>
  </interface>
</node>
"""

/// Answers `Later` when the test says so, `Now` at once.
private final class DeferringObject: DBusDeferringObject {
    var pending: [(text: String, sender: String, reply: DBusPendingReply)] = []

    func answersLater(method: String, interface: String) -> Bool { method == "Later" }

    func call(method: String, interface: String, arguments: [Variant], sender: String, reply: DBusPendingReply) {
        pending.append((arguments.first?.string ?? "", sender, reply))
    }

    func call(method: String, interface: String, arguments: [Variant], sender: String) throws(DBusError) -> [Variant] {
        [.string("now")]
    }

    func property(_ name: String, interface: String) throws(DBusError) -> Variant { .string("deferring") }
}

extension MainLoopTests {
    @Test func answersMethodCallsLater() throws {
        let bus = try PrivateBus()
        let connection = try DBusConnection.connect(address: bus.address)
        let object = DeferringObject()
        let registration = try connection.register(object, path: "/org/lector/Later", interface: "org.lector.Later",
                                                   introspectionXML: deferringXML)
        defer { registration.unregister() }
        let client = try DBusConnection.connect(address: bus.address)
        func call(_ method: String, _ arguments: [Variant] = [], into result: @escaping (Result<[Variant], DBusError>) -> Void) {
            client.call(destination: connection.uniqueName, path: "/org/lector/Later", interface: "org.lector.Later",
                        method: method, arguments: arguments, reply: result)
        }

        // Four calls wait; meanwhile other methods and properties are answered at once.
        var answers: [String: Result<[Variant], DBusError>] = [:]
        for text in ["ok", "error", "wrong type", "dropped"] {
            call("Later", [.string(text)]) { answers[text] = $0 }
        }
        #expect(spin { object.pending.count == 4 })
        #expect(object.pending.allSatisfy { $0.sender == client.uniqueName })
        var now: Result<[Variant], DBusError>?
        call("Now") { now = $0 }
        var name: Result<[Variant], DBusError>?
        client.call(destination: connection.uniqueName, path: "/org/lector/Later", interface: "org.freedesktop.DBus.Properties",
                    method: "Get", arguments: [.string("org.lector.Later"), .string("Name")]) { name = $0 }
        #expect(spin { now != nil && name != nil })
        #expect(try now?.get() == [.string("now")])
        #expect(try name?.get() == [.variant(.string("deferring"))])
        #expect(answers.isEmpty)

        // The answers: converted to the introspected type; an error keeps its name; only the first counts; a
        // result of the wrong type and a reply dropped unanswered come back as Failed.
        var replies = object.pending.map(\.reply)
        object.pending = []
        replies[0].succeed([.int32(7)])
        replies[0].fail(.failed("too late"))
        #expect(replies[0].isAnswered)
        replies[1].fail(DBusError(name: "org.lector.Later.Error.Custom", message: "custom failure"))
        replies[2].succeed([.string("seven")])
        #expect(!replies[3].isAnswered)
        replies.removeLast()
        #expect(spin { answers.count == 4 })
        #expect(try answers["ok"]?.get() == [.int64(7)])
        guard case .failure(let custom)? = answers["error"], case .failure(let wrong)? = answers["wrong type"],
              case .failure(let dropped)? = answers["dropped"] else {
            Issue.record("expected three errors: \(answers)")
            return
        }
        #expect(custom.name == "org.lector.Later.Error.Custom" && custom.message == "custom failure")
        #expect(wrong.name == "org.freedesktop.DBus.Error.Failed")
        #expect(dropped.name == "org.freedesktop.DBus.Error.Failed")
        #expect(dropped.message.contains("not answered"))
    }
}
