"""Speech and noise levels: the active speech level of ITU-T P.56 (method B) and mixing
speech with noise at a given signal-to-noise ratio."""
import numpy as np
from scipy import signal

from . import RATE

P56_TIME_CONSTANT = 0.03  # s, the envelope's smoothing
P56_HANGOVER = 0.2  # s
P56_MARGIN_DB = 15.9


def rms_db(x):
    """Level in dBFS (RMS, a full-scale square wave is 0 dB)."""
    x = np.asarray(x, dtype=np.float64)
    return 10 * np.log10(np.mean(x ** 2) + 1e-20)


def active_level_db(x, rate=RATE):
    """The active speech level of `x` in dBFS, per ITU-T P.56 method B: a two-stage
    envelope (30 ms time constant), activity counted above each of 16 thresholds an octave
    apart with a 200 ms hangover, and the level taken where the active level stands 15.9 dB
    above the threshold (interpolated). Returns the plain RMS level for signals too short or
    too quiet to have activity."""
    x = np.asarray(x, dtype=np.float64)
    g = np.exp(-1.0 / (rate * P56_TIME_CONSTANT))
    p = signal.lfilter([1 - g], [1, -g], np.abs(x))
    q = signal.lfilter([1 - g], [1, -g], p)
    energy = np.sum(x ** 2)
    hang = int(np.ceil(P56_HANGOVER * rate))
    index = np.arange(len(x))
    thresholds = 2.0 ** np.arange(-15, 1)
    excess = []
    for c in thresholds:
        above = np.where(q >= c, index, -hang - 1)
        last = np.maximum.accumulate(above)
        active = np.count_nonzero(index - last <= hang)
        if active == 0:
            excess.append(None)
            continue
        level = 10 * np.log10(energy / active + 1e-30)
        excess.append((level, level - 20 * np.log10(c)))
    return _crossing(excess) if any(e is not None for e in excess) else rms_db(x)


def _crossing(excess):
    """The active level where (active level − threshold) falls through the margin."""
    previous = None
    for e in excess:
        if e is None:
            break
        level, diff = e
        if diff <= P56_MARGIN_DB:
            if previous is None:
                return level
            p_level, p_diff = previous
            t = (p_diff - P56_MARGIN_DB) / (p_diff - diff) if p_diff != diff else 0.0
            return p_level + t * (level - p_level)
        previous = e
    return previous[0]


def scaled_to(x, level_db, active=True):
    """`x` scaled to an active speech level (or, with active=False, an RMS level) in dBFS."""
    now = active_level_db(x) if active else rms_db(x)
    return np.asarray(x) * 10 ** ((level_db - now) / 20)


def mix_at_snr(speech, noise, snr_db, speech_level_db=None):
    """speech + noise, the noise scaled so that the speech's active level stands `snr_db`
    above the noise's RMS level over the speech's length (noise looped or cut to it).
    Returns (mix, speech as mixed, noise as mixed)."""
    speech = np.asarray(speech, dtype=np.float64)
    if speech_level_db is not None:
        speech = scaled_to(speech, speech_level_db)
    noise = fitted(noise, len(speech))
    noise = scaled_to(noise, active_level_db(speech) - snr_db, active=False)
    return speech + noise, speech, noise


def fitted(x, n):
    """`x` looped or cut to n samples."""
    x = np.asarray(x, dtype=np.float64)
    return np.resize(x, n) if len(x) else np.zeros(n)
