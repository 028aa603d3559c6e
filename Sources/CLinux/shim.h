#ifndef INTERCOM_CLINUX_SHIM_H
#define INTERCOM_CLINUX_SHIM_H

// Linux and GNU calls that Swift's Glibc module does not export.
#include <pthread.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

// A non-blocking, close-on-exec eventfd counting from zero; -1 with errno set on failure.
static inline int intercom_wake_eventfd(void) {
    return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

// Names the calling thread (the kernel keeps 15 bytes and a terminator); 0 or an errno.
int pthread_setname_np(pthread_t thread, const char *name);
static inline int intercom_name_this_thread(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}

// Sends `count` bytes on a Unix socket with one open file descriptor beside them (SCM_RIGHTS):
// the receiver reads the file with the sender's rights, not its own. The bytes sent, or -1.
static inline long intercom_send_with_descriptor(int socket, const void *bytes, size_t count, int descriptor) {
    struct iovec vector = { .iov_base = (void *)bytes, .iov_len = count };
    union { struct cmsghdr header; char space[CMSG_SPACE(sizeof(int))]; } control;
    memset(&control, 0, sizeof control);
    struct msghdr message = { .msg_iov = &vector, .msg_iovlen = 1, .msg_control = control.space, .msg_controllen = sizeof control.space };
    struct cmsghdr *header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(header), &descriptor, sizeof(int));
    return sendmsg(socket, &message, MSG_NOSIGNAL);
}

// Reads up to `count` bytes from a Unix socket and any descriptors sent beside them (close on
// exec). The first lands in `*descriptor` (else -1); any more are closed here, so that a
// client cannot fill the daemon's descriptor table. The bytes read, 0 at the end, or -1.
static inline long intercom_receive_with_descriptor(int socket, void *bytes, size_t count, int *descriptor) {
    struct iovec vector = { .iov_base = bytes, .iov_len = count };
    union { struct cmsghdr header; char space[CMSG_SPACE(4 * sizeof(int))]; } control;
    struct msghdr message = { .msg_iov = &vector, .msg_iovlen = 1, .msg_control = control.space, .msg_controllen = sizeof control.space };
    *descriptor = -1;
    long received = recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
    if (received < 0) return received;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header != NULL; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
        size_t count = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; i++) {
            int passed;
            memcpy(&passed, CMSG_DATA(header) + i * sizeof(int), sizeof(int));
            if (*descriptor < 0) *descriptor = passed; else close(passed);
        }
    }
    return received;
}

#endif
