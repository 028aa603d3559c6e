"""The sound in real rooms (issue 29's figures), two ways.

Offline: the acoustic lab's comparison (scripts/lab/acoustic/compare.py) of intercom's live
microphone chain (`intercom bench-dsp`, the far end as the canceller's reference) with WebRTC's
audio processing, RNNoise and PulseAudio's own canceller on the same seeded echo, noise and
voice-activation scenes: its JSON, as it wrote it.

Live: echo in a room, call after call. A talks (three sentences repeated, injected into A's
microphone); B's speaker reaches B's microphone through the acoustic lab's real-time path
(`audio-lab room`: a soft-clipping loudspeaker and a room response, Docs/acoustic-lab.md);
what A's speaker plays is B's microphone after B's chain. Each run is two calls, B's canceller
on and off (`--no-aec`), and the figure is the energy A hears back over the second half of the
call, off over on, in dB (and over the call's first two seconds, before the canceller has
converged), with B's echo reference re-syncs and moves from its statistics. With a change
(S seconds, SETUP) the echo path becomes another setup's S seconds into each call
(office-laptop-lid: the lid moved), and the figure after it is how long the reduction, in
quarter seconds, takes to come back for a whole second within 6 dB of what it was before, or
to 30 dB (the offline lab's thresholds, each quarter second judged).

The lab's path says at its end whether it moved the echo itself (it fell behind B's speaker by
more than it had queued for B's microphone: realtime.py's `moved_the_echo`); a run in
which it did is made again, twice at most, and the row says how many were."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from harness import ROOT
from harness.lab.audio import AudioLab
from harness.lab.processes import Ports

from . import signals
from .signals import RATE, UTTERANCES

COMPARE = ROOT / "scripts/lab/acoustic/compare.py"
CALL_SECONDS = 14.0
# The recording starts this long after the peers and the path: the change's place in it.
RECORDING_AFTER_S = 1.0
WINDOW = RATE // 4
# Where the echo path changes in a call of the benchmark's, and to what.
LID_CHANGE = (8.0, "office-laptop-lid")


def talker(workdir):
    """A's talk: the benchmark's three sentences, a third of a second apart."""
    return np.concatenate([np.concatenate([signals.espeak(text, voice, workdir), np.zeros(RATE // 3)])
                           for voice, text in UTTERANCES])


# The chain with the linear canceller alone (`--no-echo-distortion`, which a speaker that does
# not distort may want) is scored on the echo scenes too.
LINEAR = "intercom-linear"


def offline(binary, workdir, quick=False, anchors=True, pulse=True):
    """compare.py's figures (its --json) for intercom's chain and, with `anchors`, the
    anchors; `pulse` adds PulseAudio's canceller, which runs in real time in its own lab. The
    echo rows include the chain with `--no-echo-distortion` (as `LINEAR`)."""
    chain = f"{binary} bench-dsp --input-file {{mic}} --far-end-file {{far}} --output-file {{out}}"
    figures = compare(workdir, "rooms-offline", chain + " --vad-file {vad}", "intercom", "echo,noise",
                      ["--processors", "passthrough,webrtc,webrtc-aec,webrtc-ns,rnnoise" if anchors else "passthrough",
                       *(["--quick"] if quick else []), *(["--pulse"] if pulse else [])])
    linear = compare(workdir, "rooms-offline-linear", chain + " --no-echo-distortion", LINEAR, "echo",
                     ["--processors", "", *(["--quick"] if quick else [])])
    for key in ("echo", "echo_path_change"):
        figures[key] = figures.get(key, []) + linear.get(key, [])
    return figures


def compare(workdir, name, command, command_name, does, options):
    """One run of compare.py with `command` scored on `does`; its JSON."""
    out, log = Path(workdir) / f"{name}.json", Path(workdir) / f"{name}.log"
    args = [sys.executable, str(COMPARE), "--command", command, "--command-name", command_name,
            "--command-does", does, "--json", str(out), *options]
    with open(log, "w") as f:
        done = subprocess.run(args, stdout=f, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        tail = " / ".join(log.read_text().strip().splitlines()[-3:])
        raise RuntimeError(f"compare.py failed ({done.returncode}): {tail}")
    return json.loads(out.read_text())


class RoomCalls:
    """Calls between two daemons in one audio lab, B's speaker heard by B's microphone
    through a room (`path_args` for `audio-lab room`)."""

    def __init__(self, lab, binary, workdir, extra, path_args, speech, ports):
        self.lab, self.binary, self.workdir, self.extra, self.path_args = lab, binary, workdir, extra, path_args
        self.ports = ports
        self.talk = workdir / "talk.wav"
        reps = int(np.ceil(CALL_SECONDS * RATE / len(speech)))
        signals.write_wav(self.talk, 0.7 * np.tile(speech, reps)[: int(CALL_SECONDS * RATE)])

    def heard_back(self, cancelling, tag):
        """A's speaker during one call (the room's path started with it): the samples, and B's
        statistics at the call's end."""
        lab, work = self.lab, self.workdir
        a_port, b_port = self.ports.take(2)
        path_report = work / f"{tag}-path.json"
        path_report.unlink(missing_ok=True)
        path = lab.start_helper("room", "--from", "spk_b", "--into", "mic_b", *self.path_args, "--report", str(path_report))
        common = [self.binary, "--no-discovery", "--unencrypted", *self.extra]
        b_stats = work / f"{tag}-b.json"
        b = lab.proc([*common, "--port", str(b_port), "--capture", lab.pcm("mic_b"), "--playback", lab.pcm("spk_b"),
                      "--duration", f"{CALL_SECONDS + 3:.0f}", "--stats-json", str(b_stats),
                      *([] if cancelling else ["--no-aec"])], work / f"{tag}-b.log")
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
        moved = path_moved_the_echo(path, path_report)
        if ended != (0, 0):
            raise RuntimeError(f"a peer of call {tag} failed (logs in {work})")
        return np.fromfile(recording, dtype="<i2").astype(float) / 32768, json.loads(b_stats.read_text()), moved


def path_moved_the_echo(pid, report):
    """Stops the room's path (PID) and reads its report: whether it moved the echo itself (its
    microphone's queue ran dry); True when it wrote nothing."""
    os.kill(pid, signal.SIGTERM)
    for _ in range(40):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    try:
        return bool(json.loads(report.read_text())["moved_the_echo"])
    except (OSError, ValueError, KeyError):
        return True


LAB_TRIES = 3


def energy(x):
    return float(np.mean(x ** 2)) + 1e-20


def reduction(on, off, start, end):
    return 10 * np.log10(energy(off[start:end]) / energy(on[start:end]))


def back_within(on, off, change_s, margin_db=6.0, enough_db=30.0):
    """Seconds after the change until the reduction per quarter second is back, for a whole
    second, within `margin_db` of its median over the two seconds before it or at `enough_db`
    (the offline lab's thresholds, scores.reconvergence, but every quarter second judged;
    None: not within the call), and that median."""
    change = int((change_s - RECORDING_AFTER_S) * RATE)
    end = min(len(on), len(off)) - WINDOW
    # Quarter seconds in a pause of the talker's have no echo to judge: only those whose echo
    # (heard back without cancelling) is within 15 dB of the call's typical one count.
    typical = np.median([energy(off[s:s + WINDOW]) for s in range(0, end, WINDOW)])

    def talking(s):
        return energy(off[s:s + WINDOW]) >= typical / 10 ** 1.5
    judged_before = [reduction(on, off, s, s + WINDOW) for s in range(change - 2 * RATE, change, WINDOW) if talking(s)]
    if not judged_before:
        raise RuntimeError("the talker is silent in the two seconds before the change: move the change")
    before = float(np.median(judged_before))
    goal = min(before - margin_db, enough_db)
    for start in range(change, end, WINDOW):
        judged = [s for s in range(start, min(start + RATE, end), WINDOW) if talking(s)]
        if talking(start) and all(reduction(on, off, s, s + WINDOW) >= goal for s in judged):
            return (start - change) / RATE, before
    return None, before


def check_change(change):
    """Raises if a change (seconds, setup) leaves no room to judge it in a call."""
    if change is not None and not RECORDING_AFTER_S + 2 <= change[0] <= CALL_SECONDS - 1:
        raise ValueError(f"the change must leave two seconds of the recording before it and one after: "
                         f"{RECORDING_AFTER_S + 2:.0f} to {CALL_SECONDS - 1:.0f} s")


def live(binary, workdir, speech, room, runs, busy=False, change=None, extra=(), ports=None, report=print):
    """`runs` runs (a call with B's canceller on, one with it off) in a lab of their own, idle
    or with one core kept busy; each run's figures as a dict, each also passed to `report`
    as a line as it is measured."""
    check_change(change)
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    path_args = ["--room", room, *(["--change-at", str(change[0]), "--to", change[1]] if change else [])]
    lab = AudioLab(workdir, bus=[], prefix="room")
    results = []
    try:
        if busy:
            lab.start_helper("busy")
        calls = RoomCalls(lab, os.path.abspath(binary), workdir, list(extra), path_args, speech, ports or Ports(47900))
        for run in range(runs):
            for tries in range(1, LAB_TRIES + 1):
                again = "" if tries == 1 else f"-{tries}"
                (on, stats, on_moved), (off, _, off_moved) = (calls.heard_back(True, f"on{run}{again}"),
                                                              calls.heard_back(False, f"off{run}{again}"))
                if not (on_moved or off_moved):
                    break
            half = min(len(on), len(off))
            row = dict(room=room, busy=busy, converged_db=reduction(on, off, half // 2, int(half * 0.95)),
                       first_2s_db=reduction(on, off, RATE, 3 * RATE),
                       heard_back_off_dbfs=10 * np.log10(energy(off[half // 2:int(half * 0.95)])),
                       resyncs=stats.get("echo_reference_resyncs"), moves=stats.get("echo_delay_corrections"),
                       echo_delay_ms=stats.get("echo_delay_ms"), lab_tries=tries, lab_moved_echo=on_moved or off_moved)
            line = f"run {run + 1}: echo reduced by {row['converged_db']:.1f} dB over the second half (first 2 s: " \
                   f"{row['first_2s_db']:.1f} dB); heard back without cancelling at {row['heard_back_off_dbfs']:.1f} " \
                   f"dBFS; {row['resyncs']} re-syncs, {row['moves']} moves followed"
            if tries > 1 or row["lab_moved_echo"]:
                line += f"; made {tries} times, the lab's path having moved the echo" + \
                        (" in every one" if row["lab_moved_echo"] else "")
            if change:
                row["back_within_s"], row["before_db"] = back_within(on, off, change[0])
                row["change"] = change
                line += f"; after the change to {change[1]}: {row['before_db']:.1f} dB before, back within 6 dB or at 30 dB " + \
                        (f"{row['back_within_s']:.2f} s after" if row["back_within_s"] is not None else "never")
            results.append(row)
            report(line)
    finally:
        lab.stop()
    return results
