"""Synthetic speech from espeak-ng (a Debian package) at 48 kHz."""
import subprocess
import tempfile
from pathlib import Path

import numpy as np
from scipy import signal

from . import RATE, wavio


def espeak(text, voice="en-us", words_per_minute=150, pitch=50):
    """`text` spoken by espeak-ng's `voice`, resampled to 48 kHz, peak at 0.7."""
    with tempfile.TemporaryDirectory(prefix="acoustic-espeak-") as tmp:
        path = Path(tmp) / "speech.wav"
        subprocess.run(["espeak-ng", "-v", voice, "-s", str(words_per_minute), "-p", str(pitch),
                        "-w", str(path), text], check=True, capture_output=True)
        x, rate = wavio.read(path)
    g = np.gcd(rate, RATE)
    x = signal.resample_poly(x, RATE // g, rate // g)
    peak = np.max(np.abs(x))
    return 0.7 * x / peak if peak > 0 else x
