#ifndef INTERCOM_CSPEEXDSP_SHIM_H
#define INTERCOM_CSPEEXDSP_SHIM_H

#include <speex/speex_echo.h>
#include <speex/speex_preprocess.h>
#include <speex/speex_resampler.h>

#endif
