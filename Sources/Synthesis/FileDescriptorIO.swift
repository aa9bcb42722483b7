@preconcurrency import Glibc

/// Blocking I/O on raw file descriptors for the worker's pipes.
enum FileDescriptorIO {
    /// Writes all of `bytes` to `fd`, retrying on EINTR and short writes and waiting with poll(2) if the
    /// descriptor happens to be non-blocking. Returns false on any other error (EPIPE: the reader is gone).
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        if bytes.isEmpty { return true }
        return bytes.withUnsafeBytes { raw -> Bool in
            guard let base = raw.baseAddress else { return true }
            var offset = 0
            while offset < raw.count {
                let n = write(fd, base + offset, raw.count - offset)
                if n > 0 {
                    offset += n
                    continue
                }
                let error = errno
                if n < 0 && error == EINTR { continue }
                if n < 0 && (error == EAGAIN || error == EWOULDBLOCK) {
                    var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&p, 1, -1)
                    continue
                }
                return false
            }
            return true
        }
    }

    /// Reads up to `buffer.count` bytes, retrying on EINTR and waiting with poll(2) on EAGAIN.
    /// Returns the byte count (0 at end of file) or nil on error.
    static func read(_ fd: Int32, into buffer: inout [UInt8]) -> Int? {
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n >= 0 { return n }
            let error = errno
            if error == EINTR { continue }
            if error == EAGAIN || error == EWOULDBLOCK {
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                _ = poll(&p, 1, -1)
                continue
            }
            return nil
        }
    }

    /// Writes one line to standard error (diagnostics of the worker process).
    static func diagnose(_ message: String) {
        _ = writeAll(2, Array(("lector worker: " + message + "\n").utf8))
    }
}
