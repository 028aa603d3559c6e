"""Judging a processor's output against the parts of its scene.

ERLE (echo return loss enhancement): the echo's energy at the microphone over the output's
energy, 10·log10, over a span where only the far end talks: the first two seconds from the
far end's first word, and "converged" (6 s on, until half a second before double talk).
ERLE during double talk: the output minus its best fit to the near end (a 64-tap least-
squares filter from the near end at the microphone, at the lag where they match best, so
the near end's own level and any short filtering by the processor are taken out), against
the echo over the same span: a documented approximation, as the near end cannot be
removed from an adaptive processor's output otherwise.
Reconvergence: after an echo path change, the time from the change to the start of the
first second whose ERLE (over its 250 ms windows with echo louder than −50 dBFS) is within
6 dB of the ERLE over the 4 s before the change, or at least 30 dB; infinite when no second
of the scene gets there, None when the ERLE before the change was under 10 dB. The ERLE of the
first second after the change is reported too.
PESQ-WB (ITU-T P.862.2, the pesq package) and STOI (pystoi), both at 16 kHz, with the near
end at the microphone (reverberant, clean) as reference: during double talk, and in noise,
where the gain is the output's score minus the microphone's.
Voice activation: seconds transmitted per minute of noise alone; for each word, the ms
from its onset to the first transmitting frame (0 if the gate is open when it starts); a
word counts as clipped when more than 25 ms of it are lost."""
import numpy as np
from scipy import signal

from . import RATE
from .processors import FRAME

WINDOW = RATE // 4
MIN_CONVERGED_DB = 10.0  # a processor that reduced the echo less before the change has nothing to regain
CLIPPED_MS = 25.0


def db_ratio(a, b):
    return float(10 * np.log10((np.sum(np.square(a)) + 1e-20) / (np.sum(np.square(b)) + 1e-20)))


def erle(echo, out, span):
    a, b = span
    return db_ratio(echo[a:b], out[a:b])


def best_lag(x, y, max_lag):
    """The lag (0…max_lag samples) by which y follows x best."""
    c = signal.fftconvolve(y, x[::-1], mode="full")[len(x) - 1:len(x) - 1 + max_lag]
    return int(np.argmax(c))


def near_end_removed(near, out, span, taps=64, max_lag=RATE // 20):
    """out minus its least-squares fit to the near end over `span`: out[n] is fitted by
    sum_k c_k near[n - start - k], `start` half the taps before the best lag."""
    a, b = span
    start = max(0, best_lag(near[a:b], out[a:b], max_lag) - taps // 2)
    pad = taps + max_lag
    padded = np.pad(near, (pad, 0))
    segment = padded[a - start - taps + 1 + pad:b - start + pad]
    columns = np.lib.stride_tricks.sliding_window_view(segment, taps)[:, ::-1]
    coef, *_ = np.linalg.lstsq(columns, out[a:b], rcond=None)
    return out[a:b] - columns @ coef


def erle_double_talk(scene, out):
    """(ERLE during double talk, how loud the near end came through in dB: the fitted near
    end's energy in the output over its energy at the microphone)."""
    a, b = scene.spans["double_talk"]
    residual = near_end_removed(scene.near, out, (a, b))
    return db_ratio(scene.echo[a:b], residual), db_ratio(out[a:b] - residual, scene.near[a:b])


def windowed_erle(echo, out, a, b):
    """(window start, ERLE) for each 250 ms window in a..b with echo above −50 dBFS."""
    res = []
    for s in range(a, b - WINDOW + 1, WINDOW):
        if 10 * np.log10(np.mean(echo[s:s + WINDOW] ** 2) + 1e-20) > -50:
            res.append((s, db_ratio(echo[s:s + WINDOW], out[s:s + WINDOW])))
    return res


def reconvergence(scene, out, margin_db=6.0, enough_db=30.0):
    """(seconds to reconverge, inf or None; ERLE before the change; ERLE in the second after)."""
    before = erle(scene.echo, out, scene.spans["before"])
    a, b = scene.spans["after"]
    if before < MIN_CONVERGED_DB:
        return None, before, None
    windows = windowed_erle(scene.echo, out, a, b)
    starts = np.array([s for s, _ in windows])
    goal = min(before - margin_db, enough_db)
    first_second = None
    for s in starts:
        inside = [w for w in windows if s <= w[0] < s + RATE]
        echo = sum(np.sum(scene.echo[w:w + WINDOW] ** 2) for w, _ in inside)
        residual = sum(np.sum(out[w:w + WINDOW] ** 2) for w, _ in inside)
        value = 10 * np.log10((echo + 1e-20) / (residual + 1e-20))
        if first_second is None:
            first_second = float(value)
        if value >= goal and s + RATE <= b:
            return (s - a) / RATE, before, first_second
    return float("inf"), before, first_second


def to16k(x):
    return signal.resample_poly(x, 1, 3)


def pesq_wb(ref, deg):
    from pesq import pesq
    try:
        return float(pesq(16_000, to16k(ref), to16k(deg), "wb"))
    except Exception:  # silent or unalignable input
        return float("nan")


def stoi(ref, deg):
    from pystoi import stoi as measure
    try:
        return float(measure(to16k(ref), to16k(deg), 16_000, extended=False))
    except Exception:
        return float("nan")


def processing_delay(process, probe, max_lag=RATE // 10):
    """A processor's own delay in samples: where its output of a clean probe (dry speech,
    no far end) matches the probe best."""
    out, _ = process(probe, np.zeros_like(probe))
    return best_lag(probe, out, max_lag)


def speech_quality(scene, out, span_name, lag=0):
    """(PESQ-WB, STOI) of out against the near end at the microphone over a span, the
    output first moved back by the processor's own delay (`lag` samples): STOI does not
    align its inputs (RNNoise delays by 20 ms, WebRTC's processing by 7-15 ms)."""
    a, b = scene.spans[span_name]
    ref = scene.near[a:b]
    deg = np.pad(out[a + lag:b + lag], (0, max(0, b + lag - len(out))))
    return pesq_wb(ref, deg), stoi(ref, deg)


def false_transmission(vad):
    """Seconds transmitted per minute, from per-frame decisions."""
    vad = np.asarray(vad, dtype=bool)
    return float(vad.mean() * 60.0) if len(vad) else float("nan")


def onset_clipping(vad, onsets):
    """ms lost at each onset (see the module's doc)."""
    vad = np.asarray(vad, dtype=bool)
    lost = []
    for onset in onsets:
        f = onset // FRAME
        if 0 < f <= len(vad) and vad[f - 1]:
            lost.append(0.0)
            continue
        later = np.flatnonzero(vad[f:])
        lost.append(float("inf") if later.size == 0 else float(later[0] * 10.0 - (onset % FRAME) * 1000 / RATE))
    return [max(0.0, x) for x in lost]
