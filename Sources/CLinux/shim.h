#ifndef INTERCOM_CLINUX_SHIM_H
#define INTERCOM_CLINUX_SHIM_H

// Linux calls that Swift's Glibc module does not export.
#include <sys/eventfd.h>

// A non-blocking, close-on-exec eventfd counting from zero; -1 with errno set on failure.
static inline int intercom_wake_eventfd(void) {
    return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

#endif
