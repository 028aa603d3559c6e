"""Talk key to ear: the time from pressing the talk key (space, typed into a real terminal
through tmux) to the first sample of speech at the far end, at the first press of a call and
after minutes of silence, against the same call's steady mouth-to-ear delay.

Peer A runs in tmux in push-to-talk mode with a file as its microphone: a voice that never
stops (a buzz at 150 Hz with four syllables a second, never quieter than -30 dBFS), so speech
is under way whenever the key goes down. Peer B writes what it hears to a file. Both files are
on the wall clock: each process records the CLOCK_REALTIME time of its file's first sample
(`--stats-json`), and the benchmark the time of each key press (just before tmux is told to
type it). Per press:

- key to ear: the first heard sample after the press (B's output above -40 dBFS), minus the press;
- steady: the delay of the same talkspurt from 0.3 s after its start (cross-correlation of B's
  output with A's input), the call's mouth-to-ear delay;
- sent from: where in A's input the first heard sample was taken, minus the press (0: from the
  press on; below -5 ms: older audio, from before the press; above 0, a clipped start);
- key reached intercom: when A's call got the press (its statistics keep the wall-clock time of
  each), minus the press: the time tmux took to start its client and type the key, which a
  keyboard and a terminal emulator do in about a millisecond; and key seen to ear, the first
  heard sample minus that, which is what intercom is judged by."""
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from . import signals
from .signals import RATE

HOLD_SECONDS = 1.5
# The first repeat of a held key comes after the terminal's repeat delay, the rest faster:
# as TerminalTests hold it.
FIRST_REPEAT, REPEAT = 0.4, 0.1


def available():
    return None if shutil.which("tmux") else "tmux is not installed (scripts/setup installs it)"


def voice(seconds, seed=5):
    """A voice that never stops: harmonics of 150 Hz with a slow vibrato, its level moving as
    syllables do (4 Hz) between -30 and -8 dBFS."""
    t = np.arange(int(seconds * RATE)) / RATE
    rng = np.random.default_rng(seed)
    f0 = 150 * (1 + 0.03 * np.sin(2 * np.pi * 0.7 * t))
    phase = 2 * np.pi * np.cumsum(f0) / RATE
    x = sum(np.sin(k * phase + rng.uniform(0, 2 * np.pi)) / k for k in range(1, 20))
    x /= np.max(np.abs(x))
    level_db = -19 + 11 * np.sin(2 * np.pi * 4 * t)
    return (x * 10 ** (level_db / 20)).astype(np.float64)


class Tmux:
    def __init__(self, workdir):
        self.socket = str(Path(workdir) / "tmux.sock")

    def run(self, *args):
        return subprocess.run(["tmux", "-S", self.socket, *args], capture_output=True, text=True).stdout

    def stop(self):
        pid = self.run("display-message", "-p", "#{pid}").strip()
        if pid.isdigit():
            os.kill(int(pid), 15)


def hold_key(tmux, target, seconds):
    """Holds space as a terminal reports it (a press, then repeats); returns the wall-clock
    time of the press (ns), taken just before tmux is told to type it."""
    pressed = time.time_ns()
    tmux.run("send-keys", "-t", target, " ")
    time.sleep(FIRST_REPEAT)
    while (time.time_ns() - pressed) / 1e9 < seconds:
        tmux.run("send-keys", "-t", target, " ")
        time.sleep(REPEAT)
    return pressed


def _best_lag(seg, said, in_guess, lags, best, best_lag):
    """The lag among `lags` where `seg` matches `said` best (normalised correlation), if it
    beats `best`; `said` is searched `lag` samples before `in_guess`."""
    for lag in lags:
        j = in_guess - lag
        if j < 0 or j + len(seg) > len(said):
            continue
        ref = said[j:j + len(seg)]
        c = float(np.dot(seg, ref) / (np.linalg.norm(seg) * np.linalg.norm(ref) + 1e-12))
        if c > best:
            best, best_lag = c, lag
    return best, best_lag


def measure_press(heard, out_start_ns, said, in_start_ns, pressed_ns):
    """The figures of one press (see the module's text), from B's output and A's input."""
    def out_index(t_ns):
        return int(round((t_ns - out_start_ns) * RATE / 1e9))
    start = max(0, out_index(pressed_ns))
    block = RATE // 1000
    onset = None
    for i in range(start, min(len(heard), start + 2 * RATE) - block, block):
        if np.sqrt(np.mean(heard[i:i + block] ** 2)) > 0.01:
            onset = i
            break
    if onset is None:
        return dict(error="nothing was heard within 2 s of the press")
    # The talkspurt's steady delay: from 0.3 s after its onset, 0.5 s of it against the input.
    a = onset + int(0.3 * RATE)
    seg = heard[a:a + RATE // 2]
    # Where that piece was said, searched over 0-400 ms of delay.
    in_guess = int(round((out_start_ns + a * 1e9 / RATE - in_start_ns) * RATE / 1e9))
    # Every 24th lag first, then each lag around the best of those.
    best, best_lag = _best_lag(seg, said, in_guess, range(0, int(0.4 * RATE), 24), -1.0, 0)
    best, best_lag = _best_lag(seg, said, in_guess, range(max(0, best_lag - 24), best_lag + 25), best, best_lag)
    said_ns = in_start_ns + (in_guess - best_lag) * 1e9 / RATE
    steady_ms = (out_start_ns + a * 1e9 / RATE - said_ns) / 1e6
    onset_ns = out_start_ns + onset * 1e9 / RATE
    key_to_ear = (onset_ns - pressed_ns) / 1e6
    sent_from = (onset_ns - steady_ms * 1e6 - pressed_ns) / 1e6
    return dict(key_to_ear_ms=key_to_ear, steady_ms=steady_ms, sent_from_ms=sent_from, correlation=best)


def run(binary, workdir, ports, silence_seconds):
    """One call, two presses: the first right after the call is up, the second after
    `silence_seconds` with the key up. Returns the figures of each press."""
    workdir = Path(workdir) / "talkkey"
    workdir.mkdir(parents=True, exist_ok=True)
    pa, pb = ports.take(2)
    duration = silence_seconds + 3 * HOLD_SECONDS + 30
    said = voice(duration + 10)
    in_path = workdir / "voice.wav"
    signals.write_wav(in_path, said)
    out_path, a_json, b_json = workdir / "heard.wav", workdir / "a.json", workdir / "b.json"
    state = Path(tempfile.mkdtemp(prefix="talkkey-state-", dir=workdir))
    env = dict(os.environ, XDG_STATE_HOME=str(state))
    b = subprocess.Popen([binary, "--no-discovery", "--port", str(pb), "--output-file", str(out_path), "--name", "bo",
                          "--duration", f"{duration + 5:.0f}", "--stats-json", str(b_json)], env=env,
                         stdout=open(workdir / "b.out", "w"), stderr=open(workdir / "b.log", "w"))
    tmux = Tmux(workdir)
    presses = []
    try:
        command = (f"XDG_STATE_HOME={state} {binary} --no-discovery --port {pa} --peer 127.0.0.1:{pb} "
                   f"--input-file {in_path} --mode ptt --name ana --duration {duration:.0f} --stats-json {a_json} "
                   f"2>{workdir / 'a.log'}; sleep 30")
        tmux.run("new-session", "-d", "-s", "ptt", "-x", "100", "-y", "20", command)
        # The call is up when A shows B (its session up, its hello heard).
        deadline = time.monotonic() + 60
        while " bo " not in tmux.run("capture-pane", "-p", "-t", "ptt") and time.monotonic() < deadline:
            time.sleep(0.05)
        presses.append(("first press of the call", hold_key(tmux, "ptt", HOLD_SECONDS)))
        time.sleep(silence_seconds)
        presses.append((f"after {silence_seconds / 60:g} min of silence", hold_key(tmux, "ptt", HOLD_SECONDS)))
        time.sleep(2)
        tmux.run("send-keys", "-t", "ptt", "q")
        deadline = time.monotonic() + 20
        while not a_json.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        b.send_signal(15)
        b.wait(timeout=20)
    finally:
        if b.poll() is None:
            b.kill()
        tmux.stop()
    sa, sb = json.loads(a_json.read_text()), json.loads(b_json.read_text())
    heard, _ = signals.read_wav(out_path)
    seen_presses = sa.get("talk_key_presses_ns", [])
    results = []
    for name, pressed in presses:
        r = measure_press(heard, sb["output_start_ns"], said, sa["input_start_ns"], pressed)
        r["case"] = name
        seen = next((t for t in seen_presses if t >= pressed), None)
        if seen is not None and "key_to_ear_ms" in r:
            r["key_reached_ms"] = (seen - pressed) / 1e6
            r["seen_to_ear_ms"] = r["key_to_ear_ms"] - r["key_reached_ms"]
        results.append(r)
    return results
