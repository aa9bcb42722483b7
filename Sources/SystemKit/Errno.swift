@preconcurrency import Glibc

/// The error number of a failed system call (`errno`, errno(3)), thrown by ``FileDescriptor``'s operations;
/// modelled on Apple's swift-system `Errno`.
public struct Errno: RawRepresentable, Error, Hashable, Sendable, CustomStringConvertible {
    /// The C value (`EINTR`, `EAGAIN`, …).
    public let rawValue: CInt

    /// The error with C value `rawValue`.
    public init(rawValue: CInt) { self.rawValue = rawValue }

    /// The calling thread's `errno` now: read it right after the call that failed.
    public static var current: Errno { Errno(rawValue: errno) }

    /// `EINTR`: a signal interrupted the call before it did anything; ``retryingOnInterrupt(_:)`` calls again.
    public static let interrupted = Errno(rawValue: EINTR)
    /// `EAGAIN` (the same value as `EWOULDBLOCK` on Linux): a non-blocking descriptor is not ready.
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    /// `EPIPE`: writing to a pipe whose reader is gone.
    public static let brokenPipe = Errno(rawValue: EPIPE)
    /// `ELOOP`: a symbolic link where `O_NOFOLLOW` refuses one (or too many links).
    public static let tooManySymbolicLinks = Errno(rawValue: ELOOP)
    /// `EIO`: an input/output error; also what a write that wrote nothing is reported as.
    public static let ioError = Errno(rawValue: EIO)

    /// The C library's message for it (`strerror`), e.g. "No such file or directory".
    public var description: String { String(cString: strerror(rawValue)) }
}

/// Calls `body`, one system call that returns -1 and sets `errno` on failure, again for as long as it fails
/// with `EINTR` (a signal arrived before it did anything; signal(7), "Interruption of system calls").
/// The one retry loop of Lector: every read, write, open and `fcntl` of ``FileDescriptor`` goes through it.
///
/// - Returns: what `body` returned (not -1).
/// - Throws: the `Errno` of any other failure.
@inlinable
public func retryingOnInterrupt<Value: FixedWidthInteger>(_ body: () -> Value) throws(Errno) -> Value {
    while true {
        let result = body()
        if result != -1 { return result }
        let error = Errno.current
        if error != .interrupted { throw error }
    }
}

/// The value of `body`, or nil when it failed with `EAGAIN`/`EWOULDBLOCK`: for a caller of a non-blocking
/// descriptor that takes "not ready" as an answer (wait for the main loop's next readiness), not an error.
///
/// - Throws: any other `Errno` of `body`.
@inlinable
public func nilIfWouldBlock<Value>(_ body: () throws(Errno) -> Value) throws(Errno) -> Value? {
    do throws(Errno) {
        return try body()
    } catch .wouldBlock {
        return nil
    }
}
