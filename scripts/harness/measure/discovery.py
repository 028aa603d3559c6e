"""Time from start to discovery, in the LAN lab (scripts/lab/lan-lab): two network
namespaces on one bridge, each with its own D-Bus and avahi-daemon, and `intercom announce`
(which publishes, browses and prints each event as a JSON line with a CLOCK_MONOTONIC
time) in each."""
import json
import os
import subprocess
import time
from pathlib import Path

from harness.lab.lan import SCRIPT
from harness.lab.processes import Proc


def _events(path):
    out = []
    for line in Path(path).read_text(errors="replace").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            pass
    return out


def _found(events, other):
    for e in events:
        if e.get("event") == "appeared" and e.get("peer", {}).get("name") == other:
            return e["at_nanoseconds"]
    return None


def _started(events):
    for e in events:
        if e.get("event") == "started":
            return e["at_nanoseconds"]
    return None


def run(binary, workdir, trials):
    """Two kinds of trial, `trials` of each, every one with fresh service names:
    - joining: B has run for 2 s when A starts; A's time from its start to finding B, and
      B's time from A's start to finding A (what a user waits for in each room);
    - together: A and B start at the same moment; each one's time from its start to finding
      the other."""
    workdir = Path(workdir)
    lab = f"b{os.getpid() % 100000}"
    env = dict(os.environ, LAN_LAB_OWNER=str(os.getpid()))
    subprocess.run(["bash", str(SCRIPT), "-l", lab, "up", "2"], check=True, capture_output=True, env=env)
    res = dict(joining_new=[], joining_old=[], together=[], failures=0)
    try:
        for kind in ("joining", "together"):
            for i in range(trials):
                a_name, b_name = f"a{kind[0]}{i}", f"b{kind[0]}{i}"
                a_log, b_log = workdir / f"disc-{a_name}.jsonl", workdir / f"disc-{b_name}.jsonl"
                dur_b = 4.5 if kind == "joining" else 3.0

                def announce(host, name, port, seconds, log):
                    return Proc(["bash", str(SCRIPT), "-l", lab, "exec", host, binary, "announce", "--name", name,
                                 "--port", str(port), "--duration", f"{seconds}"], log)

                b = announce("h2", b_name, 5006, dur_b, b_log)
                if kind == "joining":
                    time.sleep(2.0)
                a = announce("h1", a_name, 5004, 3.0, a_log)
                a.wait(timeout=15)
                b.wait(timeout=15)
                ea, eb = _events(a_log), _events(b_log)
                sa, sb = _started(ea), _started(eb)
                fa, fb = _found(ea, b_name), _found(eb, a_name)
                if None in (sa, sb, fa, fb):
                    res["failures"] += 1
                    continue
                if kind == "joining":
                    res["joining_new"].append((fa - sa) / 1e9)
                    res["joining_old"].append((fb - sa) / 1e9)
                else:
                    res["together"] += [(fa - sa) / 1e9, (fb - sb) / 1e9]
    finally:
        subprocess.run(["bash", str(SCRIPT), "-l", lab, "down"], capture_output=True, env=env)
    return res
