@preconcurrency import Glibc
import SystemKit
import Testing

/// A pipe: (read end, write end).
private func makePipe() throws -> (FileDescriptor, FileDescriptor) {
    var fds: [Int32] = [0, 0]
    try #require(pipe(&fds) == 0)
    return (FileDescriptor(rawValue: fds[0]), FileDescriptor(rawValue: fds[1]))
}

/// A new temporary file holding `bytes`, opened for reading; removed from its folder at once.
private func temporaryFile(_ bytes: [UInt8]) throws -> FileDescriptor {
    var template = Array("/tmp/systemkit-XXXXXX".utf8CString)
    let fd = FileDescriptor(rawValue: template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) })
    try #require(fd.rawValue >= 0)
    template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
    try fd.writeAll(bytes)
    try fd.seek(offset: 0, from: .start)
    return fd
}

@Suite("FileDescriptor")
struct FileDescriptorTests {
    @Test func bytesWrittenToAPipeAreReadBackAndItsEndIsZero() throws {
        let (reader, writer) = try makePipe()
        defer { try? reader.close() }
        try writer.writeAll(Array("hello".utf8))
        try writer.close()
        var buffer = [UInt8](repeating: 0, count: 16)
        #expect(try reader.read(into: &buffer, at: 2) == 5)
        #expect(Array(buffer[2..<7]) == Array("hello".utf8))
        #expect(try reader.read(into: &buffer) == 0)
    }

    @Test func anEmptyNonBlockingPipeWouldBlockAndThatIsNilForWhoWantsAnAnswer() throws {
        let (reader, writer) = try makePipe()
        defer { try? reader.close(); try? writer.close() }
        #expect(try !reader.isNonBlocking())
        try reader.setNonBlocking()
        #expect(try reader.isNonBlocking())
        var buffer = [UInt8](repeating: 0, count: 4)
        #expect(throws: Errno.wouldBlock) { _ = try reader.read(into: &buffer) }
        #expect(try nilIfWouldBlock { () throws(Errno) -> Int in try reader.read(into: &buffer) } == nil)
        #expect(try !reader.wait(for: .readable, timeoutMilliseconds: 0))
        _ = try writer.write(Array("ab".utf8)[...])
        #expect(try reader.wait(for: .readable, timeoutMilliseconds: 0))
        #expect(try nilIfWouldBlock { () throws(Errno) -> Int in try reader.read(into: &buffer) } == 2)
        try reader.setNonBlocking(false)
        #expect(try !reader.isNonBlocking())
    }

    @Test func writeAllWaitsForRoomOnAFullNonBlockingPipe() throws {
        let (reader, writer) = try makePipe()
        defer { try? reader.close(); try? writer.close() }
        try writer.setNonBlocking()
        let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0) }  // several pipe buffers
        let drained = Drain(reader, count: bytes.count)
        try writer.writeAll(bytes)
        #expect(drained.join() == bytes)
    }

    @Test func writingToAPipeWithNoReaderIsABrokenPipe() throws {
        let (reader, writer) = try makePipe()
        defer { try? writer.close() }
        try reader.close()
        // Left ignored, as other suites of this process do: putting the default back could kill the process
        // while a test running in parallel writes to a closed pipe.
        _ = signal(SIGPIPE, SIG_IGN)
        #expect(throws: Errno.brokenPipe) { try writer.writeAll([1, 2, 3]) }
    }

    @Test func preadLeavesTheOffsetAndDuplicatesShareIt() throws {
        let fd = try temporaryFile(Array("0123456789".utf8))
        defer { try? fd.close() }
        try fd.seek(offset: 3, from: .start)
        var head = [UInt8](repeating: 0, count: 4)
        let n = try head.withUnsafeMutableBytes { (raw) throws(Errno) -> Int in try fd.read(fromAbsoluteOffset: 5, into: raw) }
        #expect(n == 4 && head == Array("5678".utf8))
        #expect(try fd.seek(offset: 0, from: .current) == 3)
        let copy = try fd.duplicate()
        defer { try? copy.close() }
        #expect(copy.rawValue >= 3 && copy != fd)
        try copy.seek(offset: -2, from: .end)
        #expect(try fd.seek(offset: 0, from: .current) == 8)
    }

    @Test func statusTellsTheKindSizeAndDevice() throws {
        let fd = try temporaryFile(Array(repeating: 7, count: 1234))
        defer { try? fd.close() }
        let file = try fd.status()
        #expect(file.kind == .regular && file.size == 1234)
        #expect(file.device == (try FileStatus(path: "/tmp")).device)
        #expect(try FileStatus(path: "/").kind == .directory)
        let (reader, writer) = try makePipe()
        defer { try? reader.close(); try? writer.close() }
        #expect(try reader.status().kind == .fifo)
        #expect(try FileDescriptor.open("/dev/null", O_RDONLY | O_CLOEXEC).status().kind == .characterDevice)
    }

    @Test func failuresAreTypedErrnos() throws {
        #expect(throws: Errno(rawValue: ENOENT)) { _ = try FileDescriptor.open("/nonexistent/x", O_RDONLY) }
        #expect(Errno(rawValue: ENOENT).description == "No such file or directory")
        #expect(throws: Errno(rawValue: EBADF)) { _ = try FileDescriptor(rawValue: -1).status() }
    }

    @Test func theRetryHelperCallsAgainOnlyOnEINTR() throws {
        var calls = 0
        let value = try retryingOnInterrupt { () -> Int32 in
            calls += 1
            if calls < 3 { errno = EINTR; return -1 }
            return 42
        }
        #expect(value == 42 && calls == 3)
        calls = 0
        #expect(throws: Errno(rawValue: EACCES)) {
            _ = try retryingOnInterrupt { () -> Int32 in calls += 1; errno = EACCES; return -1 }
        }
        #expect(calls == 1)
    }

    @Test func aDescriptorPassedOverASocketPairReadsTheSameFileAndAClosedPeerIsAnEmptyMessage() throws {
        let (near, far) = try FileDescriptor.socketPair()
        defer { try? near.close() }
        let file = try temporaryFile(Array("the document".utf8))
        try near.send(Array("pdf\nsecret".utf8), passing: file)
        try file.close()
        let (bytes, passed) = try far.receiveDescriptor(maximumBytes: 64)
        #expect(String(decoding: bytes, as: UTF8.self) == "pdf\nsecret")
        let received = try #require(passed)
        defer { try? received.close() }
        #expect(fcntl(received.rawValue, F_GETFD) & FD_CLOEXEC != 0)
        var buffer = [UInt8](repeating: 0, count: 32)
        #expect(try received.read(into: &buffer) == 12)
        #expect(Array(buffer[..<12]) == Array("the document".utf8))
        try far.close()
        #expect(throws: Errno.brokenPipe) { try near.send([1], passing: received) }
        let (near2, far2) = try FileDescriptor.socketPair()
        try near2.close()
        let end = try far2.receiveDescriptor(maximumBytes: 8)
        #expect(end.bytes.isEmpty && end.descriptor == nil)
        try far2.close()
    }
}

/// Reads `count` bytes from `fd` on a thread of its own, so that a writer can block meanwhile.
private final class Drain: @unchecked Sendable {
    private var thread = pthread_t()
    private let fd: FileDescriptor
    private let count: Int
    /// Written by the thread, read after `join`.
    private var bytes: [UInt8] = []

    init(_ fd: FileDescriptor, count: Int) {
        self.fd = fd
        self.count = count
        let context = Unmanaged.passRetained(self).toOpaque()
        pthread_create(&thread, nil, { pointer in
            let drain = Unmanaged<Drain>.fromOpaque(pointer!).takeRetainedValue()
            var chunk = [UInt8](repeating: 0, count: 4096)
            while drain.bytes.count < drain.count, let n = try? drain.fd.readWaiting(into: &chunk), n > 0 {
                drain.bytes += chunk[0..<n]
            }
            return nil
        }, context)
    }

    func join() -> [UInt8] {
        pthread_join(thread, nil)
        return bytes
    }
}
