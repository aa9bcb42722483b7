@preconcurrency import Glibc

/// Threads of the process (pthreads), for CPU-bound work beside a main loop.
public enum Thread {
    /// Runs `body` on a new detached thread (pthread_create, then pthread_detach).
    /// - Throws: the `Errno` of pthread_create (`EAGAIN` when the process may start no more threads).
    public static func detach(_ body: @escaping @Sendable () -> Void) throws(Errno) {
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { pointer in
            let box = Unmanaged<Box>.fromOpaque(pointer!).takeRetainedValue()
            box.body()
            return nil
        }, box)
        guard result == 0 else {
            Unmanaged<Box>.fromOpaque(box).release()
            throw Errno(rawValue: result)
        }
        pthread_detach(thread)
    }

    private final class Box: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}

extension FileDescriptor {
    /// A new pipe (pipe(2)), both ends close-on-exec: what is written to `write` is read from `read`.
    /// - Throws: the `Errno` of pipe(2) (`EMFILE`, `ENFILE`).
    public static func pipe() throws(Errno) -> (read: FileDescriptor, write: FileDescriptor) {
        var fds: [CInt] = [0, 0]
        guard Glibc.pipe(&fds) == 0 else { throw Errno.current }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return (FileDescriptor(rawValue: fds[0]), FileDescriptor(rawValue: fds[1]))
    }
}
