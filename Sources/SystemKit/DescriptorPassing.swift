@preconcurrency import Glibc
internal import CLectorFD

extension FileDescriptor {
    /// A connected pair of Unix sockets (socketpair(2), `AF_UNIX`, `SOCK_SEQPACKET`, close-on-exec): each
    /// ``send(_:passing:)`` arrives whole in one ``receiveDescriptor(maximumBytes:)``, and closing one end
    /// gives the other an end of stream. The caller closes both.
    ///
    /// - Throws: the `Errno` of socketpair(2), e.g. `EMFILE`.
    public static func socketPair() throws(Errno) -> (FileDescriptor, FileDescriptor) {
        var ends: [CInt] = [-1, -1]
        _ = try retryingOnInterrupt {
            socketpair(AF_UNIX, CInt(SOCK_SEQPACKET.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0, &ends)
        }
        return (FileDescriptor(rawValue: ends[0]), FileDescriptor(rawValue: ends[1]))
    }

    /// Sends `bytes` (at least one) with a copy of `descriptor` over this Unix socket, in one message
    /// (sendmsg(2) with `SCM_RIGHTS`, unix(7)). The receiver gets its own descriptor for the same open file;
    /// the caller still owns `descriptor`.
    ///
    /// - Throws: the `Errno` of sendmsg(2): ``Errno/brokenPipe`` when the peer has closed its end,
    ///   ``Errno/wouldBlock`` on a non-blocking socket whose buffer is full, ``Errno/ioError`` for a short send.
    public func send(_ bytes: [UInt8], passing descriptor: FileDescriptor) throws(Errno) {
        precondition(!bytes.isEmpty, "a message that carries a descriptor needs at least one byte")
        let sent = try bytes.withUnsafeBytes { raw in
            Result { () throws(Errno) -> Int in
                try retryingOnInterrupt { lector_send_fd(rawValue, raw.baseAddress!, raw.count, descriptor.rawValue) }
            }
        }.get()
        if sent != bytes.count { throw .ioError }
    }

    /// Receives one message of at most `maximumBytes` bytes from this Unix socket and the descriptor it carries
    /// (recvmsg(2), `SCM_RIGHTS`), close-on-exec and owned by the caller. An empty message with no descriptor
    /// means the peer closed its end.
    ///
    /// - Throws: the `Errno` of recvmsg(2) (``Errno/wouldBlock`` on a non-blocking socket with nothing to read).
    public func receiveDescriptor(maximumBytes: Int) throws(Errno) -> (bytes: [UInt8], descriptor: FileDescriptor?) {
        var bytes = [UInt8](repeating: 0, count: max(1, maximumBytes))
        var received: CInt = -1
        let count = try bytes.withUnsafeMutableBytes { raw in
            Result { () throws(Errno) -> Int in
                try retryingOnInterrupt { lector_receive_fd(rawValue, raw.baseAddress!, raw.count, &received) }
            }
        }.get()
        return (Array(bytes[..<count]), received >= 0 ? FileDescriptor(rawValue: received) : nil)
    }
}
