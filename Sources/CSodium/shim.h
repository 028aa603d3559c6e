#ifndef INTERCOM_CSODIUM_SHIM_H
#define INTERCOM_CSODIUM_SHIM_H

#include <sodium.h>

#endif
