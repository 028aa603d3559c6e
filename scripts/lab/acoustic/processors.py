"""What the lab scores: a processor takes the microphone and the far end (the echo
canceller's reference), 48 kHz float arrays of one length, and returns its output and,
if it has a voice detector, a talk/no-talk decision per 10 ms frame (None otherwise).

  passthrough    the microphone as it is (the baseline every gain is measured from)
  webrtc         WebRTC audio processing (pywebrtc-audio, AEC3 + noise suppression level 1,
                 high-pass; the canceller and suppressor browsers use), its VAD for VOX
  webrtc-aec     the same with AEC3 alone
  webrtc-ns      the same with the noise suppressor alone
  rnnoise        RNNoise (pyrnnoise), its voice probability for VOX
  command        any program, from a template such as
                 "intercom bench-dsp --input-file {mic} --far-end-file {far} --output-file {out}"
                 ({vad}, if the template has it, is a text file the program writes: one line
                 per 10 ms frame, 1 or 0, or a probability)

The anchors' voice activation: a frame transmits once the detector's probability reaches
0.5 and for 200 ms after (hangover), with no pre-roll: the usual VOX gate."""
import shlex
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from . import RATE, wavio

FRAME = RATE // 100
VOX_THRESHOLD = 0.5
VOX_HANGOVER_FRAMES = 20


class Processor:
    """name, what it does ('echo', 'noise', 'vad'), and process(mic, far) -> (out, vad)."""
    does = ()

    def __init__(self, name):
        self.name = name


def gate(probabilities, threshold=VOX_THRESHOLD, hangover=VOX_HANGOVER_FRAMES):
    """Per-frame transmit decisions from per-frame speech probabilities."""
    out, left = [], 0
    for p in probabilities:
        left = hangover + 1 if p >= threshold else max(0, left - 1)
        out.append(left > 0)
    return np.array(out, dtype=bool)


def frames(x):
    n = len(x) // FRAME
    return np.asarray(x[:n * FRAME], dtype=np.float32).reshape(n, FRAME)


class PassThrough(Processor):
    does = ("echo", "noise")

    def __init__(self):
        super().__init__("passthrough")

    def process(self, mic, far):
        return np.asarray(mic, dtype=np.float64), None


class WebRTC(Processor):
    """pywebrtc_audio.AudioProcessor frame by frame, its speech probability per frame."""

    def __init__(self, name="webrtc", echo=True, noise=True, ns_level=1):
        super().__init__(name)
        self.echo, self.noise, self.ns_level = echo, noise, ns_level
        self.does = tuple(d for d, on in (("echo", echo), ("noise", noise), ("vad", True)) if on)

    def process(self, mic, far):
        from pywebrtc_audio import AudioProcessor
        ap = AudioProcessor(sample_rate=RATE, echo_cancellation=self.echo, noise_suppression=self.noise,
                            high_pass_filter=True, ns_level=self.ns_level)
        out, probability = [], []
        for m, f in zip(frames(mic), frames(far)):
            out.append(ap.process(m, f if self.echo else None))
            probability.append(ap.speech_probability)
        return _fit(np.concatenate(out), len(mic)), gate(probability)


class RNNoise(Processor):
    does = ("noise", "vad")

    def __init__(self):
        super().__init__("rnnoise")

    def process(self, mic, far):
        from pyrnnoise import rnnoise
        state = rnnoise.create()
        try:
            out, probability = [], []
            for m in frames(mic):
                pcm = np.clip(np.round(m * 32767), -32768, 32767).astype(np.int16)
                y, p = rnnoise.process_mono_frame(state, pcm)
                out.append(y.astype(np.float64) / 32768.0)
                probability.append(float(p))
        finally:
            rnnoise.destroy(state)
        return _fit(np.concatenate(out), len(mic)), gate(probability)


class Command(Processor):
    """Runs a command template on WAV files (16-bit, 48 kHz mono)."""

    def __init__(self, template, name="command", does=("echo", "noise")):
        super().__init__(name)
        self.template = template
        self.does = tuple(does) + (("vad",) if "{vad}" in template else ())

    def process(self, mic, far):
        with tempfile.TemporaryDirectory(prefix="acoustic-command-") as tmp:
            paths = {k: str(Path(tmp) / f"{k}.{'txt' if k == 'vad' else 'wav'}") for k in ("mic", "far", "out", "vad")}
            wavio.write(paths["mic"], mic)
            wavio.write(paths["far"], far)
            args = [part.format(**paths) for part in shlex.split(self.template)]
            done = subprocess.run(args, capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(f"{self.name}: {' '.join(args)} failed: {done.stderr.strip()[-400:]}")
            out, rate = wavio.read(paths["out"])
            if rate != RATE:
                raise RuntimeError(f"{self.name}: output at {rate} Hz, {RATE} expected")
            vad = None
            if "{vad}" in self.template:
                values = [float(v) for v in Path(paths["vad"]).read_text().split()]
                vad = np.array(values) >= VOX_THRESHOLD
        return _fit(out, len(mic)), vad


def _fit(x, n):
    return np.pad(x, (0, max(0, n - len(x))))[:n]


def anchors():
    return [PassThrough(), WebRTC(), WebRTC("webrtc-aec", noise=False), WebRTC("webrtc-ns", echo=False), RNNoise()]
