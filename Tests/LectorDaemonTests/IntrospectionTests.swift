#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Testing
@testable import LectorDaemon

/// The daemon embeds the introspection XML; what it exports must be exactly what data/ installs.
@Suite struct IntrospectionTests {
    static let root: String = {
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        while let last = parts.popLast(), last != "Tests" {}
        return parts.joined(separator: "/")
    }()

    static func read(_ relative: String) -> String? {
        guard let f = fopen(root + "/" + relative, "rb") else { return nil }
        defer { fclose(f) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = fread(&buffer, 1, buffer.count, f)
            if n == 0 { break }
            bytes += buffer[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func lectorInterfaceMatchesData() {
        #expect(Introspection.lector + "\n" == Self.read("data/org.lector.Lector1.xml"), "run scripts/update-introspection")
    }

    @Test func mprisInterfacesMatchData() {
        #expect(Introspection.mpris + "\n" == Self.read("data/org.mpris.MediaPlayer2.xml"), "run scripts/update-introspection")
    }
}
