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
import tempfile
import threading
import time
import traceback
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from bench_lib import discovery as bench_discovery  # noqa: E402
from bench_lib.lab import AudioLab  # noqa: E402
from bench_lib.runs import Ports  # noqa: E402
from soak_lib import call, judge, probes, report  # noqa: E402
from soak_lib.call import PEERS  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent.parent
DEVICES = ("mic_a", "mic_b", "mic_c", "spk_a", "spk_b", "spk_c")
SAMPLE_S = 2.0
WARMUP_S = 60.0
NEVER_RESTARTED = "A"
KILLED, LEAVING, RELOADED, UNPLUGGED, SKEWED = "B", "C", "A", "spk_a", "B"
OUTAGE = "loss=100"
SKEW_SECONDS = 45.0
# The calm after a fault before the next may begin, whatever the schedule says: the checks
# judge 5-10 s after the links are clean (and a restarted peer within 2 s), so a fault that
# ran late must not push the next one into that window.
QUIET_AFTER_FAULT_S = 15.0


def cycle():
    """One round of faults: (offset s, kind, parameters). Link faults last `hold` s, then
    the links are clean again for at least 15 s before the next fault."""
    hold_skew = int(np.ceil(500e-6 * SKEW_SECONDS * 1000)) + 10
    return [
        (0, "link", dict(profile="wifi", hold=20)),
        (35, "link", dict(profile="bursty", hold=20)),
        (70, "link", dict(profile="loss10-jitter30", hold=20)),
        (105, "link", dict(profile=OUTAGE, hold=10, label="outage 10 s")),
        (130, "kill", dict(peer=KILLED, down=3)),
        (150, "leave", dict(peer=LEAVING, down=5)),
        (175, "unplug", dict(device=UNPLUGGED, peer="A", down=5)),
        (195, "avahi", dict(host="h2")),
        (210, "skew", dict(peer=SKEWED, ppm=500, hold=SKEW_SECONDS, profile=f"skew=500")),
        (270, "skew", dict(peer=SKEWED, ppm=-500, hold=SKEW_SECONDS, profile=f"delay={hold_skew}ms,skew=-500")),
        (335, "reload", dict(peer=RELOADED)),
    ], 350


def plan(seconds, smoke=False):
    """Faults from the end of the warm-up on, cycle after cycle, each cycle only if it fits
    whole with a minute of clean call after it; the rest of the run is clean. A smoke run
    (a check that every part works) takes whatever faults fit after a 20 s warm-up."""
    faults, length = cycle()
    if smoke:
        return [dict(at=20 + off, kind=kind, **params) for off, kind, params in faults
                if 20 + off + params.get("hold", 5) + 10 <= seconds]
    out, start = [], WARMUP_S
    while start + length + 60 <= seconds:
        out += [dict(at=start + off, kind=kind, **params) for off, kind, params in faults]
        start += length + 20
    return out


class Soak:
    def __init__(self, args, binary, workdir):
        self.args, self.binary, self.workdir = args, binary, Path(workdir)
        self.seconds = args.minutes * 60.0
        self.ports = Ports(args.port_base)
        self.samples = []  # dicts: t, peer, pid, rss_mb, fds, threads, cpu_s, streams, status_ok
        self.faults = []  # what happened: dicts with kind, times and evidence
        self.notes = []
        self.stop_sampling = threading.Event()
        self.lab = self.peers = self.relays = self.listener = self.disc = None
        self.injectors = []

    # Setting up -------------------------------------------------------------------------
    def setup(self):
        self.lab = AudioLab(self.workdir, devices=DEVICES, bus=DEVICES, prefix="soak")
        names = {p: f"soak-{p.lower()}" for p in PEERS}
        state = {p: self.workdir / f"state-{p}" for p in PEERS}
        for d in state.values():
            d.mkdir(parents=True, exist_ok=True)
        call.pair(self.binary, self.workdir, self.ports, state, names)
        port = dict(zip(PEERS, self.ports.take(3)))
        self.relays = {}
        static = {p: [] for p in PEERS}
        for a, b in call.LINKS:
            la, lb = self.ports.take(2)
            self.relays[a + b] = call.Relay(self.binary, self.workdir, a + b, la, lb, port[b])
            static[a].append(f"127.0.0.1:{la}")
        for r in self.relays.values():
            r.set("clean")
        self.peers = {p: call.Peer(self.binary, self.lab, self.workdir, p, port[p], state[p], static[p]) for p in PEERS}
        for p in PEERS:
            self.peers[p].start()
        why = bench_discovery.available()
        if why:
            self.notes.append(f"avahi-daemon restart not staged: {why}")
        else:
            try:
                self.disc = call.DiscoveryPair(self.binary, self.workdir, self.seconds + 120)
            except Exception as e:  # noqa: BLE001
                self.notes.append(f"avahi-daemon restart not staged: the LAN lab did not start ({e})")
        t0 = time.monotonic() + 0.2
        self.listener = probes.Listener(self.lab, DEVICES, PEERS, self.workdir / "parec.log")
        self.injectors = [probes.Injector(self.lab, p, f"mic_{p.lower()}", t0, self.workdir / f"pacat-{p}.log")
                          for p in PEERS]
        self.sampler = threading.Thread(target=self.sample_loop, daemon=True)
        self.sampler.start()

    def sample_loop(self):
        while not self.stop_sampling.wait(SAMPLE_S - (time.monotonic() % SAMPLE_S)):
            for name, peer in self.peers.items():
                if not peer.alive():
                    continue
                t = time.monotonic()
                fig = call.proc_figures(peer.proc.pid)
                st = peer.status()
                s = dict(t=t, peer=name, pid=peer.proc.pid, status_ok=st is not None, streams={})
                if fig:
                    s.update(fig)
                if st:
                    c = st.get("call", {})
                    by_ssrc = {pp.get("ssrc"): pp.get("name") for pp in c.get("peers", [])}
                    for stream in c.get("streams", []):
                        who = by_ssrc.get(stream.get("ssrc"), "?")
                        s["streams"][who.removeprefix("soak-").upper() if who else "?"] = {
                            k: stream.get(k) for k in ("current_delay_ms", "target_delay_ms", "jitter_ms", "received",
                                                       "lost", "recovered_fec", "concealed", "late", "playout_rate",
                                                       "typical_arrival_delay_ms", "network_budget_ms", "calm_seconds")}
                    s["speaker_queue_ms"] = c.get("speaker_queue_ms")
                    s["playback"] = c.get("playback_device")
                    s["capture"] = c.get("capture_device")
                    s["faults"] = c.get("faults")
                    s["peers_seen"] = len(c.get("peers", []))
                self.samples.append(s)

    # Faults -----------------------------------------------------------------------------
    def set_links(self, profile):
        for r in self.relays.values():
            r.set(profile)

    def set_skew(self, peer, profile):
        for key, r in self.relays.items():
            if key[0] == peer:
                r.set(profile, "clean")
            elif key[1] == peer:
                r.set("clean", profile)
            else:
                r.set("clean")

    def do(self, f):
        kind = f["kind"]
        rec = dict(kind=kind, planned_at=f["at"], **{k: v for k, v in f.items() if k not in ("at", "kind")})
        rec["began"] = time.monotonic()
        try:
            if kind == "link":
                self.set_links(f["profile"])
                rec["evidence"] = [r.history[-1][1:] for r in self.relays.values()]
                self.sleep(f["hold"])
                self.set_links("clean")
                rec["clean_at"] = time.monotonic()
                rec["happened"] = all(r.history[-2][1] == f["profile"] for r in self.relays.values())
            elif kind == "skew":
                self.set_skew(f["peer"], f["profile"])
                rec["skew_from"] = time.monotonic()
                self.sleep(f["hold"])
                self.set_links("clean")
                rec["clean_at"] = time.monotonic()
                rec["happened"] = any(f["profile"] in r.history[-2][1:3] for r in self.relays.values())
            elif kind in ("kill", "leave"):
                # SIGKILL must kill; SIGTERM must leave cleanly (exit 0).
                sig, patience, expected = ((signal.SIGKILL, 5, -signal.SIGKILL) if kind == "kill"
                                           else (signal.SIGTERM, 10, 0))
                p = self.peers[f["peer"]]
                p.signal(sig)
                rc = p.wait_exit(patience)
                rec["left_at"], rec["exit"] = time.monotonic(), rc
                self.sleep(f["down"])
                p.start()
                rec["restarted_at"] = time.monotonic()
                rec["happened"] = rc == expected
            elif kind == "unplug":
                before = self.peers[f["peer"]].status()
                self.lab.unplug(f["device"])
                rec["unplugged_at"] = time.monotonic()
                self.sleep(1.5)
                during = self.peers[f["peer"]].status()
                self.sleep(f["down"] - 1.5)
                self.lab.plug(f["device"])
                rec["plugged_at"] = time.monotonic()
                dev = lambda st: (st or {}).get("call", {}).get("playback_device") or {}  # noqa: E731
                rec["device_before"], rec["device_during"] = dev(before), dev(during)
                # The sink went and came back (both commands succeeded); whether the daemon's status
                # noticed is reported, not required: ALSA's pulse plugin may hide a vanished sink.
                rec["happened"] = True
                rec["status_noticed"] = not dev(during).get("open", True) or dev(during).get("faults", 0) > dev(
                    before).get("faults", 0)
            elif kind == "avahi":
                if self.disc is None:
                    rec["happened"] = None
                    rec["why_not"] = self.notes[-1] if self.notes else "no LAN lab"
                else:
                    self.disc.restart_avahi(f["host"])
                    r = self.disc.restarts[-1]
                    rec.update(restart=r)
                    rec["happened"] = r["ok"]
            elif kind == "reload":
                p = self.peers[f["peer"]]
                p.write_config(vox=70)
                size = p.log_path.stat().st_size
                p.signal(signal.SIGHUP)
                rec["signalled_at"] = time.monotonic()
                self.sleep(1.0)
                text = p.log_path.read_text(errors="replace")[size:]
                rec["log"] = [line for line in text.splitlines() if "reload" in line]
                rec["happened"] = "configuration reloaded" in text and p.alive()
        except Exception as e:  # noqa: BLE001
            rec["happened"] = False
            rec["error"] = f"{type(e).__name__}: {e}"
            traceback.print_exc()
        rec["ended"] = time.monotonic()
        self.faults.append(rec)
        print(f"soak: {report.fmt_clock(rec['began'] - self.t_start)} {kind} {rec.get('profile', rec.get('peer', ''))}"
              f" {'done' if rec.get('happened') else 'NOT DONE' if rec.get('happened') is False else 'not staged'}",
              flush=True)

    def sleep(self, s):
        time.sleep(max(0.0, s))

    # The run ----------------------------------------------------------------------------
    def run(self):
        self.setup()
        self.t_start = time.monotonic()
        self.planned = plan(self.seconds, self.args.smoke)
        print(f"soak: {len(self.planned)} faults planned over {self.args.minutes:g} min; work directory {self.workdir}",
              flush=True)
        if self.disc is not None:
            time.sleep(3)
            if not self.disc.found_each_other():
                self.notes.append("the LAN lab's discovery pair had not found each other 3 s after starting")
        quiet_until = 0.0
        for f in self.planned:
            due = max(self.t_start + f["at"], quiet_until)
            if due > self.t_start + f["at"] + 1.0:
                self.notes.append(f"{judge.fault_name(f)} began {due - self.t_start - f['at']:.1f} s "
                                  "after its planned time, to keep the calm after the fault before it")
            self.sleep(due - time.monotonic())
            self.do(f)
            quiet_until = time.monotonic() + QUIET_AFTER_FAULT_S
            self.check_alive()
        self.sleep(self.t_start + self.seconds - time.monotonic())
        self.t_end = time.monotonic()

    def check_alive(self):
        for name, p in self.peers.items():
            if not p.alive() and p.lives[-1][2] is None:
                rc = p.proc.poll()
                p.lives[-1][1], p.lives[-1][2] = time.monotonic(), rc
                self.notes.append(f"peer {name} (pid {p.proc.pid}) ended by itself with status {rc}")

    def teardown(self):
        self.stop_sampling.set()
        for i in self.injectors:
            i.stop()
        if self.listener:
            time.sleep(probes.MAX_DELAY + 0.2)
            self.listener.stop()
            self.notes.append(f"the recording's clock ran {self.listener.drift_ppm:+.0f} ppm against the monotonic clock; "
                              "clicks are dated by it")
        if self.peers:
            self.check_alive()
            self.final_exits = {}
            for name, p in self.peers.items():
                if p.alive():
                    p.signal(signal.SIGTERM)
            for name, p in self.peers.items():
                if p.lives[-1][2] is None:
                    self.final_exits[name] = p.wait_exit(10)
        if self.relays:
            for r in self.relays.values():
                r.stop()
        if self.disc:
            self.disc.stop()
        if self.lab:
            self.lab.stop()


def main():
    ap = argparse.ArgumentParser(prog="scripts/soak", description=__doc__.splitlines()[0])
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
