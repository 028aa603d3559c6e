#ifndef INTERCOM_CALSA_SHIM_H
#define INTERCOM_CALSA_SHIM_H

#include <alsa/asoundlib.h>

#endif
