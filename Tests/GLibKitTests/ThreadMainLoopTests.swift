import Foundation
@preconcurrency import Glibc
import Synchronization
import Testing
@testable import GLibKit

/// Answers `Where()` with the id of the thread that handled the call (`pthread_self`).
private final class WhereObject: DBusObject {
    static let xml = """
        <node><interface name="org.lector.Where">
          <method name="Where"><arg type="t" direction="out"/></method>
        </interface></node>
        """

    func call(method: String, interface: String, arguments: [Variant], sender: String) throws(DBusError) -> [Variant] {
        [.uint64(UInt64(pthread_self()))]
    }
}

extension MainLoopTests {
    @Test func aThreadMainLoopServesOnItsOwnThread() throws {
        let bus = try PrivateBus()
        let address = bus.address
        let loop = ThreadMainLoop()
        let served = DispatchSemaphore(value: 0), ended = DispatchSemaphore(value: 0)
        let setUp = Mutex<(name: String, thread: UInt64)?>(nil)
        let thread = Thread {
            var connection: DBusConnection?
            loop.run {
                do {
                    let opened = try DBusConnection.connect(address: address)
                    _ = try opened.register(WhereObject(), path: "/org/lector/Where", interface: "org.lector.Where",
                                            introspectionXML: WhereObject.xml)
                    setUp.withLock { $0 = (opened.uniqueName, UInt64(pthread_self())) }
                    connection = opened
                } catch {
                    Issue.record("\(error)")
                }
                served.signal()
                return connection != nil
            }
            withExtendedLifetime(connection) {}
            ended.signal()
        }
        thread.start()
        served.wait()
        let (name, serving) = try #require(setUp.withLock { $0 })

        // Nothing iterates the default context here: the answer can only come from the loop's thread.
        let caller = try DBusConnection.connect(address: bus.address)
        let reply = try caller.call(destination: name, path: "/org/lector/Where", interface: "org.lector.Where",
                                    method: "Where", timeoutMilliseconds: 5_000)
        let callingThread = UInt64(pthread_self())
        #expect(reply == [.uint64(serving)] && serving != callingThread, "\(reply), served by \(serving), called from \(callingThread)")

        loop.quit()
        #expect(ended.wait(timeout: .now() + 5) == .success)
    }

    @Test func quitBeforeRunIsNotLost() {
        let loop = ThreadMainLoop()
        loop.quit()
        var ran = false
        loop.run { ran = true; return true }
        #expect(ran)
    }
}
