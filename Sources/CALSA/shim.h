#ifndef INTERCOM_CALSA_SHIM_H
#define INTERCOM_CALSA_SHIM_H

#include <alsa/asoundlib.h>

/* alsa-lib prints its own diagnostics to stderr through a variadic handler, which Swift
 * cannot define. intercom reports ALSA errors itself (once per change of a device's state),
 * so a device retried every few seconds does not flood the terminal. */
static inline void intercom_alsa_ignore_error(const char *file, int line, const char *function, int err,
                                              const char *format, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)format;
}

/* Routes alsa-lib's diagnostics to `intercom_alsa_ignore_error`, for the whole process. */
static inline int intercom_alsa_silence_library_messages(void) {
    return snd_lib_error_set_handler(intercom_alsa_ignore_error);
}

#endif
