"""Echo in a room, live: how much less of its own voice a talker hears back with the far peer's
echo cancelling on than off, call after call, idle or with a core kept busy
(harness.measure.rooms: the calls, the figures and how they are taken).

    python scripts/harness room_echo BINARY [--runs N] [--busy] [--room SETUP] [--change-at S --to SETUP]
        [-- INTERCOM ARGS]
"""
import argparse
import tempfile
from pathlib import Path

import numpy as np

from .measure import rooms


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


def main():
    args = arguments()
    if (args.change_at is None) != (args.to is None):
        raise SystemExit("room_echo: --change-at and --to go together")
    change = None if args.to is None else (args.change_at, args.to)
    try:
        rooms.check_change(change)
    except ValueError as e:
        raise SystemExit(f"room_echo: {e}")
    workdir = Path(tempfile.mkdtemp(prefix="intercom-room-echo-"))
    results = rooms.live(args.binary, workdir, rooms.talker(workdir), args.room, args.runs, busy=args.busy, change=change,
                         extra=args.intercom_args, report=lambda line: print(line, flush=True))
    reductions = [r["converged_db"] for r in results]
    print(f"{args.room}, {'one core busy' if args.busy else 'idle'}: {min(reductions):.1f} / "
          f"{np.median(reductions):.1f} / {max(reductions):.1f} dB (least / median / most) over {len(reductions)} runs")
