"""PulseAudio's own echo canceller (module-echo-cancel, aec_method=webrtc: the canceller a
desktop user already has) as an anchor, in real time in the audio lab with the acoustic
path between B's speaker and B's microphone:

    .venv/bin/python scripts/lab/acoustic/pulseanchor.py [--room office-laptop] [--extended]

The echo scene of scenes.py: its far end is played into the canceller's sink (which plays
into spk_b), its near end (already through the talker's response) straight into mic_b,
where the path's echo joins it. The canceller's source and mic_b's monitor are recorded;
each is placed on the scene's timeline by cross-correlation (the microphone against the
offline microphone, the canceller's output against the microphone), and then scored as
the offline processors are, except that ERLE in single talk is taken against the
recorded microphone (the two players are not sample-locked, so the near end lands a few
ms off its offline place; the echo does not). The canceller's gain controls are off (analog_gain_control=0
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from acoustic import RATE, scenes, scores, wavio  # noqa: E402

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
        return subprocess.run(list(args), env=self.env, check=True, capture_output=True, text=True).stdout

    def start(self, *args):
        return subprocess.Popen(list(args), env=self.env)

    def stop(self):
        subprocess.run([str(LAB), "stop", "--dir", self.dir], check=False)


def record(lab, source, path):
    return lab.start("parec", "--latency-msec=20", "-d", source, "--raw", f"--rate={RATE}", "--channels=1",
                     "--format=s16le", str(path))


def play_scene(lab, scene, room, extended, workdir):
    """Plays the scene through the canceller; returns (canceller output, microphone)."""
    args = "analog_gain_control=0 digital_gain_control=0" + (" extended_filter=1" if extended else "")
    lab.run("pactl", "load-module", "module-echo-cancel", "source_master=mic_b.monitor", "sink_master=spk_b",
            "source_name=ec_src", "sink_name=ec_sink", "aec_method=webrtc", f"aec_args=\"{args}\"", "rate=48000",
            "channels=1")
    path = int(subprocess.run([str(LAB), "room", "--dir", lab.dir, "--from", "spk_b", "--into", "mic_b", "--room",
                               room, "--owner", str(os.getpid())], check=True, capture_output=True,
                              text=True).stdout.split()[-1])
    w = Path(workdir)
    wavio.write(w / "far.wav", scene.far)
    wavio.write(w / "near.wav", scene.near)
    recorders = [record(lab, "ec_src", w / "out.raw"), record(lab, "mic_b.monitor", w / "mic.raw")]
    time.sleep(0.7)
    players = [lab.start("paplay", "--latency-msec=20", "-d", "ec_sink", str(w / "far.wav")),
               lab.start("paplay", "--latency-msec=20", "-d", "mic_b", str(w / "near.wav"))]
    for p in players:
        p.wait()
    time.sleep(1.0)
    for r in recorders:
        r.terminate()
        r.wait()
    os.kill(path, 15)
    return [np.frombuffer((w / f).read_bytes(), dtype="<i2").astype(np.float64) / 32768.0 for f in ("out.raw", "mic.raw")]


def placed(x, offset, n):
    """x moved so that its sample `offset` lands at 0, cut or padded to n."""
    x = x[offset:] if offset >= 0 else np.concatenate([np.zeros(-offset), x])
    return np.pad(x, (0, max(0, n - len(x))))[:n]


def on_timeline(scene, out, mic):
    """The recordings on the scene's timeline: the microphone found against the offline
    microphone, the canceller's output against the (placed) microphone."""
    n = len(scene.mic)
    m_lag = scores.best_lag(scene.mic, mic, 10 * RATE)
    mic_t = placed(mic, m_lag, n)
    o_lag = scores.best_lag(mic_t, out, 10 * RATE)
    return placed(out, o_lag, n), mic_t, m_lag, o_lag


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--room", default="office-laptop")
    ap.add_argument("--extended", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--save", help="keep PREFIX.out.wav and PREFIX.mic.wav, on the scene's timeline")
    args = ap.parse_args()
    scene = scenes.echo_scene(args.room)
    with tempfile.TemporaryDirectory(prefix="acoustic-pulseanchor-") as tmp:
        lab = Lab(tmp)
        try:
            out, mic = play_scene(lab, scene, args.room, args.extended, tmp)
        finally:
            lab.stop()
    out_t, mic_t, m_lag, o_lag = on_timeline(scene, out, mic)
    if args.save:
        wavio.write(f"{args.save}.out.wav", out_t, float32=True)
        wavio.write(f"{args.save}.mic.wav", mic_t, float32=True)
    dt_erle, kept = scores.erle_double_talk(scene, out_t)
    pesq, stoi = scores.speech_quality(scene, out_t, "double_talk")
    result = {"processor": "pulse-webrtc" + ("-extended" if args.extended else ""), "setup": args.room,
              "mic_matches_offline": round(float(np.corrcoef(mic_t, scene.mic)[0, 1]), 4),
              "erle_first_2s": scores.erle(mic_t, out_t, scene.spans["first_2s"]),
              "erle_converged": scores.erle(mic_t, out_t, scene.spans["converged"]),
              "erle_double_talk": dt_erle, "near_end_kept_db": kept, "pesq_double_talk": pesq, "stoi_double_talk": stoi,
              "canceller_delay_ms": 1000 * (o_lag - m_lag) / RATE}
    print(json.dumps(result, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
