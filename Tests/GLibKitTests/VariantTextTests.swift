import Testing
@testable import GLibKit

@Suite struct VariantTextTests {
    @Test func parsesTheTextFormatGdbusTakes() throws {
        #expect(try Variant(parsing: "('hello', @a{sv} {'rate': <int32 450>})")
                == .tuple([.string("hello"), .dictionary(valueType: "v", ["rate": .variant(.int32(450))])]))
        #expect(try Variant(parsing: "(int64 -5,)") == .tuple([.int64(-5)]))
        #expect(try Variant(parsing: "5") == .int32(5))
        #expect(try Variant(parsing: "1.5") == .double(1.5))
        #expect(try Variant(parsing: "(objectpath '/a', 'zero')") == .tuple([.objectPath("/a"), .string("zero")]))
        #expect(try Variant(parsing: "()") == .tuple([]))
        #expect(try Variant(parsing: "@as []") == .array(elementType: "s", []))
    }

    @Test func textThatDoesNotParseThrowsGLibsError() {
        #expect(throws: GLibError.self) { try Variant(parsing: "('unclosed'") }
        do {
            _ = try Variant(parsing: "(int32 nonsense,)")
            Issue.record("parsed")
        } catch {
            #expect(error.domain == "g-variant-parse-error-quark" && !error.message.isEmpty, "\(error)")
        }
    }

    @Test func printsWithTypeAnnotationsAndReadsBack() throws {
        let values: [Variant] = [
            .tuple([.int64(5)]), .tuple([.string("it's"), .uint32(7), .bool(true)]), .variant(.double(0.5)),
            .strings(["a", "b"]), .vardict(["k": .string("v")]), .objectPath("/org/lector/Lector"),
            .tuple([.double(.infinity), .byte(255), .int16(-1)]),
        ]
        for value in values {
            #expect(try Variant(parsing: value.text) == value, "\(value.text)")
        }
        #expect(Variant.tuple([.int64(5)]).text == "(int64 5,)")
        #expect(Variant.string("x").text == "'x'")
    }

    @Test func objectPaths() {
        for path in ["/", "/org/lector/Lector", "/a_1/B2"] { #expect(Variant.isObjectPath(path), "\(path)") }
        for path in ["", "org", "/org/", "//", "/a-b", "/a b", "/é"] { #expect(!Variant.isObjectPath(path), "\(path)") }
    }
}

extension MainLoopTests {
    @Test func errorsSayWhetherThePeerOrGDBusReportedThem() throws {
        let bus = try PrivateBus()
        let connection = try DBusConnection.connect(address: bus.address)
        do {
            _ = try connection.call(destination: "org.lector.Nobody", path: "/", interface: "org.lector.X",
                                    method: "Y", autoStart: false)
            Issue.record("answered")
        } catch {
            #expect(error.name == "org.freedesktop.DBus.Error.NameHasNoOwner" && !error.isLocal, "\(error)")
        }
        #expect(!DBusError.failed("made by hand").isLocal)

        // The bus goes away: the call fails in GDBus, with no reply from anyone.
        bus.daemon.kill()
        // SIGKILL is delivered asynchronously: wait until the daemon is gone (or a zombie, its sockets closed).
        let pid = bus.daemon.pid
        #expect(spin(milliseconds: 5_000) {
            guard let bytes = try? readFile("/proc/\(pid)/stat") else { return true }
            let stat = String(decoding: bytes, as: UTF8.self)
            guard let close = stat.lastIndex(of: ")") else { return true }
            return stat[close...].dropFirst(2).first == "Z"
        })
        do {
            _ = try connection.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                    interface: "org.freedesktop.DBus", method: "GetId", timeoutMilliseconds: 2_000)
            Issue.record("answered")
        } catch {
            #expect(error.isLocal, "\(error)")
            #expect(["org.freedesktop.DBus.Error.Failed", "org.freedesktop.DBus.Error.NoReply"].contains(error.name))
        }
    }
}
