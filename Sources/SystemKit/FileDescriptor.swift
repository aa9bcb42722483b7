@preconcurrency import Glibc

/// An open file descriptor (a POSIX `int`), with the operations Lector needs; modelled on Apple's
/// swift-system `FileDescriptor`. A plain value: it neither owns nor closes the descriptor, whoever opened
/// it calls ``close()``.
///
/// Every operation retries on `EINTR` (``retryingOnInterrupt(_:)``) and throws any other failure as an
/// ``Errno``; on a non-blocking descriptor that is not ready, that is ``Errno/wouldBlock`` (see
/// ``nilIfWouldBlock(_:)`` for callers that take it as an answer).
public struct FileDescriptor: RawRepresentable, Hashable, Sendable {
    /// The C descriptor.
    public let rawValue: CInt

    /// The descriptor `rawValue` (not checked: an invalid one makes operations throw `EBADF`).
    public init(rawValue: CInt) { self.rawValue = rawValue }

    /// Descriptor 0.
    public static let standardInput = FileDescriptor(rawValue: 0)
    /// Descriptor 1.
    public static let standardOutput = FileDescriptor(rawValue: 1)
    /// Descriptor 2.
    public static let standardError = FileDescriptor(rawValue: 2)

    /// Opens `path` (open(2)) with `flags` (`O_RDONLY | O_CLOEXEC`, …) and, when they include `O_CREAT`,
    /// permissions `mode` (before the umask).
    ///
    /// - Throws: the `Errno` of open(2), e.g. `ENOENT`, or ``Errno/tooManySymbolicLinks`` for a link refused
    ///   by `O_NOFOLLOW`.
    public static func open(_ path: String, _ flags: CInt, mode: mode_t = 0o666) throws(Errno) -> FileDescriptor {
        FileDescriptor(rawValue: try retryingOnInterrupt { Glibc.open(path, flags, mode) })
    }

    /// Reads up to `buffer.count` bytes (read(2)). Returns how many were read, 0 at end of file.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        try retryingOnInterrupt { Glibc.read(rawValue, buffer.baseAddress, buffer.count) }
    }

    /// Reads up to `bytes.count - index` bytes into `bytes` from `index` on (read(2)). Returns how many were
    /// read, 0 at end of file.
    public func read(into bytes: inout [UInt8], at index: Int = 0) throws(Errno) -> Int {
        precondition(index >= 0 && index <= bytes.count)
        // `withUnsafeMutableBytes` rethrows untyped: the error travels in a `Result`.
        return try bytes.withUnsafeMutableBytes { raw in
            Result { () throws(Errno) -> Int in try read(into: UnsafeMutableRawBufferPointer(rebasing: raw[index...])) }
        }.get()
    }

    /// Reads up to `buffer.count` bytes from byte `offset` of the file (pread(2)), without moving the
    /// descriptor's offset. Returns how many were read, 0 at end of file.
    public func read(fromAbsoluteOffset offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        try retryingOnInterrupt { Glibc.pread(rawValue, buffer.baseAddress, buffer.count, off_t(offset)) }
    }

    /// Writes up to `buffer.count` bytes (write(2)). Returns how many were written (perhaps fewer).
    public func write(_ buffer: UnsafeRawBufferPointer) throws(Errno) -> Int {
        try retryingOnInterrupt { Glibc.write(rawValue, buffer.baseAddress, buffer.count) }
    }

    /// Writes up to `bytes.count` bytes of `bytes` (write(2)). Returns how many were written (perhaps fewer).
    public func write(_ bytes: ArraySlice<UInt8>) throws(Errno) -> Int {
        try bytes.withUnsafeBytes { raw in Result { () throws(Errno) -> Int in try write(raw) } }.get()
    }

    /// Writes all of `buffer`, blocking until it is done: short writes are continued, and a non-blocking
    /// descriptor that is not ready is waited for (poll(2)).
    ///
    /// - Throws: the `Errno` of the write that failed (``Errno/brokenPipe``: the reader is gone), or
    ///   ``Errno/ioError`` for a write that wrote nothing.
    public func writeAll(_ buffer: UnsafeRawBufferPointer) throws(Errno) {
        var offset = 0
        while offset < buffer.count {
            let rest = UnsafeRawBufferPointer(rebasing: buffer[offset...])
            guard let n = try nilIfWouldBlock({ () throws(Errno) -> Int in try write(rest) }) else {
                _ = try wait(for: .writable)
                continue
            }
            guard n > 0 else { throw .ioError }
            offset += n
        }
    }

    /// Writes all of `bytes` (see ``writeAll(_:)-(UnsafeRawBufferPointer)``).
    public func writeAll(_ bytes: [UInt8]) throws(Errno) {
        try bytes.withUnsafeBytes { raw in Result { () throws(Errno) in try writeAll(raw) } }.get()
    }

    /// Reads like ``read(into:at:)``, blocking until something can be read: a non-blocking descriptor that is
    /// not ready is waited for (poll(2)). Returns how many bytes were read, 0 at end of file.
    public func readWaiting(into bytes: inout [UInt8]) throws(Errno) -> Int {
        while true {
            if let n = try nilIfWouldBlock({ () throws(Errno) -> Int in try read(into: &bytes) }) { return n }
            _ = try wait(for: .readable)
        }
    }

    /// What ``wait(for:timeoutMilliseconds:)`` waits for.
    public enum Readiness: Sendable {
        /// Data to read, or end of file (`POLLIN`).
        case readable
        /// Room to write (`POLLOUT`).
        case writable
    }

    /// Waits until the descriptor is `readiness` (or in error, or hung up) or `timeoutMilliseconds` passed
    /// (poll(2); -1 waits for ever, 0 only looks). Returns whether it is ready (false: timed out).
    public func wait(for readiness: Readiness, timeoutMilliseconds: CInt = -1) throws(Errno) -> Bool {
        var request = pollfd(fd: rawValue, events: Int16(readiness == .readable ? POLLIN : POLLOUT), revents: 0)
        return try retryingOnInterrupt { poll(&request, 1, timeoutMilliseconds) } > 0
    }

    /// Where ``seek(offset:from:)`` counts from.
    public enum SeekOrigin: Sendable {
        /// `SEEK_SET`: the start of the file.
        case start
        /// `SEEK_CUR`: the current offset.
        case current
        /// `SEEK_END`: the end of the file.
        case end
    }

    /// Moves the descriptor's offset (lseek(2)) to `offset` bytes from `origin`; returns the new offset from
    /// the start. `seek(offset: 0, from: .current)` tells the offset.
    @discardableResult
    public func seek(offset: Int64, from origin: SeekOrigin) throws(Errno) -> Int64 {
        let whence = switch origin {
        case .start: SEEK_SET
        case .current: SEEK_CUR
        case .end: SEEK_END
        }
        return Int64(try retryingOnInterrupt { lseek(rawValue, off_t(offset), whence) })
    }

    /// A new descriptor for the same open file, close-on-exec, numbered `minimum` or above
    /// (`fcntl(F_DUPFD_CLOEXEC)`); the caller closes it.
    public func duplicate(minimum: CInt = 3) throws(Errno) -> FileDescriptor {
        FileDescriptor(rawValue: try retryingOnInterrupt { fcntl(rawValue, F_DUPFD_CLOEXEC, minimum) })
    }

    /// Whether `O_NONBLOCK` is set (`fcntl(F_GETFL)`).
    public func isNonBlocking() throws(Errno) -> Bool {
        try retryingOnInterrupt { fcntl(rawValue, F_GETFL) } & O_NONBLOCK != 0
    }

    /// Sets or clears `O_NONBLOCK` (`fcntl(F_SETFL)`), keeping the other status flags.
    public func setNonBlocking(_ nonBlocking: Bool = true) throws(Errno) {
        let flags = try retryingOnInterrupt { fcntl(rawValue, F_GETFL) }
        let wanted = nonBlocking ? flags | O_NONBLOCK : flags & ~O_NONBLOCK
        if wanted != flags { _ = try retryingOnInterrupt { fcntl(rawValue, F_SETFL, wanted) } }
    }

    /// What `fstat(2)` says of the open file.
    public func status() throws(Errno) -> FileStatus {
        var st = stat()
        _ = try retryingOnInterrupt { fstat(rawValue, &st) }
        return FileStatus(st)
    }

    /// Closes the descriptor (close(2)). Not retried on `EINTR`: Linux has released the descriptor by then,
    /// and a second close could close one opened meanwhile.
    ///
    /// - Throws: the `Errno` of close(2) (`EIO`: written data may be lost).
    public func close() throws(Errno) {
        if Glibc.close(rawValue) == -1 {
            let error = Errno.current
            if error != .interrupted { throw error }
        }
    }
}

/// What `stat(2)`/`fstat(2)` say of a file: its kind, size, device and modification time.
public struct FileStatus: Hashable, Sendable {
    /// The kind of file (`st_mode & S_IFMT`).
    public enum Kind: Hashable, Sendable {
        /// `S_IFREG`: a regular file.
        case regular
        /// `S_IFDIR`: a directory.
        case directory
        /// `S_IFIFO`: a FIFO or pipe.
        case fifo
        /// `S_IFCHR`: a character device (a terminal, `/dev/zero`).
        case characterDevice
        /// `S_IFBLK`: a block device.
        case blockDevice
        /// `S_IFSOCK`: a socket.
        case socket
        /// `S_IFLNK`: a symbolic link (only from lstat(2), which this type does not call).
        case symbolicLink
        /// Any other `S_IFMT` value.
        case unknown
    }

    /// The kind of file.
    public var kind: Kind
    /// The size in bytes (`st_size`; 0 for most kernel pseudo files).
    public var size: Int64
    /// The device the file is on (`st_dev`).
    public var device: UInt64
    /// When its content last changed (`st_mtim`), ns since the epoch; a folder's changes when an entry is
    /// added, removed or renamed.
    public var modified: Int64

    /// The status of the file at `path` (stat(2): a symbolic link is followed).
    ///
    /// - Throws: the `Errno` of stat(2), e.g. `ENOENT`.
    public init(path: String) throws(Errno) {
        var st = stat()
        _ = try retryingOnInterrupt { stat(path, &st) }
        self.init(st)
    }

    init(_ st: stat) {
        kind = switch st.st_mode & S_IFMT {
        case S_IFREG: .regular
        case S_IFDIR: .directory
        case S_IFIFO: .fifo
        case S_IFCHR: .characterDevice
        case S_IFBLK: .blockDevice
        case S_IFSOCK: .socket
        case S_IFLNK: .symbolicLink
        default: .unknown
        }
        size = Int64(st.st_size)
        device = UInt64(st.st_dev)
        modified = Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
    }
}
