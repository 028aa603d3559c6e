"""Noise sources of a home or an office, made deterministically from a seed.

Every source is returned at 48 kHz with an RMS level of −26 dBFS over its whole length
(mix_at_snr in levels.py scales it again to the SNR asked):
  fan       fan or HVAC: broadband noise falling 3 dB an octave above 100 Hz and rolled off
            above 2 kHz, with the motor's hum (100 Hz and harmonics, 12 dB under the noise)
            and a blade-pass tone near 180 Hz that wanders slowly;
  babble    six espeak-ng voices, each reading its own text, each at the same active level,
            started at random offsets and mixed (a cafeteria with six people talking);
  keyboard  typing: bursts of 3–8 key presses 90–250 ms apart, 0.4–1.6 s between bursts,
            each key a press and a softer release 50–110 ms later (short resonant clicks),
            and every 4–6 s the talk key's own heavier press (`talk_key`);
  radio     a radio or TV in the room: espeak speech through a small speaker's band
            (250 Hz–4 kHz) alternating with music-like chords of harmonic tones;
  clatter   kitchen clatter: sparse loud transients (plates, cutlery: inharmonic ringing
            with a noise onset, 0.7 a second on average, levels spread over 14 dB) over the
            quiet bed of a dishwasher (brown noise 30 dB under the transients' RMS).
"""
import numpy as np
from scipy import signal

from . import RATE
from .levels import active_level_db, scaled_to
from .speech import espeak

LEVEL_DB = -26.0
KINDS = ("fan", "babble", "keyboard", "radio", "clatter")

BABBLE = [
    ("en-us+m3", 160, "The committee will meet again on Thursday to look at the budget for next year."),
    ("en-gb+f2", 170, "I told her the train was late again, so we waited in the cafe for an hour."),
    ("en-us+f4", 150, "Could you pass me the salt and the pepper, and maybe a little more bread?"),
    ("en-gb-scotland+m5", 165, "They painted the whole house blue last summer and nobody liked it at all."),
    ("en-us+m7", 145, "Our flight leaves at seven in the morning, which means we must get up at five."),
    ("en-gb+f3", 175, "The children played in the garden until it was far too dark to see the ball."),
]
RADIO = [
    ("en-gb-x-rp+m1", 175, "Good evening. Here is the news. Heavy rain is expected across the north tonight."),
    ("en-us+f2", 180, "And now the weather for the weekend: sunny spells with a chance of showers."),
]


def make(kind, seconds, seed):
    """`seconds` of noise `kind` (see KINDS), the same for the same seed."""
    makers = {"fan": fan, "babble": babble, "keyboard": keyboard, "radio": radio, "clatter": clatter}
    if kind not in makers:
        raise ValueError(f"unknown noise '{kind}' (known: {', '.join(KINDS)})")
    rng = np.random.default_rng([seed, KINDS.index(kind)])
    x = makers[kind](int(seconds * RATE), rng)
    return scaled_to(x, LEVEL_DB, active=False)


def shaped_noise(n, rng, shape):
    """Gaussian noise whose amplitude spectrum is shape(frequencies in Hz)."""
    spectrum = np.fft.rfft(rng.standard_normal(n))
    f = np.fft.rfftfreq(n, 1 / RATE)
    return np.fft.irfft(spectrum * shape(f), n)


def fan(n, rng):
    def shape(f):
        f = np.maximum(f, 1.0)
        pink = 1 / np.sqrt(np.maximum(f, 100.0) / 100.0)
        return pink / np.sqrt(1 + (f / 2000.0) ** 4) * (f > 20)
    x = shaped_noise(n, rng, shape)
    x /= np.sqrt(np.mean(x ** 2))
    t = np.arange(n) / RATE
    hum = sum(a * np.sin(2 * np.pi * 100 * k * t + rng.uniform(0, 2 * np.pi)) for k, a in ((1, 1.0), (2, 0.5), (3, 0.25)))
    wander = 180 + 4 * np.sin(2 * np.pi * 0.07 * t + rng.uniform(0, 2 * np.pi))
    blade = 0.6 * np.sin(2 * np.pi * np.cumsum(wander) / RATE)
    return x + 10 ** (-12 / 20) * (hum + blade) / np.sqrt(np.mean((hum + blade) ** 2))


def looped_at(x, n, start):
    """x looped to n samples, starting `start` samples into it."""
    return np.resize(np.roll(x, -start), n)


def babble(n, rng):
    mix = np.zeros(n)
    for voice, wpm, text in BABBLE:
        s = espeak(text, voice, wpm, pitch=int(rng.integers(35, 70)))
        s = np.concatenate([s, np.zeros(int(rng.uniform(0.2, 0.8) * RATE))])
        mix += scaled_to(looped_at(s, n, int(rng.integers(len(s)))), -30.0)
    return mix


def click(rng, resonance_hz, decay_ms, length_ms=12):
    """One key click: a noise burst ringing at a resonance, decaying in decay_ms."""
    m = int(length_ms * RATE / 1000)
    t = np.arange(m) / RATE
    burst = rng.standard_normal(m) * np.exp(-t / 0.0008)
    ring = np.sin(2 * np.pi * resonance_hz * t + rng.uniform(0, 2 * np.pi)) * np.exp(-t * 1000 / decay_ms)
    b, a = signal.butter(2, 800, btype="highpass", fs=RATE)
    return signal.lfilter(b, a, 0.6 * burst + ring)


def talk_key(rng):
    """The talk key's own press and release: a heavier, lower click (a space bar or a push
    button: 1.1–1.5 kHz ring, 6 ms decay) and its release 120–200 ms later, 6 dB softer."""
    press = click(rng, rng.uniform(1100, 1500), 6.0, 25)
    release = 0.5 * click(rng, rng.uniform(1100, 1500), 4.0, 20)
    gap = int(rng.uniform(0.12, 0.2) * RATE)
    out = np.zeros(gap + len(release))
    out[:len(press)] += 2.0 * press
    out[gap:] += release
    return out


def place(out, x, at):
    end = min(len(out), at + len(x))
    if at < end:
        out[at:end] += x[:end - at]


def keyboard(n, rng):
    out = np.zeros(n)
    pos = int(rng.uniform(0.1, 0.5) * RATE)
    while pos < n:
        for _ in range(int(rng.integers(3, 9))):
            level = 10 ** (rng.uniform(-4, 2) / 20)
            place(out, level * click(rng, rng.uniform(2500, 5000), rng.uniform(1.5, 3.0)), pos)
            release = pos + int(rng.uniform(0.05, 0.11) * RATE)
            place(out, 0.4 * level * click(rng, rng.uniform(2500, 5000), 1.5), release)
            pos += int(rng.uniform(0.09, 0.25) * RATE)
        pos += int(rng.uniform(0.4, 1.6) * RATE)
    key = int(rng.uniform(4, 6) * RATE)
    while key < n:
        place(out, talk_key(rng), key)
        key += int(rng.uniform(4, 6) * RATE)
    return out


def chords(n, rng):
    """Music-like tones: three-note chords of harmonic tones, a new chord every 0.25–0.6 s."""
    out = np.zeros(n)
    pos = 0
    while pos < n:
        m = int(rng.uniform(0.25, 0.6) * RATE)
        t = np.arange(m) / RATE
        root = 110 * 2 ** (rng.integers(0, 24) / 12)
        envelope = np.minimum(t / 0.01, 1) * np.exp(-t / 0.4)
        note = sum(sum(np.sin(2 * np.pi * root * 2 ** (step / 12) * h * t) / h for h in range(1, 6))
                   for step in (0, 4, 7))
        place(out, envelope * note, pos)
        pos += m
    return out


def radio(n, rng):
    speech = np.concatenate([np.concatenate([espeak(text, voice, wpm), np.zeros(int(0.3 * RATE))])
                             for voice, wpm, text in RADIO])
    music = chords(n, rng)
    talk = scaled_to(looped_at(speech, n, int(rng.integers(len(speech)))), -26.0)
    segment = int(4 * RATE)
    gate = (np.arange(n) // segment) % 2 == 0  # speech, then music, four seconds each
    x = np.where(gate, talk + scaled_to(music, -40.0, active=False), scaled_to(music, -28.0, active=False))
    b, a = signal.butter(2, [250, 4000], btype="bandpass", fs=RATE)
    return signal.lfilter(b, a, x)


def clatter(n, rng):
    out = np.zeros(n)
    pos = int(rng.exponential(1 / 0.7) * RATE)
    while pos < n:
        m = int(0.4 * RATE)
        t = np.arange(m) / RATE
        ring = sum(rng.uniform(0.3, 1) * np.sin(2 * np.pi * rng.uniform(900, 8000) * t)
                   * np.exp(-t / rng.uniform(0.03, 0.25)) for _ in range(5))
        hit = rng.standard_normal(m) * np.exp(-t / 0.002)
        place(out, 10 ** (rng.uniform(-14, 0) / 20) * (ring + 2 * hit), pos)
        pos += int(rng.exponential(1 / 0.7) * RATE) + int(0.05 * RATE)
    bed = np.cumsum(rng.standard_normal(n))
    b, a = signal.butter(1, 40, btype="highpass", fs=RATE)
    bed = signal.lfilter(b, a, bed)
    level = 10 * np.log10(np.mean(out ** 2) + 1e-20)
    return out + scaled_to(bed, level - 30, active=False)


def level_check(kind, seconds=10, seed=1):
    """(RMS, active level) of a source, for a quick look."""
    x = make(kind, seconds, seed)
    return 10 * np.log10(np.mean(x ** 2)), active_level_db(x)
