#ifndef INTERCOM_SIGNAL_KERNELS_H
#define INTERCOM_SIGNAL_KERNELS_H

/* Numeric inner loops of the pure core, in C so that they are fast in every build: the
 * comparison of a microphone with shifted predictions of its echo runs hundreds of dot
 * products of a frame each, every frame, on the capture thread. No state, no allocation. */

/* The sum of a[i] * b[i] for i < count. */
float intercom_dot(const float *a, const float *b, int count);

/* For each of `lags` lags, first_lag + i * step (i < lags): what the prediction that lag
 * earlier leaves of `count` microphone samples from ring index `start`,
 *     residual_i = sum over n < count of (microphone[start + n] - prediction[p_i + n])^2,
 *     p_i = (start - lag_i) modulo capacity,
 * smoothed into energies[i] += smoothing * (residual_i - energies[i]). Both rings hold
 * 2 * capacity floats, each sample at index k and k + capacity, so that every run of up to
 * capacity samples is contiguous; start < capacity, count <= capacity. */
void intercom_smooth_lag_residuals(
    const float *microphone, const float *prediction, int capacity, int start, int count,
    int first_lag, int step, int lags, float smoothing, float *energies);

#endif
