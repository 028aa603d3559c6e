"""A long call with faults: three paired intercom daemons on audio-lab devices, joined
through `intercom relay` links whose profiles change, with peers killed, stopped and
restarted, a speaker pulled and returned, a peer's clock skewed, a daemon reloaded, and
avahi-daemon restarted under a discovery pair in the LAN lab. It samples every peer's
memory, descriptors, threads, CPU and receive figures, follows click probes from every
microphone to every other speaker, writes a report (Markdown and plots) and exits non-zero
when a promise failed or a planned fault did not happen (scripts/soak --help)."""
import argparse
import datetime
import json
import os
import platform
import signal
import subprocess
import sys
import time
import traceback
from pathlib import Path
from types import SimpleNamespace

from harness import ROOT
from harness.judge import soak as judge
from harness.report import soak as report
from harness.soak_run import Soak


def main():
    ap = argparse.ArgumentParser(prog="scripts/soak", description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=10.0, help="length of the call (default 10; one round of "
                    "faults takes about 7 minutes, longer runs repeat it)")
    ap.add_argument("--output", default=str(ROOT / "lab/soak"), help="where the report and plots go (default lab/soak/)")
    ap.add_argument("--binary", default=str(ROOT / ".build-soak/release/intercom"), help="the intercom executable")
    ap.add_argument("--workdir", help="keep logs and state here (default: OUTPUT/work)")
    ap.add_argument("--port-base", type=int, default=47000, help="first loopback UDP port to use")
    ap.add_argument("--smoke", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--no-build", action="store_true", help="do not build the default binary first")
    ap.add_argument("--judge-again", action="store_true", help=f"do not run: judge the run recorded in OUTPUT/{RECORD} "
                    "again and rewrite its report")
    args = ap.parse_args()
    out = Path(args.output)
    if args.judge_again:
        finish(out, Record(json.loads((out / RECORD).read_text())))
    out.mkdir(parents=True, exist_ok=True)
    default_binary = str(ROOT / ".build-soak/release/intercom")
    if args.binary == default_binary and not args.no_build:
        print("soak: building intercom (release)", flush=True)
        subprocess.run(["swift", "build", "-c", "release", "--scratch-path", ".build-soak", "--product", "intercom"],
                       cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    binary = str(Path(args.binary).resolve())
    if not os.access(binary, os.X_OK):
        sys.exit(f"soak: no intercom executable at {binary}")
    workdir = Path(args.workdir) if args.workdir else out / "work"
    if workdir.exists():
        import shutil
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    soak = Soak(args, binary, workdir)
    # The tree the run starts from (the checkout may move on during a long run).
    commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    started = datetime.datetime.now(datetime.timezone.utc)
    load0 = os.getloadavg()
    error = None

    def interrupted(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    # Stopped from outside: stop the peers, relays and labs on the way out, as at the end.
    signal.signal(signal.SIGTERM, interrupted)
    try:
        soak.run()
    except Exception as e:  # noqa: BLE001
        error = f"{type(e).__name__}: {e}"
        traceback.print_exc()
        soak.t_end = time.monotonic()
    finally:
        soak.teardown()
    if not hasattr(soak, "t_start"):
        sys.exit(f"soak: could not start: {error}")
    meta = dict(started=started.strftime("%Y-%m-%d %H:%M UTC"), minutes=args.minutes, commit=commit,
                machine=f"{os.cpu_count()} CPUs, {platform.machine()}, Linux {platform.release()}",
                load=(load0, os.getloadavg()), command="scripts/soak" + (f" --minutes {args.minutes:g}"
                                                                         if args.minutes != 10 else ""))
    record = Record.of(soak, error, meta)
    (out / RECORD).write_text(json.dumps(record.saved(), default=str))
    finish(out, record)


RECORD = "samples.json"


class Record:
    """What a run measured, everything the judge reads; saved next to the report so that a
    run can be judged again (--judge-again) without running it again."""

    def __init__(self, d):
        self.d = d
        self.samples, self.faults, self.notes, self.planned = d["samples"], d["faults"], d["notes"], d["planned"]
        self.t_start, self.t_end, self.error, self.meta = d["t_start"], d["t_end"], d["error"], d["meta"]
        self.args = SimpleNamespace(smoke=d["smoke"])
        self.listener = SimpleNamespace(events=d["events"])
        self.peers = {name: SimpleNamespace(lives=lives) for name, lives in d["lives"].items()}
        self.disc = SimpleNamespace(rediscovery=lambda restart: restart["rediscovery"])

    @classmethod
    def of(cls, soak, error, meta):
        for f in soak.faults:
            if f["kind"] == "avahi" and "restart" in f and soak.disc is not None:
                f["restart"]["rediscovery"] = soak.disc.rediscovery(f["restart"])
        return cls(dict(samples=soak.samples, faults=soak.faults, notes=soak.notes, planned=getattr(soak, "planned", []),
                        t_start=soak.t_start, t_end=soak.t_end, error=error, meta=meta, smoke=soak.args.smoke,
                        events=soak.listener.events if soak.listener else [],
                        lives={name: p.lives for name, p in (soak.peers or {}).items()}))

    def saved(self):
        return self.d


def finish(out, record):
    """Judges a run's record, writes the report and exits non-zero if a promise failed."""
    results = judge.judge(record, record.error)
    report.write(out, record, results, record.meta)
    failed = [r for r in results if r["verdict"] == "failed"]
    print(f"soak: report in {out / 'report.md'}; {len(results) - len(failed)} of {len(results)} checks passed")
    for r in failed:
        print(f"soak: FAILED {r['promise']}: {r['figure']}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
