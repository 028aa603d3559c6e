#include "signal_kernels.h"

#include <string.h>

/* Eight lanes at a time through the compiler's generic vectors: without them a float sum is
 * not vectorised (the order of additions is kept), with them it is on x86 and ARM alike. */
typedef float lanes8 __attribute__((vector_size(32)));

float intercom_dot(const float *a, const float *b, int count) {
    lanes8 sums = {0};
    int i = 0;
    for (; i + 8 <= count; i += 8) {
        lanes8 x, y;
        memcpy(&x, a + i, sizeof x);
        memcpy(&y, b + i, sizeof y);
        sums += x * y;
    }
    float sum = 0;
    for (int lane = 0; lane < 8; lane++) sum += sums[lane];
    for (; i < count; i++) sum += a[i] * b[i];
    return sum;
}

static int wrap(int index, int capacity) {
    if (index < 0) return index + capacity;
    if (index >= capacity) return index - capacity;
    return index;
}

void intercom_smooth_lag_residuals(
    const float *microphone, const float *prediction, int capacity, int start, int count,
    int first_lag, int step, int lags, float smoothing, float *energies) {
    const float *mic = microphone + start;
    float mic_energy = intercom_dot(mic, mic, count);
    int predicted_start = wrap(start - first_lag, capacity);
    /* The shifted prediction's energy slides from one lag to the next, in double so that
     * rounding does not build up over a thousand lags. */
    const float *first = prediction + predicted_start;
    double predicted_energy = intercom_dot(first, first, count);
    for (int i = 0; i < lags; i++) {
        float correlation = intercom_dot(mic, prediction + predicted_start, count);
        float residual = mic_energy - 2 * correlation + (float)predicted_energy;
        if (residual < 0) residual = 0;
        energies[i] += smoothing * (residual - energies[i]);
        /* The next lag's prediction starts `step` samples earlier. */
        for (int k = 0; k < step; k++) {
            predicted_start = wrap(predicted_start - 1, capacity);
            double entering = prediction[predicted_start];
            double leaving = prediction[predicted_start + count];
            predicted_energy += entering * entering - leaving * leaving;
        }
    }
}
