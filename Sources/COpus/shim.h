#ifndef INTERCOM_COPUS_SHIM_H
#define INTERCOM_COPUS_SHIM_H

#include <opus.h>

// opus_encoder_ctl and opus_decoder_ctl are variadic, which Swift cannot call.
// Each request used by intercom gets a fixed-signature wrapper here.

static inline int intercom_opus_set_int(OpusEncoder *st, int request, opus_int32 value) {
    return opus_encoder_ctl(st, request, value);
}

static inline int intercom_opus_get_int(OpusEncoder *st, int request, opus_int32 *value) {
    return opus_encoder_ctl(st, request, value);
}

static inline int intercom_opus_encoder_reset(OpusEncoder *st) {
    return opus_encoder_ctl(st, OPUS_RESET_STATE);
}

static inline int intercom_opus_decoder_get_int(OpusDecoder *st, int request, opus_int32 *value) {
    return opus_decoder_ctl(st, request, value);
}

// The request codes are macros built from expressions Swift does not import.
static const int INTERCOM_OPUS_SET_BITRATE = OPUS_SET_BITRATE_REQUEST;
static const int INTERCOM_OPUS_GET_BITRATE = OPUS_GET_BITRATE_REQUEST;
static const int INTERCOM_OPUS_SET_COMPLEXITY = OPUS_SET_COMPLEXITY_REQUEST;
static const int INTERCOM_OPUS_SET_INBAND_FEC = OPUS_SET_INBAND_FEC_REQUEST;
static const int INTERCOM_OPUS_SET_PACKET_LOSS_PERC = OPUS_SET_PACKET_LOSS_PERC_REQUEST;
static const int INTERCOM_OPUS_SET_DTX = OPUS_SET_DTX_REQUEST;
static const int INTERCOM_OPUS_SET_VBR = OPUS_SET_VBR_REQUEST;
static const int INTERCOM_OPUS_SET_VBR_CONSTRAINT = OPUS_SET_VBR_CONSTRAINT_REQUEST;
static const int INTERCOM_OPUS_SET_SIGNAL = OPUS_SET_SIGNAL_REQUEST;
static const int INTERCOM_OPUS_GET_LOOKAHEAD = OPUS_GET_LOOKAHEAD_REQUEST;
static const int INTERCOM_OPUS_GET_LAST_PACKET_DURATION = OPUS_GET_LAST_PACKET_DURATION_REQUEST;

#endif
