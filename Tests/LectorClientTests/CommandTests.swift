@preconcurrency import Glibc
import LectorCommon
import Testing
@testable import LectorClient

@Suite struct SleepDurationTests {
    @Test(arguments: [
        ("20m", 1_200_000_000), ("90s", 90_000_000), ("1h30m", 5_400_000_000), ("1h 30m", 5_400_000_000),
        ("2.5m", 150_000_000), ("20", 1_200_000_000), ("1H", 3_600_000_000), ("0.5", 30_000_000),
    ] as [(String, Int64)])
    func durations(text: String, microseconds: Int64) {
        #expect(SleepDuration.parse(text) == microseconds)
    }

    @Test(arguments: ["", "soon", "m", "20x", "-5m", "0", "0s", "5m3", "1..5m", "nan", "inf"])
    func notDurations(text: String) {
        #expect(SleepDuration.parse(text) == nil)
    }
}

@Suite struct CommandNumberTests {
    @Test func hugeDurationsAndSecondsDoNotTrap() {
        #expect(SleepDuration.parse("1e30") == .max)
        #expect(SleepDuration.parse("99999999999999999999h") == .max)
        #expect(Command.microseconds(1e300) == .max)
        #expect(Command.microseconds(-1e300) == .min)
        #expect(Command.microseconds(-2.5) == -2_500_000)
    }
}

@Suite struct InputFileTests {
    /// A file in /tmp holding `bytes`, removed after `body`.
    private func withFile(_ bytes: [UInt8], _ body: (String) throws -> Void) rethrows {
        let path = "/tmp/lector-input-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).txt"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        defer { unlink(path) }
        try body(path)
    }

    @Test func readsFromTheOffsetToTheEndAndRepairsUTF8() throws {
        try withFile(Array("skip|Caf\u{E9}".utf8) + [0xFF] + Array(" ok\u{7}.".utf8)) { path in
            let file = try Input.openFile(path).get()
            #expect(file.title == path.split(separator: "/").last.map(String.init))
            #expect(file.url == "file://" + path)
            #expect(lseek(file.descriptor, 5, SEEK_SET) == 5)
            #expect(try Input.read(file.descriptor, what: "it").get() == "Café\u{FFFD} ok\u{7}.")
        }
    }

    @Test("a long file: its start to its last line feed within the limit, and the whole text later, from the same offset")
    func readsTheStartOfALongFile() throws {
        let line = Array("Ünïcode line, then CR LF\r\n".utf8)
        let bytes = Array("skip|".utf8) + Array(repeating: line, count: 40).flatMap { $0 } + Array("end, no line feed".utf8)
        try withFile(bytes) { path in
            let file = try Input.openFile(path).get()
            #expect(lseek(file.descriptor, 5, SEEK_SET) == 5)
            let start = try Input.readStart(file.descriptor, what: "it", limit: 100).get()
            #expect(Array(start.text.utf8) == Array(repeating: line, count: 100 / line.count).flatMap { $0 })
            let rest = try #require(start.rest)
            #expect(rest.remainingBytes == bytes.count - 5 - start.text.utf8.count)
            #expect(lseek(file.descriptor, 0, SEEK_CUR) == 5, "pread: the offset does not move")
            let whole = try rest.readWhole().get()
            #expect(Array(whole.utf8) == Array(bytes.dropFirst(5)))
            #expect(try rest.readWhole().get() == whole, "read again from the same offset")
            // Short enough, or no line feed within the limit: read whole at once.
            #expect(lseek(file.descriptor, 5, SEEK_SET) == 5)
            let all = try Input.readStart(file.descriptor, what: "it", limit: 1 << 20).get()
            #expect(all.rest == nil && all.text == whole)
            #expect(lseek(file.descriptor, off_t(bytes.count - 17), SEEK_SET) == bytes.count - 17)
            let tail = try Input.readStart(file.descriptor, what: "it", limit: 10).get()
            #expect(tail.rest == nil && tail.text == "end, no line feed")
        }
    }

    @Test func recognizesSSMLWithoutMovingTheOffset() throws {
        try withFile(Array("<?xml version=\"1.0\"?>\n<speak>Hi</speak>".utf8)) { path in
            let file = try Input.openFile(path).get()
            #expect(file.isSSML)
            #expect(lseek(file.descriptor, 0, SEEK_CUR) == 0)
        }
        try withFile(Array("Plain <b>text</b>".utf8)) { path in
            let file = try Input.openFile(path).get()
            #expect(file.isSSML == false)
        }
    }

    @Test func refusesPipesAndPseudoFiles() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let pipeRead = Input.read(fds[0], what: "a pipe")
        #expect(throws: Input.Failure.self) { try pipeRead.get() }
        if case .failure(let failure) = pipeRead { #expect(failure.message == "cannot read a pipe: not a regular file") }
        let proc = open("/proc/self/status", O_RDONLY)
        defer { close(proc) }
        #expect(Input.unreadable(proc) == "not a regular file (a kernel pseudo file)")
    }
}
