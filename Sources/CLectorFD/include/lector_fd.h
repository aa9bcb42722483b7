/* Passing an open file descriptor to another process over a Unix socket (unix(7), "SCM_RIGHTS"): the CMSG_*
 * macros that build the control message are not callable from Swift. Every symbol is prefixed lector_. */
#ifndef LECTOR_FD_H
#define LECTOR_FD_H
#include <stddef.h>
#include <sys/types.h>

/* Sends `length` bytes of `data` (at least 1) and a copy of `fd` in one sendmsg(2) on the Unix socket `sock`,
 * with MSG_NOSIGNAL (a peer that is gone gives EPIPE, not SIGPIPE). Returns the bytes sent, or -1 with errno
 * set. The caller still owns `fd`. */
ssize_t lector_send_fd(int sock, const void *_Nonnull data, size_t length, int fd);

/* Receives one message of at most `capacity` bytes into `data` and the descriptor it carries (recvmsg(2) with
 * MSG_CMSG_CLOEXEC): *fd is that descriptor, close-on-exec and owned by the caller, or -1 when the message
 * carried none. Any further descriptors sent with it are closed. Returns the bytes received (0: the peer
 * closed its end), or -1 with errno set. */
ssize_t lector_receive_fd(int sock, void *_Nonnull data, size_t capacity, int *_Nonnull fd);

#endif
