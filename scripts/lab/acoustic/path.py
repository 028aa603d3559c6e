"""The acoustic path from a loudspeaker to a microphone, block by block (numpy only), so the
real-time program (realtime.py) and the offline scenes (scenes.py) compute the same samples:

  far end ─▶ loudspeaker (soft clipping) ─▶ room (echo response; a crossfade to another one
  at a given time: the echo path change) ─▶ microphone clock (±ppm: the echo's delay drifts)
  ─▶ + near-end talker (through its own response) + noise ─▶ microphone (clipped at full scale)

Loudspeaker: y = a·tanh(x/a), a the knee (default 0.5, i.e. −6 dBFS): about 0.7 dB of
compression at −12 dBFS and 2.3 dB on −6 dBFS peaks, odd harmonics as a small driver's.
Room: uniformly partitioned overlap-save convolution (block B samples, FFT size 2B): the
output of a block holds that block's input, so the algorithmic delay is one block.
Clock: a microphone running ppm·1e-6 fast samples the room ppm µs later each second; the
lab's sinks keep one clock, so the echo is delayed by d(n) = d0 + ppm·1e-6·n samples
through a 32-tap windowed-sinc interpolator (d0: its 16-sample half width, and for a slow
microphone, the drift of the whole run so the delay never goes below it). 0 ppm adds no
delay and skips the interpolator.
"""
import numpy as np

from . import RATE

SINC_TAPS = 32
SINC_PHASES = 512
CROSSFADE_SECONDS = 0.02


def loudspeaker(x, knee):
    """The loudspeaker's soft clipping: knee·tanh(x/knee); knee None: linear."""
    return x if knee is None else knee * np.tanh(np.asarray(x) / knee)


class PartitionedConvolver:
    """Block convolution with one or more responses sharing one input (overlap-save,
    uniform partitions of B samples). `step` returns one output block per response."""

    def __init__(self, responses, block):
        self.block = block
        length = max(len(h) for h in responses)
        self.parts = max(1, -(-length // block))
        self.spectra = [self._partition(h) for h in responses]
        self.history = np.zeros(2 * block)
        # Each input spectrum is stored twice, so the newest P are always one contiguous slice.
        self.delay_line = np.zeros((2 * self.parts, block + 1), dtype=np.complex128)
        self.k = 0

    def _partition(self, h):
        b, p = self.block, self.parts
        padded = np.zeros(p * b)
        padded[:len(h)] = h
        blocks = np.zeros((p, 2 * b))
        blocks[:, :b] = padded.reshape(p, b)
        return np.fft.rfft(blocks, axis=1)

    def step(self, x):
        b = self.block
        self.history[:b] = self.history[b:]
        self.history[b:] = x
        spectrum = np.fft.rfft(self.history)
        self.k = (self.k - 1) % self.parts
        self.delay_line[self.k] = spectrum
        self.delay_line[self.k + self.parts] = spectrum
        recent = self.delay_line[self.k:self.k + self.parts]
        return [np.fft.irfft(np.einsum("pf,pf->f", h, recent), 2 * b)[b:] for h in self.spectra]


def sinc_table():
    """Windowed-sinc interpolation filters, one row per fractional delay phase."""
    half = SINC_TAPS // 2
    frac = np.arange(SINC_PHASES) / SINC_PHASES
    t = np.arange(-half + 1, half + 1)[None, :] - frac[:, None]  # taps at offsets from the position
    window = np.kaiser(SINC_TAPS + 1, 8.0)
    w = np.interp(t + half, np.arange(SINC_TAPS + 1), window)
    table = 0.94 * np.sinc(0.94 * t) * w
    return table / table.sum(axis=1, keepdims=True)


class ClockDrift:
    """A delay growing by `ppm`·1e-6 samples a sample, from `base` samples."""

    def __init__(self, ppm, base, block):
        self.rate = ppm * 1e-6
        self.base = float(base)
        self.block = block
        self.table = sinc_table()
        self.offsets = np.arange(-SINC_TAPS // 2 + 1, SINC_TAPS // 2 + 1)
        self.buffer = np.zeros(SINC_TAPS)  # silence before the stream starts
        self.start = -SINC_TAPS  # the sample index of buffer[0]
        self.n = 0  # the index of the next output sample

    def step(self, z):
        self.buffer = np.concatenate([self.buffer, z])
        n = np.arange(self.n, self.n + self.block)
        position = n - np.maximum(self.base + self.rate * n, SINC_TAPS // 2)
        whole = np.floor(position).astype(np.int64)
        phase = np.round((position - whole) * SINC_PHASES).astype(np.int64)
        whole += phase // SINC_PHASES
        phase %= SINC_PHASES
        index = np.clip(whole[:, None] + self.offsets[None, :] - self.start, 0, len(self.buffer) - 1)
        y = np.einsum("nt,nt->n", self.buffer[index], self.table[phase])
        self.n += self.block
        drop = max(0, int(whole[0]) - SINC_TAPS - self.start)
        self.buffer = self.buffer[drop:]
        self.start += drop
        return y


class AcousticPath:
    """Far-end blocks in, microphone blocks out. `near` and `noise` are what the talker and
    the noise add at the microphone, sample for sample from the path's start (noise looped)."""

    def __init__(self, echo, block, knee=0.5, change=None, ppm=0.0, drift_seconds=120.0,
                 near=None, noise=None):
        self.block = block
        self.knee = knee
        responses = [echo] if change is None else [echo, change[1]]
        self.room = PartitionedConvolver(responses, block)
        self.change_at = None if change is None else int(change[0])
        base = SINC_TAPS // 2 + (abs(ppm) * 1e-6 * drift_seconds * RATE if ppm < 0 else 0)
        self.drift = None if ppm == 0 else ClockDrift(ppm, base, block)
        self.near = near
        self.noise = noise
        self.n = 0

    @property
    def delay_samples(self):
        """The path's algorithmic delay beyond the room's own: one block, plus the clock's
        base delay when the microphone drifts."""
        return self.block + (0 if self.drift is None else self.drift.base)

    def step(self, far):
        outputs = self.room.step(loudspeaker(far, self.knee))
        echo = outputs[0] if self.change_at is None else self._crossfaded(outputs)
        if self.drift is not None:
            echo = self.drift.step(echo)
        mic = echo + self._added(self.near, loop=False) + self._added(self.noise, loop=True)
        self.n += self.block
        return np.clip(mic, -1.0, 1.0)

    def _crossfaded(self, outputs):
        fade = int(CROSSFADE_SECONDS * RATE)
        n = np.arange(self.n, self.n + self.block)
        w = np.clip((n - self.change_at) / fade, 0.0, 1.0)
        w = 0.5 - 0.5 * np.cos(np.pi * w)
        return (1 - w) * outputs[0] + w * outputs[1]

    def _added(self, x, loop):
        if x is None or len(x) == 0:
            return 0.0
        n = np.arange(self.n, self.n + self.block)
        if loop:
            return x[n % len(x)]
        inside = n < len(x)
        out = np.zeros(self.block)
        out[inside] = x[n[inside]]
        return out


def render(far, path):
    """The microphone signal the path makes of a whole far-end signal, offline."""
    b = path.block
    far = np.asarray(far, dtype=np.float64)
    padded = np.zeros(-(-len(far) // b) * b)
    padded[:len(far)] = far
    return np.concatenate([path.step(padded[i:i + b]) for i in range(0, len(padded), b)])[:len(far)]
