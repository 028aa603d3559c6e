#ifndef INTERCOM_CKISSFFT_SHIM_H
#define INTERCOM_CKISSFFT_SHIM_H

#include <stdlib.h>
#include <kiss_fftr.h>

#endif
