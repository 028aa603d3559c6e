"""Checks of the acoustic lab's signal code with Debian's Python alone (python3-numpy,
python3-scipy, espeak-ng), a few seconds:  /usr/bin/python3 scripts/lab/acoustic/selftest.py"""
import sys
import tempfile
import unittest
from pathlib import Path

import numpy as np
from scipy import signal

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from acoustic import RATE, levels, noises, rooms, wavio  # noqa: E402
from acoustic.path import AcousticPath, loudspeaker, render  # noqa: E402


def lag_of(y, x, max_lag=400):
    c = signal.fftconvolve(y, x[::-1], mode="full")[len(x) - 1:len(x) - 1 + max_lag]
    return int(np.argmax(c))


class PathTests(unittest.TestCase):
    def setUp(self):
        self.x = np.random.default_rng(7).standard_normal(2 * RATE) * 0.05

    def test_room_is_the_offline_convolution(self):
        h = rooms.echo_response("office-laptop")
        y = render(self.x, AcousticPath(h, 240, knee=None))
        np.testing.assert_allclose(y, signal.fftconvolve(self.x, h)[:len(self.x)], atol=1e-9)

    def test_loudspeaker_soft_clips(self):
        y = render(self.x * 20, AcousticPath(np.array([1.0]), 240, knee=0.5))
        np.testing.assert_allclose(y, loudspeaker(self.x * 20, 0.5), atol=1e-12)
        self.assertLess(np.max(np.abs(y)), 0.5)

    def test_microphone_clock_drifts_the_delay(self):
        n = len(self.x)
        for ppm in (300, -300):
            y = render(self.x, AcousticPath(np.array([1.0]), 240, knee=None, ppm=ppm, drift_seconds=n / RATE))
            base = 16 + (abs(ppm) * 1e-6 * n if ppm < 0 else 0)
            for start in (2400, n - 4800):
                expected = base + ppm * 1e-6 * (start + 1200)
                got = lag_of(y[start:start + 2400], self.x[start:start + 2400])
                self.assertAlmostEqual(got, expected, delta=1.5, msg=f"{ppm} ppm at {start}")

    def test_echo_path_change_crossfades_to_the_other_room(self):
        a, b = rooms.echo_response("office-laptop"), rooms.echo_response("office-laptop-lid")
        y = render(self.x, AcousticPath(a, 240, knee=None, change=(RATE, b)))
        after = signal.fftconvolve(self.x, b)[:len(self.x)]
        np.testing.assert_allclose(y[-RATE // 2:], after[-RATE // 2:], atol=1e-9)

    def test_near_end_and_noise_are_added(self):
        near, noise = np.full(1000, 0.1), np.full(480, 0.01)
        y = render(np.zeros(2400), AcousticPath(np.array([1.0]), 240, near=near, noise=noise))
        np.testing.assert_allclose(y[:1000], 0.11)
        np.testing.assert_allclose(y[1000:], 0.01)


class SignalTests(unittest.TestCase):
    def test_active_level_of_a_tone_and_of_speech_with_silence(self):
        tone = 0.1 * np.sin(2 * np.pi * 1000 * np.arange(RATE) / RATE)
        self.assertAlmostEqual(levels.active_level_db(tone), levels.rms_db(tone), delta=0.3)
        # Silence after it counts only for the 200 ms hangover (0.8 dB here), not as a plain
        # RMS would (4.8 dB).
        padded = np.concatenate([tone, np.zeros(2 * RATE)])
        self.assertAlmostEqual(levels.active_level_db(padded), levels.rms_db(tone) - 10 * np.log10(1.2), delta=0.3)

    def test_mix_at_snr(self):
        tone = 0.1 * np.sin(2 * np.pi * 500 * np.arange(RATE) / RATE)
        mix, speech, noise = levels.mix_at_snr(tone, np.random.default_rng(1).standard_normal(RATE), 5.0)
        self.assertAlmostEqual(levels.active_level_db(speech) - levels.rms_db(noise), 5.0, delta=0.01)

    def test_noises_are_seeded(self):
        for kind in noises.KINDS:
            a, b = noises.make(kind, 3, 5), noises.make(kind, 3, 5)
            self.assertTrue(np.array_equal(a, b), kind)
            self.assertAlmostEqual(levels.rms_db(a), noises.LEVEL_DB, delta=0.01)
            self.assertFalse(np.array_equal(a, noises.make(kind, 3, 6)), kind)

    def test_rooms_are_there(self):
        m = rooms.manifest()
        for setup, info in m["setups"].items():
            self.assertEqual(len(rooms.echo_response(setup)), int(0.7 * RATE))
            self.assertGreater(info["echo_gain_db"], -25)
        for room in m["rooms"].values():
            self.assertTrue(0.3 <= room["rt60_s"] <= 0.7)

    def test_wav_round_trip(self):
        x = np.random.default_rng(2).uniform(-0.9, 0.9, 1000)
        with tempfile.TemporaryDirectory() as tmp:
            wavio.write(f"{tmp}/a.wav", x, float32=True)
            wavio.write(f"{tmp}/b.wav", x)
            np.testing.assert_allclose(wavio.read_mono48(f"{tmp}/a.wav"), x, atol=1e-7)
            np.testing.assert_allclose(wavio.read_mono48(f"{tmp}/b.wav"), x, atol=2 / 32768)  # written ×32767, read /32768


if __name__ == "__main__":
    unittest.main()
