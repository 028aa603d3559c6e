"""Shows that the real-time acoustic path applies its room: in an audio lab whose speaker and
microphone sinks are two channels of one bus (one clock, one recording, sample-aligned),
plays a seeded signal into the speaker with `audio-lab room` running, records both, and
compares the microphone with the same far end run offline through path.AcousticPath.

    /usr/bin/python3 scripts/lab/acoustic/pathcheck.py [--room office-laptop] [--busy] [--json FILE]

Reports the path's delay (where the recorded microphone matches the offline path best,
over the whole run and per second), the correlation there, the best correlation the dry far
end reaches with the microphone at any lag (what a path without the room would give), and
the real-time program's CPU and block times. --busy keeps one core busy meanwhile
(audio-lab busy)."""
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
from acoustic import RATE, levels, rooms, speech, wavio  # noqa: E402
from acoustic.path import AcousticPath, render  # noqa: E402

LAB = Path(__file__).resolve().parent.parent / "audio-lab"
MAX_LAG = int(0.3 * RATE)


def test_signal(seed):
    """1.5 s of white noise at −20 dBFS, then two sentences at an active level of −16 dBFS
    (their peaks reach the loudspeaker's knee), with gaps."""
    rng = np.random.default_rng(seed)
    gap = np.zeros(int(0.5 * RATE))
    noise = levels.scaled_to(rng.standard_normal(int(1.5 * RATE)), -20.0, active=False)
    talk = [levels.scaled_to(speech.espeak(t, v), -16.0) for v, t in (
        ("en-us+m3", "The north wind and the sun were arguing about which of them was the stronger."),
        ("en-gb+f2", "Please bring the red toolbox up to the second floor before the meeting starts."))]
    return np.concatenate([gap, noise, gap, talk[0], gap, talk[1], gap])


def record_through_lab(x, room, knee, workdir, busy, latency):
    """Plays x into spk_b with the room path to mic_b running; returns (far, mic, path report)."""
    lab = Path(workdir) / "lab"
    subprocess.run([str(LAB), "start", "--dir", str(lab), "--prefix", f"pathcheck{os.getpid()}", "--devices",
                    "spk_b,mic_b", "--bus", "spk_b,mic_b", "--owner", str(os.getpid())], check=True, capture_output=True)
    if busy:
        subprocess.run([str(LAB), "busy", "--dir", str(lab), "--owner", str(os.getpid())], check=True, capture_output=True)
    try:
        env = dict(os.environ)
        out = subprocess.run([str(LAB), "env", "--dir", str(lab)], check=True, capture_output=True, text=True).stdout
        for line in out.splitlines():
            name, _, value = line.removeprefix("export ").partition("=")
            env[name] = value.strip("'")
        report = Path(workdir) / "path.json"
        pid = int(subprocess.run([str(LAB), "room", "--dir", str(lab), "--from", "spk_b", "--into", "mic_b", "--room",
                                  room, "--knee", knee, "--latency-ms", latency, "--report", str(report), "--owner", str(os.getpid())],
                                 check=True, capture_output=True, text=True).stdout.split()[-1])
        wav, raw = Path(workdir) / "far.wav", Path(workdir) / "bus.raw"
        wavio.write(wav, x)
        recorder = subprocess.Popen(["parec", "--latency-msec=20", "-d", "bus.monitor", "--raw", f"--rate={RATE}",
                                     "--channels=2", "--channel-map=aux0,aux1", "--format=s16le", str(raw)], env=env)
        time.sleep(0.5)
        subprocess.run(["paplay", "--latency-msec=20", "-d", "spk_b", str(wav)], env=env, check=True)
        time.sleep(1.0)
        recorder.terminate()
        recorder.wait()
        os.kill(pid, 15)
        for _ in range(50):
            if report.exists():
                break
            time.sleep(0.1)
    finally:
        subprocess.run([str(LAB), "stop", "--dir", str(lab)], check=False)
    both = np.frombuffer(raw.read_bytes(), dtype="<i2").astype(np.float64).reshape(-1, 2) / 32768.0
    return both[:, 0], both[:, 1], json.loads(report.read_text()) if report.exists() else {}


def best_lag(a, b):
    """The lag (0…MAX_LAG) at which a follows b best, and the correlation coefficient there."""
    c = signal.fftconvolve(a, b[::-1], mode="full")[len(b) - 1:len(b) - 1 + MAX_LAG]
    lag = int(np.argmax(c))
    return lag, correlation(a[lag:], b[:len(b) - lag])


def correlation(a, b):
    n = min(len(a), len(b))
    a, b = a[:n], b[:n]
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-20))


def analyse(far, mic, room, knee):
    offline = render(far, AcousticPath(rooms.echo_response(room), int(0.005 * RATE), knee=knee))
    lag, corr = best_lag(mic, offline)
    _, dry = best_lag(mic, far)
    per_second = []
    for s in range(0, len(far) - RATE, RATE):
        if levels.rms_db(far[s:s + RATE]) > -45:
            seg = offline[s:s + RATE]
            c = signal.correlate(mic[s:s + RATE + MAX_LAG], seg, mode="valid")
            per_second.append(round(1000 * int(np.argmax(c)) / RATE, 3))
    residual = mic[lag:] - offline[:len(offline) - lag]
    return {"delay_ms": round(1000 * lag / RATE, 3), "correlation_with_offline_path": round(corr, 5),
            "best_correlation_with_dry_far_end": round(dry, 5), "delay_ms_per_second": per_second,
            "residual_db_below_echo": round(levels.rms_db(mic[lag:]) - levels.rms_db(residual), 2)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--room", default="office-laptop")
    ap.add_argument("--knee", default="0.5")
    ap.add_argument("--latency-ms", default="30", help="what the path asks parec and pacat to buffer")
    ap.add_argument("--busy", action="store_true", help="keep one core busy meanwhile")
    ap.add_argument("--seed", type=int, default=29)
    ap.add_argument("--json", help="write the figures here too")
    ap.add_argument("--save", help="keep the recording: PREFIX.far.wav and PREFIX.mic.wav")
    args = ap.parse_args()
    x = test_signal(args.seed)
    with tempfile.TemporaryDirectory(prefix="acoustic-pathcheck-") as tmp:
        far, mic, path_report = record_through_lab(x, args.room, args.knee, tmp, args.busy, args.latency_ms)
    knee = None if args.knee == "none" else float(args.knee)
    if args.save:
        wavio.write(f"{args.save}.far.wav", far, float32=True)
        wavio.write(f"{args.save}.mic.wav", mic, float32=True)
    result = {"room": args.room, "busy_core": args.busy, **analyse(far, mic, args.room, knee), "path": path_report}
    print(json.dumps(result, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
