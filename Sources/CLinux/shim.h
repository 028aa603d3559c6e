#ifndef INTERCOM_CLINUX_SHIM_H
#define INTERCOM_CLINUX_SHIM_H

// Linux and GNU calls that Swift's Glibc module does not export.
#include <pthread.h>
#include <sys/eventfd.h>

// A non-blocking, close-on-exec eventfd counting from zero; -1 with errno set on failure.
static inline int intercom_wake_eventfd(void) {
    return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

// Names the calling thread (the kernel keeps 15 bytes and a terminator); 0 or an errno.
int pthread_setname_np(pthread_t thread, const char *name);
static inline int intercom_name_this_thread(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}

#endif
