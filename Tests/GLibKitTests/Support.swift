@preconcurrency import Glibc
@testable import GLibKit
import SystemKit

/// Iterates the default main context until `done()` or `milliseconds` pass; returns `done()`.
@discardableResult
func spin(milliseconds: Int64 = 5_000, until done: () -> Bool) -> Bool {
    let deadline = MainContext.monotonicMicroseconds + milliseconds * 1_000
    while !done() && MainContext.monotonicMicroseconds < deadline {
        if !MainContext.iterate(mayBlock: false) { usleep(500) }
    }
    return done()
}

/// Runs `argv` (stderr folded into stdout when `mergeStderr`), serving the main loop meanwhile; returns
/// its exit status and output.
func run(_ argv: [String], mergeStderr: Bool = false) throws -> (status: GLibKit.ExitStatus?, output: String) {
    let command = mergeStderr ? ["sh", "-c", "\"$@\" 2>&1", "sh"] + argv : argv
    let child = try ChildProcess(argv: command)
    child.closeStdin()
    var output: [UInt8] = []
    var status: GLibKit.ExitStatus?
    var eof = false
    let watch = MainContext.watch(fd: child.stdoutFD) { _ in
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = read(child.stdoutFD.rawValue, &buffer, buffer.count)
        if n > 0 { output += buffer[0..<n]; return true }
        eof = true
        return false
    }
    child.onExit { status = $0 }
    spin(milliseconds: 10_000) { status != nil && eof }
    watch.cancel()
    return (status, String(decoding: output, as: UTF8.self))
}

/// A private message bus (`dbus-daemon --session`) for one test; killed when released.
final class PrivateBus {
    let daemon: ChildProcess
    let address: String

    init() throws {
        daemon = try ChildProcess(argv: ["dbus-daemon", "--session", "--nofork", "--print-address=1"])
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while read(daemon.stdoutFD.rawValue, &byte, 1) == 1, byte != UInt8(ascii: "\n") { line.append(byte) }
        address = String(decoding: line, as: UTF8.self)
    }

    deinit {
        daemon.kill()
    }
}

/// The resident set size of this process in KiB (/proc/self/statm).
func residentKiB() -> Int {
    guard let bytes = try? readFile("/proc/self/statm") else { return 0 }
    let fields = String(decoding: bytes, as: UTF8.self).split(separator: " ")
    return (Int(fields[1]) ?? 0) * Int(getpagesize()) / 1024
}
