"""Echo in a room, live: how much less of its own voice a talker hears back with the far peer's
echo cancelling on than off, call after call, idle or with a core kept busy.

A talks (three sentences repeated, injected into A's microphone); B's speaker reaches B's
microphone through the acoustic lab's real-time path (`audio-lab room`: a soft-clipping
loudspeaker and a room response, Docs/acoustic-lab.md); what A's speaker plays is B's
microphone after B's chain. Each run is two calls, B's canceller on and off (`--no-aec`), and
the figure is the energy A hears back over the second half of the call, off over on, in dB
(and over the call's first two seconds, before the canceller has converged). With --change-at S
--to SETUP the echo path becomes another setup's S seconds into each call (office-laptop-lid: the
lid moved), and the figure after the change is how long the reduction, in quarter seconds,
takes to come back within 3 dB of what it was before.

    python scripts/harness room_echo BINARY [--runs N] [--busy] [--room SETUP] [--change-at S --to SETUP]
        [-- INTERCOM ARGS]
"""
import argparse
import os
import signal
import tempfile
import time
from pathlib import Path

import numpy as np

from .bench import UTTERANCES
from .lab.audio import AudioLab
from .lab.processes import Ports
from .measure import signals
from .measure.signals import RATE

CALL_SECONDS = 14.0
# The recording starts this long after the peers and the path: the change's place in it.
RECORDING_AFTER_S = 1.0
WINDOW = RATE // 4


def arguments():
    parser = argparse.ArgumentParser(prog="scripts/room-echo", description=__doc__.strip().splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--busy", action="store_true", help="keep one core busy (audio-lab busy)")
    parser.add_argument("--room", default="office-laptop", help="a setup of scripts/lab/acoustic/rooms/rooms.json")
    parser.add_argument("--change-at", type=float, help="seconds into each call the echo path changes")
    parser.add_argument("--to", help="the setup it changes to (with --change-at)")
    parser.add_argument("intercom_args", nargs="*", help="after --: more arguments for both peers")
    return parser.parse_args()


class RoomCalls:
    def __init__(self, lab, binary, workdir, extra, path_args):
        self.lab, self.binary, self.workdir, self.extra, self.path_args = lab, binary, workdir, extra, path_args
        self.ports = Ports(47900)
        speech = np.concatenate([np.concatenate([signals.espeak(text, voice, workdir), np.zeros(RATE // 3)])
                                 for voice, text in UTTERANCES[:3]])
        self.talk = workdir / "talk.wav"
        signals.write_wav(self.talk, 0.7 * np.tile(speech, 3)[: int(CALL_SECONDS * RATE)])

    def heard_back(self, cancelling, tag):
        """A's speaker during one call (the room's path started with it): the samples."""
        lab, work = self.lab, self.workdir
        a_port, b_port = self.ports.take(2)
        path = lab.start_helper("room", "--from", "spk_b", "--into", "mic_b", *self.path_args)
        common = [self.binary, "--no-discovery", "--unencrypted", *self.extra]
        b = lab.proc([*common, "--port", str(b_port), "--capture", lab.pcm("mic_b"), "--playback", lab.pcm("spk_b"),
                      "--duration", f"{CALL_SECONDS + 3:.0f}", *([] if cancelling else ["--no-aec"])],
                     work / f"{tag}-b.log")
        a = lab.proc([*common, "--port", str(a_port), "--peer", f"127.0.0.1:{b_port}", "--capture", lab.pcm("mic_a"),
                      "--playback", lab.pcm("spk_a"), "--duration", f"{CALL_SECONDS + 2:.0f}"], work / f"{tag}-a.log")
        time.sleep(RECORDING_AFTER_S)
        recording = work / f"{tag}-heard.raw"
        recorder = lab.proc(["parec", "--latency-msec=20", "-d", "spk_a.monitor", "--raw", "--rate=48000",
                             "--channels=1", "--format=s16le", str(recording)], work / f"{tag}-record.log")
        lab.inject(self.talk, "mic_a", work / f"{tag}-inject.log").wait(timeout=CALL_SECONDS + 10)
        recorder.interrupt()
        recorder.wait(timeout=5)
        ended = a.wait(timeout=30), b.wait(timeout=30)
        os.kill(path, signal.SIGTERM)
        if ended != (0, 0):
            raise RuntimeError(f"a peer of call {tag} failed (logs in {work})")
        return np.fromfile(recording, dtype="<i2").astype(float) / 32768


def energy(x):
    return float(np.mean(x ** 2)) + 1e-20


def reduction(on, off, start, end):
    return 10 * np.log10(energy(off[start:end]) / energy(on[start:end]))


def back_within(on, off, change_s):
    """Seconds after the change until the reduction per quarter second is back within 3 dB of
    its median over the two seconds before it (None: not within the call)."""
    change = int((change_s - RECORDING_AFTER_S) * RATE)
    end = min(len(on), len(off)) - WINDOW
    # Quarter seconds in a pause of the talker's have no echo to judge: only those whose echo
    # (heard back without cancelling) is within 15 dB of the call's typical one count.
    typical = np.median([energy(off[s:s + WINDOW]) for s in range(0, end, WINDOW)])
    def talking(s):
        return energy(off[s:s + WINDOW]) >= typical / 10 ** 1.5
    judged_before = [reduction(on, off, s, s + WINDOW) for s in range(change - 2 * RATE, change, WINDOW) if talking(s)]
    if not judged_before:
        raise RuntimeError("the talker is silent in the two seconds before the change: move --change-at")
    before = np.median(judged_before)
    for start in range(change, end, WINDOW):
        judged = [s for s in range(start, min(start + RATE, end), WINDOW) if talking(s)]
        if talking(start) and all(reduction(on, off, s, s + WINDOW) >= before - 3 for s in judged):
            return (start - change) / RATE, before
    return None, before


def main():
    args = arguments()
    if (args.change_at is None) != (args.to is None):
        raise SystemExit("room_echo: --change-at and --to go together")
    if args.change_at is not None and not RECORDING_AFTER_S + 2 <= args.change_at <= CALL_SECONDS - 1:
        raise SystemExit(f"room_echo: --change-at must leave two seconds of the recording before it and one "
                         f"after: {RECORDING_AFTER_S + 2:.0f} to {CALL_SECONDS - 1:.0f} s")
    path_args = ["--room", args.room, *(["--change-at", str(args.change_at), "--to", args.to] if args.to else [])]
    workdir = Path(tempfile.mkdtemp(prefix="intercom-room-echo-"))
    lab = AudioLab(workdir, bus=[], prefix="room")
    reductions = []
    try:
        if args.busy:
            lab.start_helper("busy")
        calls = RoomCalls(lab, os.path.abspath(args.binary), workdir, args.intercom_args, path_args)
        for run in range(args.runs):
            on, off = calls.heard_back(True, f"on{run}"), calls.heard_back(False, f"off{run}")
            half = min(len(on), len(off))
            converged = reduction(on, off, half // 2, int(half * 0.95))
            line = f"run {run + 1}: echo reduced by {converged:.1f} dB over the second half (first 2 s: " \
                   f"{reduction(on, off, RATE, 3 * RATE):.1f} dB); heard back without cancelling at " \
                   f"{10 * np.log10(energy(off[half // 2:int(half * 0.95)])):.1f} dBFS"
            if args.to:
                seconds, before = back_within(on, off, args.change_at)
                line += f"; after the change to {args.to}: {before:.1f} dB before, back within 3 dB " + \
                        (f"{seconds:.2f} s after" if seconds is not None else "never")
            reductions.append(converged)
            print(line, flush=True)
    finally:
        lab.stop()
    print(f"{args.room}, {'one core busy' if args.busy else 'idle'}: {min(reductions):.1f} / "
          f"{np.median(reductions):.1f} / {max(reductions):.1f} dB (least / median / most) over {len(reductions)} runs")
