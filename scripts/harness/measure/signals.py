"""Test signals (click trains, espeak-ng speech) and the measures taken on them."""
import subprocess
import tempfile
import wave
from pathlib import Path

import numpy as np
from scipy import signal

RATE = 48_000
# The benchmark's speech: three voices, a sentence each.
UTTERANCES = [
    ("en-us+m3", "The north wind and the sun were arguing about which of them was the stronger."),
    ("en-us+f3", "Please bring the red toolbox up to the second floor before the meeting starts."),
    ("en-gb+m1", "A traveller came along, wrapped in a warm cloak, and they agreed on a test."),
]


def read_wav(path):
    """Mono float samples (−1…1) and the rate of a 16-bit PCM WAV file."""
    with wave.open(str(path), "rb") as w:
        rate, channels, width = w.getframerate(), w.getnchannels(), w.getsampwidth()
        data = w.readframes(w.getnframes())
    if width != 2:
        raise ValueError(f"{path}: {8 * width}-bit samples, expected 16")
    x = np.frombuffer(data, dtype="<i2").astype(np.float64) / 32768.0
    if channels > 1:
        x = x.reshape(-1, channels).mean(axis=1)
    return x, rate


def write_wav(path, x, rate=RATE):
    pcm = np.clip(np.round(np.asarray(x) * 32767.0), -32768, 32767).astype("<i2")
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.tobytes())


def pcm_bytes(x):
    return np.clip(np.round(np.asarray(x) * 32767.0), -32768, 32767).astype("<i2").tobytes()


def to_rate(x, rate_in, rate_out):
    if rate_in == rate_out:
        return np.asarray(x, dtype=np.float64)
    g = np.gcd(rate_in, rate_out)
    return signal.resample_poly(x, rate_out // g, rate_in // g)


def click_template():
    """One click: a 4 ms Hann-windowed chirp from 1 to 4 kHz, which Opus keeps in shape."""
    n = int(0.004 * RATE)
    t = np.arange(n) / RATE
    chirp = signal.chirp(t, f0=1000, t1=t[-1], f1=4000)
    return 0.5 * chirp * np.hanning(n)


def click_train(seconds, seed):
    """A train of clicks with uneven spacing (180–420 ms, seeded), so that no click can be
    mistaken for its neighbour. Returns the samples and the click start positions."""
    rng = np.random.default_rng(seed)
    total = int(seconds * RATE)
    x = np.zeros(total)
    tpl = click_template()
    starts = []
    pos = int(0.1 * RATE)
    while pos + len(tpl) < total - int(0.1 * RATE):
        starts.append(pos)
        x[pos:pos + len(tpl)] += tpl
        pos += int(rng.uniform(0.180, 0.420) * RATE)
    return x, starts


def espeak(text, voice, workdir):
    """Speech from espeak-ng at 48 kHz (espeak speaks at 22.05 kHz; resampled here)."""
    path = Path(workdir) / f"espeak-{voice.replace('+', '_')}.wav"
    subprocess.run(["espeak-ng", "-v", voice, "-s", "150", "-w", str(path), text], check=True)
    x, rate = read_wav(path)
    x = to_rate(x, rate, RATE)
    peak = np.max(np.abs(x))
    return 0.7 * x / peak if peak > 0 else x


def build_program(utterances, seed, click_seconds=2.5, gap=0.4):
    """One input file: clicks, utterance, clicks, utterance, …, clicks. The clicks measure
    the delay all through the call (the jitter buffer may change it); the utterances are
    cut out again for speech quality. Returns samples, click starts and utterance spans."""
    parts, clicks, spans = [], [], []
    pos = 0

    def add(x):
        nonlocal pos
        parts.append(x)
        pos += len(x)

    add(np.zeros(int(0.3 * RATE)))
    for i, (name, u) in enumerate(utterances):
        c, starts = click_train(click_seconds, seed + i)
        clicks += [pos + s for s in starts]
        add(c)
        add(np.zeros(int(gap * RATE)))
        spans.append((name, pos, pos + len(u)))
        add(u)
        add(np.zeros(int(gap * RATE)))
    c, starts = click_train(click_seconds, seed + 100)
    clicks += [pos + s for s in starts]
    add(c)
    add(np.zeros(int(0.2 * RATE)))
    return np.concatenate(parts), clicks, spans


def _envelope(x, tpl):
    mf = signal.fftconvolve(x, tpl[::-1], mode="full")[len(tpl) - 1:]
    return np.abs(signal.hilbert(mf))


def find_clicks(output, out_time_ns, in_times_ns, max_delay_ms=1000.0, search_ms=85.0):
    """Finds each click again in the output.

    output: output samples; out_time_ns(n): wall-clock time (ns, float array) at which output
    sample n was played; in_times_ns: wall-clock times at which each click entered.
    Returns per-click delays in ms (NaN where a click was not found)."""
    from scipy.ndimage import maximum_filter1d
    tpl = click_template()
    env = _envelope(output, tpl)
    coarse = maximum_filter1d(env, size=int(0.002 * RATE))  # 1 ms steps must not miss a peak
    times = out_time_ns  # array, one per output sample
    n_out = len(output)
    in_times = np.asarray(in_times_ns, dtype=np.float64)

    def env_at(t):
        idx = np.searchsorted(times, t)
        idx = np.clip(idx, 0, n_out - 1)
        return coarse[idx]

    # A coarse delay for the whole train, at 1 ms steps, then each click near it; the
    # coarse delay is taken again around each click from its neighbours (±4 clicks), since
    # the jitter buffer moves the delay during a call. With ±2, the first click of a train
    # whose first two clicks came out fainter than the next two (the sender's gain control
    # still rising) was placed where its neighbours' spacing happened to repeat further on:
    # clicks heard at 60 ms were reported at 730 ms.
    delays = np.full(len(in_times), np.nan)
    peaks = np.zeros(len(in_times))
    steps = np.arange(0.0, max_delay_ms, 1.0) * 1e6
    for i, t in enumerate(in_times):
        lo, hi = max(0, i - 4), min(len(in_times), i + 5)
        neighbours = in_times[lo:hi]
        score = np.array([env_at(neighbours + d).sum() for d in steps])
        d0 = steps[int(np.argmax(score))]
        a = np.searchsorted(times, t + d0 - search_ms * 1e6)
        b = np.searchsorted(times, t + d0 + search_ms * 1e6)
        if b - a < 10:
            continue
        k = a + int(np.argmax(env[a:b]))
        peaks[i] = env[k]
        delays[i] = (times[k] - t) / 1e6
    # Not found: no peak at all, a peak below a quarter of the median click's, or one a
    # hundred times weaker than a click at the input's level (silence, noise).
    floor = 0.01 * float(np.sum(tpl ** 2))
    found = peaks > floor
    delays[~found] = np.nan
    if found.any():
        level = np.median(peaks[found])
        delays[peaks < 0.25 * level] = np.nan
    return delays


def speech_segment(output, out_time_ns, in_start_ns, length, guess_ms, ref, search_ms=150.0):
    """The piece of output that best matches `ref` (cross-correlation within ±search_ms of
    the guessed delay). Returns (segment, delay_ms at its start, correlation)."""
    times = out_time_ns
    centre = np.searchsorted(times, in_start_ns + guess_ms * 1e6)
    span = int(search_ms * RATE / 1000)
    a = max(0, centre - span)
    b = min(len(output), centre + span + length)
    region = output[a:b]
    if len(region) < length:
        return None, float("nan"), 0.0
    c = signal.fftconvolve(region, ref[::-1], mode="valid")
    k = int(np.argmax(c))
    seg = output[a + k:a + k + length]
    denom = np.linalg.norm(seg) * np.linalg.norm(ref)
    corr = float(c[k] / denom) if denom > 0 else 0.0
    return seg, (times[a + k] - in_start_ns) / 1e6, corr


def windowed_delays(output, out_time_ns, input_x, in_time0_ns, span, guess_ms, window=0.5, search_ms=60.0):
    """Delay of each 0.5 s window of speech (input samples span[0]..span[1]) found by
    cross-correlation in the output; windows too quiet to align are skipped."""
    res = []
    w = int(window * RATE)
    for s in range(span[0], span[1] - w + 1, w):
        ref = input_x[s:s + w]
        if np.sqrt(np.mean(ref ** 2)) < 0.01:
            continue
        t_in = in_time0_ns + s * 1e9 / RATE
        seg, d, corr = speech_segment(output, out_time_ns, t_in, w, guess_ms, ref, search_ms)
        if seg is not None and corr > 0.5:
            res.append(d)
    return res


def quality(ref48, deg48):
    """PESQ-WB and STOI, both at 16 kHz."""
    from pesq import pesq
    from pystoi import stoi
    ref = to_rate(ref48, RATE, 16_000)
    deg = to_rate(deg48, RATE, 16_000)
    try:
        p = float(pesq(16_000, ref, deg, "wb"))
    except Exception:  # the pesq package raises on silent or unalignable input
        p = float("nan")
    try:
        s = float(stoi(ref, deg, 16_000, extended=False))
    except Exception:
        s = float("nan")
    return p, s
