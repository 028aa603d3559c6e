"""PulseAudio's own echo canceller (module-echo-cancel, aec_method=webrtc: the canceller a
desktop user already has) as an anchor, in real time in the audio lab with the acoustic
path between B's speaker and B's microphone:

    .venv/bin/python scripts/lab/acoustic/pulseanchor.py [--room office-laptop] [--extended]

The echo scene of scenes.py: its far end is played into the canceller's sink (which plays
into spk_b); its near end (already through the talker's response) is added by the acoustic
path itself (--near-as-heard), about when double talk starts. The canceller's source and
the monitors of mic_b and spk_b are recorded, each on its own. The scene is rebuilt on the
recording's timeline: the echo is the path run offline on what spk_b really played, placed
where it matches the recorded microphone; the near end is found in what is left; the
canceller's output is placed against the near end; then it is scored as the offline processors are ("mic_explained":
how well echo plus near end so placed match the recording; "near_end_late_ms": how far the
near end landed from its place). The canceller's gain controls are off (analog_gain_control=0
digital_gain_control=0) so levels compare; --extended adds extended_filter=1."""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy import signal

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from acoustic import RATE, rooms, scenes, scores, wavio  # noqa: E402
from acoustic.path import AcousticPath, render  # noqa: E402

LAB = Path(__file__).resolve().parent.parent / "audio-lab"


class Lab:
    def __init__(self, workdir):
        self.dir = str(Path(workdir) / "lab")
        subprocess.run([str(LAB), "start", "--dir", self.dir, "--prefix", f"pulseanchor{os.getpid()}", "--devices",
                        "spk_b,mic_b", "--owner", str(os.getpid())], check=True, capture_output=True)
        self.env = dict(os.environ)
        out = subprocess.run([str(LAB), "env", "--dir", self.dir], check=True, capture_output=True, text=True).stdout
        for line in out.splitlines():
            name, _, value = line.removeprefix("export ").partition("=")
            self.env[name] = value.strip("'")

    def run(self, *args):
        done = subprocess.run(list(args), env=self.env, capture_output=True, text=True)
        if done.returncode != 0:
            log = Path(self.dir, "logs", "pulseaudio.log").read_text().splitlines()[-5:]
            raise RuntimeError(f"{' '.join(args)}: {done.stderr.strip()}; PulseAudio: {' / '.join(log)}")
        return done.stdout

    def start(self, *args):
        return subprocess.Popen(list(args), env=self.env)

    def stop(self):
        subprocess.run([str(LAB), "stop", "--dir", self.dir], check=False)


def record(lab, source, path):
    return lab.start("parec", "--latency-msec=200", "-d", source, "--raw", f"--rate={RATE}", "--channels=1",
                     "--format=s16le", str(path))


def play_scene(lab, scene, room, extended, workdir):
    """Plays the scene through the canceller; returns (canceller output, microphone, what
    the speaker played)."""
    args = "analog_gain_control=0 digital_gain_control=0" + (" extended_filter=1" if extended else "")
    lab.run("pactl", "load-module", "module-echo-cancel", "source_master=mic_b.monitor", "sink_master=spk_b",
            "source_name=ec_src", "sink_name=ec_sink", "aec_method=webrtc", f"aec_args=\"{args}\"", "rate=48000",
            "channels=1")
    w = Path(workdir)
    wavio.write(w / "far.wav", scene.far)
    a, b = scene.spans["double_talk"]
    wavio.write(w / "near.wav", scene.near[a:b], float32=True)
    # The near end joins the echo in the path itself, so the two cannot slip against each
    # other; it starts about when the far end's double talk does (found again in on_timeline).
    path = int(lab.run(str(LAB), "room", "--dir", lab.dir, "--from", "spk_b", "--into", "mic_b", "--room", room,
                       "--near-file", str(w / "near.wav"), "--near-as-heard", "--near-level",
                       str(scenes.NEAR_LEVEL_DB), "--near-at", str(0.8 + a / RATE),
                       "--owner", str(os.getpid())).split()[-1])
    # (A bus lab would record speaker and microphone sample-aligned, but module-echo-cancel
    # between two remapped sinks of one bus timed out on loading or stalled the server.)
    recorders = [record(lab, "ec_src", w / "out.raw"), record(lab, "mic_b.monitor", w / "mic.raw"),
                 record(lab, "spk_b.monitor", w / "spk.raw")]
    time.sleep(0.7)
    # Long queues: an underrun in mid-scene would move one part against the other; when they
    # start does not matter (see on_timeline).
    players = [lab.start("paplay", "--latency-msec=200", "-d", "ec_sink", str(w / "far.wav"))]
    for p in players:
        p.wait()
    time.sleep(1.0)
    for r in recorders:
        r.terminate()
        r.wait()
    os.kill(path, 15)
    return [np.frombuffer((w / f).read_bytes(), dtype="<i2").astype(np.float64) / 32768.0
            for f in ("out.raw", "mic.raw", "spk.raw")]


def shifted(x, offset, n):
    """x starting `offset` samples later (earlier if negative), cut or padded to n."""
    x = np.concatenate([np.zeros(offset), x]) if offset >= 0 else x[-offset:]
    return np.pad(x, (0, max(0, n - len(x))))[:n]


def signed_lag(x, y, max_lag):
    """The lag (−max_lag…max_lag) by which y follows x best."""
    c = signal.fftconvolve(y, x[::-1], mode="full")
    zero = len(x) - 1
    lo, hi = max(0, zero - max_lag), min(len(c), zero + max_lag + 1)
    return lo + int(np.argmax(c[lo:hi])) - zero


def on_timeline(scene, out, mic, speaker, room):
    """The scene as it was played, on the recorded microphone's timeline. The echo is the
    acoustic path run offline on what the speaker really played (the canceller's sink may
    drop or add samples on its way to spk_b), placed where it matches the microphone; the
    near end is found in what is left; the canceller's output is placed against the near
    end (each recorder started on its own). Returns (scene, output, offsets in samples)."""
    n = len(mic)
    a, b = scene.spans["double_talk"]
    played = render(speaker, AcousticPath(rooms.echo_response(room), scenes.BLOCK))
    d_echo = signed_lag(played, mic, 2 * RATE)
    echo = shifted(played, d_echo, n)
    d_far = signed_lag(scene.far[:a], speaker, 10 * RATE) + d_echo
    d_near = signed_lag(scene.near[a:b], mic - echo, 10 * RATE + a) - a
    near = shifted(scene.near, d_near, n)
    d_out = signed_lag(near, out, 2 * RATE)
    out = shifted(out, -d_out, n)
    spans = {"first_2s": tuple(t + d_far for t in scene.spans["first_2s"]),
             "converged": (scene.spans["converged"][0] + d_far, min(scene.spans["converged"][1] + d_far,
                                                                   a + d_near - RATE // 2)),
             "double_talk": (a + d_near, b + d_near)}
    zero = np.zeros(n)
    return scenes.Scene(scene.name, zero, mic, echo, near, zero, spans), out, {"far": d_far, "near": d_near}


def measure(room="office-laptop", extended=False, save=None):
    """Plays the echo scene of `room` through PulseAudio's canceller; returns its scores."""
    scene = scenes.echo_scene(room)
    with tempfile.TemporaryDirectory(prefix="acoustic-pulseanchor-") as tmp:
        lab = Lab(tmp)
        try:
            out, mic, speaker = play_scene(lab, scene, room, extended, tmp)
        finally:
            lab.stop()
    played, out, offsets = on_timeline(scene, out, mic, speaker, room)
    if save:
        wavio.write(f"{save}.out.wav", out, float32=True)
        wavio.write(f"{save}.mic.wav", played.mic, float32=True)
    dt_erle, kept = scores.erle_double_talk(played, out)
    pesq, stoi = scores.speech_quality(played, out, "double_talk")
    explained = played.echo + played.near
    return {"setup": room, "processor": "pulse-webrtc" + ("-extended" if extended else ""),
            "erle_first_2s": scores.erle(played.echo, out, played.spans["first_2s"]),
            "erle_converged": scores.erle(played.echo, out, played.spans["converged"]),
            "erle_double_talk": dt_erle, "near_end_kept_db": kept, "pesq_double_talk": pesq, "stoi_double_talk": stoi,
            "mic_explained": float(np.corrcoef(explained, played.mic)[0, 1]),
            "echo_explained": float(np.corrcoef(*[x[:played.spans["converged"][1]] for x in (played.echo, played.mic)])[0, 1]),
            "placed_well": bool(np.corrcoef(explained, played.mic)[0, 1] >= 0.99),
            "near_end_late_ms": 1000 * (offsets["near"] - offsets["far"]) / RATE}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--room", default="office-laptop")
    ap.add_argument("--extended", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--save", help="keep PREFIX.out.wav and PREFIX.mic.wav, on the scene's timeline")
    args = ap.parse_args()
    result = measure(args.room, args.extended, args.save)
    print(json.dumps(result, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
