"""The acoustic path in real time between two sinks of the audio lab: reads what one sink
plays (its monitor), runs it through path.AcousticPath block by block, and plays the
result into another sink, e.g. from B's speaker into B's microphone. Debian's python3-numpy
and python3-scipy are all it needs.

    python3 scripts/lab/acoustic/realtime.py --from spk_b --into mic_b --room office-laptop \\
        [--noise fan --noise-level -45 | --snr 10] [--near-file SPEECH.wav --near-at 4] \\
        [--ppm 300] [--change-at 8 --to office-laptop-lid] [--seed N] [--duration S] \\
        [--owner PID] [--report FILE.json]

with PULSE_SERVER and PULSE_COOKIE naming the lab (audio-lab room does this). It ends on
SIGTERM or SIGINT, after --duration seconds, or once --owner (default: its parent) has
ended. At its end it writes --report: its CPU time, the time each block took, its own
delay and the streams' latencies once a second.

The delay from the speaker's sink to the microphone's must not move during a run: a jump is
an echo path change the canceller did not ask for. With parec and pacat in pipes (tried
first) it jumped by 0.7-5 ms in about half the runs, by underruns of pacat's queue; so the
path talks to PulseAudio itself through libpulse-simple (pulse.py), asking for blocks of
5 ms from the monitor and keeping 30 ms (--latency-ms) queued for the microphone, and runs
at a real-time priority where it may (it takes 5-8 % of a core): above intercom's own audio and
network threads (SCHED_FIFO 10), since sound in the air is never late. At the same priority as
theirs, a fresh-clone run of the whole suite (two lanes of calls, floods of hostile packets
among them) left the path 34 ms behind the speaker it reads, and the echo moved.

Each block it notes how much of the speaker's sound it has not read yet (`behind_us` in the
report: the most, its first and last second left out) and how much it has queued for the
microphone (`queued_us`); their sum is the delay from the speaker to the microphone through its
queues (`through_us`, which PulseAudio's latencies give to within a block). Falling behind by
less than the microphone's queue holds (15-20 ms) moves nothing: the queue plays what it holds
while the path catches up. Falling behind by more, the queue runs dry (`empty_blocks`), the
microphone's stream starts again once it is full, and the echo comes later from then on: a
20 ms stop of the path (SIGSTOP) moved it by 14 ms, a 60 ms one by 49 ms; after a 10 ms one the
queue still held 5.6 ms, and the stream went on.""" 
import argparse
import json
import os
import resource
import signal as signals
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from acoustic import RATE, levels, noises, pulse, rooms, wavio  # noqa: E402
from acoustic.path import AcousticPath  # noqa: E402
from scipy import signal  # noqa: E402

NOISE_LOOP_SECONDS = 30.0
# Less than this queued for the microphone (a fifth of a block) is an empty queue.
EMPTY_US = 1000


def arguments(argv=None):
    ap = argparse.ArgumentParser(prog="realtime.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--from", dest="source", required=True, help="the sink whose monitor is the loudspeaker's input")
    ap.add_argument("--into", required=True, help="the sink that is the microphone")
    ap.add_argument("--room", required=True, help=f"room setup: {', '.join(rooms.names())}")
    ap.add_argument("--knee", default="0.5", help="loudspeaker soft-clipping knee (full scale = 1), or 'none'")
    ap.add_argument("--noise", choices=noises.KINDS)
    ap.add_argument("--noise-level", type=float, default=-45.0, help="noise RMS at the microphone, dBFS")
    ap.add_argument("--snr", type=float, help="noise this many dB under the near-end talker's active level")
    ap.add_argument("--near-file", help="near-end talker's speech (WAV, 48 kHz mono), through the talker response")
    ap.add_argument("--near-at", type=float, default=0.0, help="when the near end starts talking, s after the start")
    ap.add_argument("--near-level", type=float, default=-28.0, help="near end's active level at the microphone, dBFS")
    ap.add_argument("--near-as-heard", action="store_true",
                    help="the near-end file is already as the microphone hears it: no talker response")
    ap.add_argument("--ppm", type=float, default=0.0, help="the microphone's clock offset from the speaker's")
    ap.add_argument("--change-at", type=float, help="echo path change: seconds after the start")
    ap.add_argument("--to", help="echo path change: the room setup changed to")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--block-ms", type=float, default=5.0)
    ap.add_argument("--latency-ms", type=int, default=30,
                    help="what the microphone's stream keeps queued, ms")
    ap.add_argument("--duration", type=float, help="stop after this many seconds")
    ap.add_argument("--owner", type=int, help="stop once this process has ended (default: the parent)")
    ap.add_argument("--report", help="write a JSON report here at the end")
    ap.add_argument("--ready", help="create this file once the first block has been played")
    args = ap.parse_args(argv)
    if (args.change_at is None) != (args.to is None):
        ap.error("--change-at and --to go together")
    if args.snr is not None and not args.near_file:
        ap.error("--snr is relative to the near-end talker: give --near-file, or --noise-level")
    return args


def near_end(args):
    """The near-end talker at the microphone, from the path's start, and its active level."""
    if not args.near_file:
        return None, None
    speech = levels.scaled_to(wavio.read_mono48(args.near_file), 0.0)
    at_mic = speech if args.near_as_heard else signal.fftconvolve(speech, rooms.talker_response(args.room))
    at_mic = levels.scaled_to(at_mic, args.near_level)
    return np.concatenate([np.zeros(int(args.near_at * RATE)), at_mic]), args.near_level


def make_path(args):
    block = int(round(args.block_ms * RATE / 1000))
    knee = None if args.knee == "none" else float(args.knee)
    change = None
    if args.to:
        change = (args.change_at * RATE, rooms.echo_response(args.to))
    near, near_level = near_end(args)
    noise = None
    if args.noise:
        level = args.noise_level if args.snr is None else near_level - args.snr
        loop = args.duration if args.duration else NOISE_LOOP_SECONDS
        noise = levels.scaled_to(noises.make(args.noise, min(loop, 120.0), args.seed), level, active=False)
    return AcousticPath(rooms.echo_response(args.room), block, knee=knee, change=change, ppm=args.ppm,
                        drift_seconds=args.duration or 120.0, near=near, noise=noise)


# Above intercom's audio and network threads (SCHED_FIFO 10, JoinableThread.swift) and the
# lab's PulseAudio (9).
REAL_TIME_PRIORITY = 20


def real_time_priority():
    """SCHED_FIFO above every thread of the calls it carries where allowed (root, or
    RLIMIT_RTPRIO), so neither a busy core nor a call's threads starve the path; else a nice of
    -10 where allowed; else as it is."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(REAL_TIME_PRIORITY))
        return f"SCHED_FIFO {REAL_TIME_PRIORITY}"
    except (PermissionError, OSError):
        pass
    try:
        os.nice(-10)
        return "nice -10"
    except (PermissionError, OSError):
        return "normal"


def open_streams(args, block):
    """The loudspeaker's input (the monitor, delivered a block at a time) and the
    microphone's output (kept `latency_ms` full, played once it is)."""
    size = 2 * block
    target = 2 * int(args.latency_ms * RATE / 1000)
    recorder = pulse.Stream(pulse.RECORD, f"{args.source}.monitor", RATE, "acoustic path: loudspeaker", fragment=size)
    player = pulse.Stream(pulse.PLAYBACK, args.into, RATE, "acoustic path: microphone", target=target, minimum=size)
    return recorder, player


class Stop(Exception):
    pass


def stop_on_signal(number, _frame):
    raise Stop(f"signal {number}")


def run(args, path, recorder, player, stats):
    owner = args.owner or os.getppid()
    started = time.monotonic()
    next_check = started
    size = 2 * path.block
    while True:
        data = recorder.read(size)
        t0 = time.perf_counter()
        far = np.frombuffer(data, dtype="<i2").astype(np.float64) / 32768.0
        player.write(wavio.pcm16(path.step(far)).tobytes())
        stats["block_ms"].append(1000 * (time.perf_counter() - t0))
        stats["behind_us"].append(recorder.latency_us())
        stats["queued_us"].append(player.latency_us())
        if len(stats["block_ms"]) % 200 == 0:  # once a second
            stats["latency"].append((len(stats["block_ms"]), stats["behind_us"][-1], stats["queued_us"][-1]))
        if len(stats["block_ms"]) == 1:
            stats["first_block"] = (time.monotonic(), cpu_seconds())
            if args.ready:
                Path(args.ready).touch()
        now = time.monotonic()
        if args.duration and now - started >= args.duration:
            raise Stop("duration reached")
        if now >= next_check:
            next_check = now + 0.5
            try:
                os.kill(owner, 0)
            except ProcessLookupError:
                raise Stop(f"owner {owner} ended")


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def report(args, path, stats, reason, wall):
    """The run's figures; the CPU share is counted from the first block on (start-up, the
    imports and the noise's making, is left out and reported apart)."""
    cpu = cpu_seconds()
    since, cpu_then = stats.get("first_block", (time.monotonic(), cpu))
    running = max(time.monotonic() - since, 1e-9)
    ms = np.array(stats["block_ms"]) if stats["block_ms"] else np.zeros(1)
    out = {
        "room": args.room, "stopped": reason, "seconds": round(wall, 2), "blocks": len(stats["block_ms"]),
        "block_ms": 1000 * path.block / RATE, "own_delay_ms": round(1000 * path.delay_samples / RATE, 3),
        "startup_cpu_seconds": round(cpu_then, 3), "running_seconds": round(running, 2),
        "cpu_share_of_a_core": round((cpu - cpu_then) / running, 4),
        "block_processing_ms": {"mean": round(float(ms.mean()), 3), "p99": round(float(np.percentile(ms, 99)), 3),
                                "max": round(float(ms.max()), 3)},
    }
    # Its first second (the queues filling) and its stopping (the last) left out; a block whose
    # latencies PulseAudio could not give (None) is counted apart, not read as an empty queue.
    second = int(RATE / path.block)
    pairs = list(zip(stats["behind_us"], stats["queued_us"]))
    pairs = pairs[second:-second] or pairs
    known = np.array([p for p in pairs if None not in p] or [(0, 0)], dtype=np.int64)
    behind, queued = known[:, 0], known[:, 1]
    through = behind + queued
    out["behind_us"] = {"max": int(behind.max()), "p99": int(np.percentile(behind, 99))}
    out["through_us"] = {"min": int(through.min()), "median": int(np.median(through)), "max": int(through.max())}
    # Blocks after which the microphone's queue was empty: its stream ran dry (it reads 0 while
    # PulseAudio waits for the queue to fill again), and the echo came that much later after.
    out["queued_us"] = {"min": int(queued.min()), "empty_blocks": int(np.count_nonzero(queued < EMPTY_US)),
                        "unknown_blocks": len(pairs) - len([p for p in pairs if None not in p])}
    # The one place the rule is stated; the suite's tests and the benchmark read this verdict:
    # a run in which the lab itself changed the echo path is no test of a steady path.
    out["moved_the_echo"] = out["queued_us"]["empty_blocks"] > 0
    out["scheduling"] = stats.get("scheduling")
    out["latency"] = stats["latency"]
    if args.report:
        Path(args.report).write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out), file=sys.stderr)


def main(argv=None):
    args = arguments(argv)
    path = make_path(args)
    for s in (signals.SIGTERM, signals.SIGINT):
        signals.signal(s, stop_on_signal)
    stats = {"block_ms": [], "latency": [], "behind_us": [], "queued_us": []}
    stats["scheduling"] = real_time_priority()
    recorder, player = open_streams(args, path.block)
    started = time.monotonic()
    reason = "ended"
    try:
        run(args, path, recorder, player, stats)
    except Stop as stop:
        reason = str(stop)
    except OSError as error:
        reason = str(error)
    finally:
        signals.signal(signals.SIGTERM, signals.SIG_IGN)
        recorder.close()
        player.close()
        report(args, path, stats, reason, time.monotonic() - started)


if __name__ == "__main__":
    main()
