"""`intercom relay`: the loopback link between two peers, with a network profile (loss,
jitter, delay, skew), and the counters it prints when it ends."""
import re
from pathlib import Path

from .processes import Proc


def relay_counters(log):
    text = Path(log).read_text(errors="replace")
    out = {}
    for m in re.finditer(r"(\w+): (\d+) received, (\d+) forwarded, (\d+) dropped, (\d+) duplicated", text):
        out[m.group(1)] = dict(received=int(m.group(2)), forwarded=int(m.group(3)), dropped=int(m.group(4)),
                               duplicated=int(m.group(5)))
    return out


def start_relay(binary, ra, rb, pb, profile, duration, log):
    return Proc([binary, "relay", "--listen-a", f"127.0.0.1:{ra}", "--listen-b", f"127.0.0.1:{rb}",
                 "--peer-b", f"127.0.0.1:{pb}", "--network", profile, "--duration", f"{duration:.2f}"], log)
