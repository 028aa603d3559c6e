"""Echo in a room, live: how much less of its own voice a talker hears back with the far peer's
echo cancelling on than off, call after call, idle or with a core kept busy.

A talks (three sentences repeated, injected into A's microphone); B's speaker reaches B's
microphone through the acoustic lab's real-time path (`audio-lab room`: a soft-clipping
loudspeaker and a room response, Docs/acoustic-lab.md); what A's speaker plays is B's
microphone after B's chain. Each run is two calls, B's canceller on and off (`--no-aec`), and
the figure is the energy A hears back over the second half of the call, off over on, in dB
(and over the call's first two seconds, before the canceller has converged).

    python scripts/harness room_echo BINARY [--runs N] [--busy] [--room SETUP] [-- INTERCOM ARGS]
"""
import argparse
import os
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from .bench import UTTERANCES
from .lab.audio import SCRIPT, AudioLab
from .lab.processes import Ports
from .measure import signals
from .measure.signals import RATE

CALL_SECONDS = 14.0


def arguments():
    parser = argparse.ArgumentParser(prog="scripts/room-echo", description=__doc__.strip().splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--busy", action="store_true", help="keep one core busy (audio-lab busy)")
    parser.add_argument("--room", default="office-laptop", help="a setup of scripts/lab/acoustic/rooms/rooms.json")
    parser.add_argument("intercom_args", nargs="*", help="after --: more arguments for both peers")
    return parser.parse_args()


def lab_tool(lab, *args):
    """Runs an audio-lab command that starts a helper owned by this process; its PID."""
    out = subprocess.run([str(SCRIPT), *args, "--dir", str(lab.dir), "--owner", str(os.getpid())],
                         capture_output=True, text=True, check=True).stdout
    return int(out.split()[-1])


class RoomCalls:
    def __init__(self, lab, binary, workdir, extra):
        self.lab, self.binary, self.workdir, self.extra = lab, binary, workdir, extra
        self.ports = Ports(47900)
        speech = np.concatenate([np.concatenate([signals.espeak(text, voice, workdir), np.zeros(RATE // 3)])
                                 for voice, text in UTTERANCES[:3]])
        self.talk = workdir / "talk.wav"
        signals.write_wav(self.talk, 0.7 * np.tile(speech, 3)[: int(CALL_SECONDS * RATE)])

    def heard_back(self, cancelling, tag):
        """A's speaker during one call: mean energy over the second half and over seconds 1-3."""
        lab, work = self.lab, self.workdir
        a_port, b_port = self.ports.take(2)
        common = [self.binary, "--no-discovery", "--unencrypted", *self.extra]
        b = lab.proc([*common, "--port", str(b_port), "--capture", lab.pcm("mic_b"), "--playback", lab.pcm("spk_b"),
                      "--duration", f"{CALL_SECONDS + 3:.0f}", *([] if cancelling else ["--no-aec"])],
                     work / f"{tag}-b.log")
        a = lab.proc([*common, "--port", str(a_port), "--peer", f"127.0.0.1:{b_port}", "--capture", lab.pcm("mic_a"),
                      "--playback", lab.pcm("spk_a"), "--duration", f"{CALL_SECONDS + 2:.0f}"], work / f"{tag}-a.log")
        time.sleep(1.0)
        recording = work / f"{tag}-heard.raw"
        recorder = lab.proc(["parec", "--latency-msec=20", "-d", "spk_a.monitor", "--raw", "--rate=48000",
                             "--channels=1", "--format=s16le", str(recording)], work / f"{tag}-record.log")
        lab.inject(self.talk, "mic_a", work / f"{tag}-inject.log").wait(timeout=CALL_SECONDS + 10)
        recorder.interrupt()
        recorder.wait(timeout=5)
        if a.wait(timeout=30) != 0 or b.wait(timeout=30) != 0:
            raise RuntimeError(f"a peer of call {tag} failed (logs in {work})")
        x = np.fromfile(recording, dtype="<i2").astype(float) / 32768
        converged, early = x[len(x) // 2: int(len(x) * 0.95)], x[RATE: 3 * RATE]
        return float(np.mean(converged ** 2)) + 1e-20, float(np.mean(early ** 2)) + 1e-20


def main():
    args = arguments()
    workdir = Path(tempfile.mkdtemp(prefix="intercom-room-echo-"))
    lab = AudioLab(workdir, bus=[], prefix="room")
    reductions = []
    try:
        lab_tool(lab, "room", "--from", "spk_b", "--into", "mic_b", "--room", args.room)
        if args.busy:
            lab_tool(lab, "busy")
        calls = RoomCalls(lab, os.path.abspath(args.binary), workdir, args.intercom_args)
        for run in range(args.runs):
            on, off = calls.heard_back(True, f"on{run}"), calls.heard_back(False, f"off{run}")
            reduction, early = 10 * np.log10(off[0] / on[0]), 10 * np.log10(off[1] / on[1])
            reductions.append(reduction)
            print(f"run {run + 1}: echo reduced by {reduction:.1f} dB (first 2 s: {early:.1f} dB); "
                  f"heard back without cancelling at {10 * np.log10(off[0]):.1f} dBFS", flush=True)
    finally:
        lab.stop()
    print(f"{args.room}, {'one core busy' if args.busy else 'idle'}: {min(reductions):.1f} / "
          f"{np.median(reductions):.1f} / {max(reductions):.1f} dB (least / median / most) over {len(reductions)} runs")
