"""What reaches a microphone, made offline exactly as the real-time path would make it
(path.AcousticPath, block by block), with each part kept apart for scoring:
  echo scenes    far-end talk through a room, the near end joining for a stretch of double
                 talk (or the echo path changing half way);
  noise scenes   the near end talking in a noise at a given SNR, no far end;
  vox scenes     a noise alone for a minute, and short words in it (voice activation).
Levels: the far end plays at an active level of −20 dBFS (its peaks reach the loudspeaker's
knee); the near end reaches the microphone at −28 dBFS active; noise is set by its SNR to
the near end (P.56 active level against the noise's RMS)."""
from dataclasses import dataclass, field

import numpy as np
from scipy import signal

from . import RATE, levels, noises, rooms
from .path import AcousticPath, render
from .speech import espeak

FAR_LEVEL_DB = -20.0
NEAR_LEVEL_DB = -28.0
BLOCK = int(0.005 * RATE)

FAR_TALK = [
    ("en-us+m3", "The north wind and the sun were arguing about which of them was the stronger."),
    ("en-gb+m1", "A traveller came along, wrapped in a warm cloak, and they agreed on a test."),
    ("en-us+m7", "Whoever made the traveller take his cloak off first would be the stronger one."),
    ("en-gb-scotland+m2", "Then the north wind blew as hard as he could, but the traveller held on."),
]
NEAR_TALK = [
    ("en-gb+f3", "Please bring the red toolbox up to the second floor before the meeting starts."),
    ("en-us+f2", "I think the parcel arrived this morning, it is on the kitchen table."),
    ("en-us+f4", "Can you call me back in ten minutes when the kettle has boiled?"),
]
VOX_WORDS = ["yes", "no", "okay", "hello", "stop", "go ahead", "right", "thanks", "wait", "sure"]


@dataclass
class Scene:
    """A microphone signal and what it is made of, with the spans that scoring looks at
    (sample ranges) and the far end played meanwhile (the canceller's reference)."""
    name: str
    far: np.ndarray
    mic: np.ndarray
    echo: np.ndarray
    near: np.ndarray
    noise: np.ndarray
    spans: dict = field(default_factory=dict)


def talk(lines, seconds, gap=0.3):
    """Sentences one after another (gaps of `gap` s) until `seconds` are filled."""
    out, i = [], 0
    while sum(len(x) for x in out) < seconds * RATE:
        voice, text = lines[i % len(lines)]
        out += [espeak(text, voice), np.zeros(int(gap * RATE))]
        i += 1
    return np.concatenate(out)[:int(seconds * RATE)]


def near_at_mic(speech, setup, start, total):
    """The near end's speech through the talker's response, at NEAR_LEVEL_DB, from `start`."""
    x = signal.fftconvolve(speech, rooms.talker_response(setup))
    x = levels.scaled_to(x, NEAR_LEVEL_DB)
    out = np.zeros(total)
    end = min(total, start + len(x))
    out[start:end] = x[:end - start]
    return out


def microphone(far, setup, near=None, noise=None, change=None, knee=0.5):
    """(mic, echo alone): the far end through the path, plus near end and noise."""
    echo_response = rooms.echo_response(setup)
    changed = None if change is None else (change[0], rooms.echo_response(change[1]))
    echo = render(far, AcousticPath(echo_response, BLOCK, knee=knee, change=changed))
    mic = render(far, AcousticPath(echo_response, BLOCK, knee=knee, change=changed, near=near, noise=noise))
    return mic, echo


def echo_scene(setup, seconds=24.0, double_talk=(14.0, 19.0), noise_kind=None, snr=None, seed=1):
    """Far-end talk all through; the near end talks during `double_talk` (seconds)."""
    far = levels.scaled_to(talk(FAR_TALK, seconds), FAR_LEVEL_DB)
    n = len(far)
    a, b = (int(t * RATE) for t in double_talk)
    near = near_at_mic(talk(NEAR_TALK, double_talk[1] - double_talk[0]), setup, a, n)
    noise = np.zeros(n) if noise_kind is None else noise_at(noise_kind, n, NEAR_LEVEL_DB - snr, seed)
    mic, echo = microphone(far, setup, near=near, noise=noise)
    onset = int(np.argmax(np.abs(far) > 1e-3))
    spans = {"first_2s": (onset, onset + 2 * RATE), "converged": (int(6 * RATE), a - int(0.5 * RATE)),
             "double_talk": (a, b)}
    return Scene(f"{setup} echo", far, mic, echo, near, noise, spans)


def change_scene(setup, to, seconds=20.0, change_at=10.0):
    """Far-end talk all through, the echo path changing at `change_at` s; no near end."""
    far = levels.scaled_to(talk(FAR_TALK, seconds), FAR_LEVEL_DB)
    at = int(change_at * RATE)
    mic, echo = microphone(far, setup, change=(at, to))
    zero = np.zeros(len(far))
    return Scene(f"{setup} to {to}", far, mic, echo, zero, zero, {"before": (at - 4 * RATE, at), "after": (at, len(far))})


def noise_at(kind, n, level_db, seed):
    return levels.scaled_to(levels.fitted(noises.make(kind, n / RATE, seed), n), level_db, active=False)


def noise_scene(kind, snr, setup="office-laptop", talking=8.5, lead=5.0, seed=1):
    """The near end talking for `talking` s in noise `kind` at `snr` dB, no far end, after
    `lead` s of the noise alone: a call's denoiser has heard the room before anyone speaks, and
    what it learned then changes what it does to the speech (RNNoise's PESQ-WB gain in fan
    noise at 5 dB SNR: +0.39 with the talk 0.5 s in, +0.03 after 5 s of the fan)."""
    start = int(lead * RATE)
    n = start + int(talking * RATE)
    near = near_at_mic(talk(NEAR_TALK, talking, gap=0.4), setup, start, n)
    noise = noise_at(kind, n, NEAR_LEVEL_DB - snr, seed)
    zero = np.zeros(n)
    mic = np.clip(near + noise, -1, 1)
    return Scene(f"{kind} {snr:g} dB", zero, mic, zero, near, noise, {"speech": (start, n)})


def vox_scenes(kind, snr=10.0, setup="office-laptop", seed=1):
    """(a minute of noise alone, and the ten VOX_WORDS 2-3 s apart in that noise at `snr`).
    The second scene's spans hold each word's onset (where its 5 ms envelope first reaches
    20 dB under the word's loudest)."""
    n = 60 * RATE
    noise = noise_at(kind, n, NEAR_LEVEL_DB - snr, seed)
    zero = np.zeros(n)
    alone = Scene(f"{kind} alone", zero, noise.copy(), zero, zero, noise, {})
    rng = np.random.default_rng(seed)
    near, onsets, pos = np.zeros(n), [], int(1.5 * RATE)
    for word in VOX_WORDS:
        x = levels.scaled_to(signal.fftconvolve(espeak(word, "en-gb+f3"), rooms.talker_response(setup)), NEAR_LEVEL_DB)
        near[pos:pos + len(x)] += x[:n - pos]
        onsets.append(pos + onset_of(x))
        pos += len(x) + int(rng.uniform(2.0, 3.0) * RATE)
    words = Scene(f"{kind} words", zero, np.clip(near + noise, -1, 1), zero, near, noise, {"onsets": onsets})
    return alone, words


def onset_of(x):
    env = np.sqrt(signal.lfilter(np.ones(240) / 240, [1], x ** 2))
    return int(np.argmax(env >= env.max() * 0.1))
