#ifndef INTERCOM_CGPIOD_SHIM_H
#define INTERCOM_CGPIOD_SHIM_H

#include <gpiod.h>

// The request flags are an enum of GPIOD_BIT() expressions; fixed names keep Swift simple.
static const int INTERCOM_GPIOD_FLAG_ACTIVE_LOW = GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW;
static const int INTERCOM_GPIOD_FLAG_BIAS_PULL_UP = GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP;

#endif
