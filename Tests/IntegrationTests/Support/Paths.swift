import Foundation

/// Where the integration tests find the package, the `lector` binary and the shared bad inputs.
enum Paths {
    /// The package root: two folders above `Tests/IntegrationTests/Support`.
    static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // Support
        .deletingLastPathComponent()  // IntegrationTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()  // package root

    /// The `lector` binary under test: `$LECTOR_BIN` when set; else `lector` beside the running test
    /// executable (the same build folder, whatever `--scratch-path` was used); else
    /// `<package root>/.build/debug/lector`.
    static let lectorBinary: String = {
        if let path = ProcessInfo.processInfo.environment["LECTOR_BIN"], !path.isEmpty {
            return path
        }
        if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            let sibling = URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("lector").path
            if FileManager.default.isExecutableFile(atPath: sibling) {
                return sibling
            }
        }
        return packageRoot.appendingPathComponent(".build/debug/lector").path
    }()

    /// The collection of hostile inputs the tests carry: `<package root>/Tests/Fixtures/bad-inputs`.
    static let badInputs: URL = packageRoot.appendingPathComponent("Tests/Fixtures/bad-inputs", isDirectory: true)

    /// Finds `name` on `PATH` (or returns it unchanged when it contains a slash).
    static func executable(_ name: String) -> String? {
        if name.contains("/") {
            return FileManager.default.isExecutableFile(atPath: name) ? name : nil
        }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for dir in path.split(separator: ":") {
            let candidate = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) {
                return candidate
            }
        }
        return nil
    }

    /// Creates a fresh private folder (mode 0700) under the temporary directory.
    static func makeTemporaryDirectory(prefix: String) throws -> URL {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array("\(base)/\(prefix).XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer -> Bool in
            mkdtemp(buffer.baseAddress!) != nil
        }
        guard made else {
            throw HarnessError("mkdtemp failed in \(base): errno \(errno)")
        }
        let path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return URL(fileURLWithPath: path, isDirectory: true)
    }
}

/// A failure of the test harness itself (a tool missing, a server that did not come up), with a message.
struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
