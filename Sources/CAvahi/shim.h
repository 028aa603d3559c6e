#ifndef INTERCOM_CAVAHI_SHIM_H
#define INTERCOM_CAVAHI_SHIM_H

// The avahi headers use size_t and uint8_t without including their headers.
#include <stddef.h>
#include <stdint.h>
#include <avahi-client/client.h>
#include <avahi-client/lookup.h>
#include <avahi-client/publish.h>
#include <avahi-common/alternative.h>
#include <avahi-common/error.h>
#include <avahi-common/malloc.h>
#include <avahi-common/simple-watch.h>
#include <avahi-common/strlst.h>
#include <avahi-common/thread-watch.h>
#include <avahi-common/timeval.h>

#endif
