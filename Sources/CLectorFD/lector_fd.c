#include "lector_fd.h"
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

ssize_t lector_send_fd(int sock, const void *data, size_t length, int fd) {
    struct iovec iov = { .iov_base = (void *)data, .iov_len = length };
    union { struct cmsghdr header; char space[CMSG_SPACE(sizeof(int))]; } control;
    memset(&control, 0, sizeof control);
    struct msghdr message = { .msg_iov = &iov, .msg_iovlen = 1,
                              .msg_control = control.space, .msg_controllen = sizeof control.space };
    struct cmsghdr *header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(header), &fd, sizeof(int));
    return sendmsg(sock, &message, MSG_NOSIGNAL);
}

ssize_t lector_receive_fd(int sock, void *data, size_t capacity, int *fd) {
    *fd = -1;
    struct iovec iov = { .iov_base = data, .iov_len = capacity };
    union { struct cmsghdr header; char space[CMSG_SPACE(4 * sizeof(int))]; } control;
    struct msghdr message = { .msg_iov = &iov, .msg_iovlen = 1,
                              .msg_control = control.space, .msg_controllen = sizeof control.space };
    ssize_t received = recvmsg(sock, &message, MSG_CMSG_CLOEXEC);
    if (received < 0) return -1;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
        size_t count = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; i++) {
            int received_fd;
            memcpy(&received_fd, CMSG_DATA(header) + i * sizeof(int), sizeof(int));
            if (*fd == -1) *fd = received_fd; else close(received_fd);
        }
    }
    return received;
}
