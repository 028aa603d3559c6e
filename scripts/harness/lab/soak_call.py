"""The soak's call: three paired `intercom daemon` peers on the audio lab's devices, each
pair joined through its own `intercom relay` on loopback (whose link profile the schedule
changes by restarting it on the same ports), and a discovery pair in the LAN lab."""
import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

from . import lan
from .processes import Ports, Proc

PEERS = ("A", "B", "C")
# The links, each through one relay: (side A of the relay, side B of the relay).
LINKS = (("A", "B"), ("A", "C"), ("B", "C"))
RELAY_START_ATTEMPTS = 3


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


def pair(binary, workdir, ports, state_dirs, names):
    """Pairs every two peers with `intercom pair` and a six-digit code, as users would."""
    for x, y in ((a, b) for i, a in enumerate(PEERS) for b in PEERS[i + 1:]):
        px, py = ports.take(2)
        log = Path(workdir) / f"pair-{x}{y}.log"
        waiting = Proc([binary, "pair", "--state-dir", str(state_dirs[x]), "--port", str(px), "--name", names[x],
                        "--timeout", "30"], log)
        code = None
        for _ in range(100):
            m = re.search(r"code: (\d{6})", log.read_text(errors="replace"))
            if m:
                code = m.group(1)
                break
            time.sleep(0.1)
        if code is None:
            waiting.stop()
            waiting.wait()
            raise RuntimeError(f"pairing {x}-{y}: no code printed; see {log}")
        r = run([binary, "pair", "--code", code, "--peer", f"127.0.0.1:{px}", "--state-dir", str(state_dirs[y]),
                 "--port", str(py), "--name", names[y], "--timeout", "30"])
        rc = waiting.wait(timeout=30)
        if r.returncode != 0 or rc != 0:
            raise RuntimeError(f"pairing {x}-{y} failed ({rc}/{r.returncode}): {r.stdout}{r.stderr}")
    for p in PEERS:
        listed = json.loads(run([binary, "paired", "--json", "--state-dir", str(state_dirs[p])]).stdout)
        if len(listed) != len(PEERS) - 1:
            raise RuntimeError(f"peer {p} trusts {len(listed)} devices after pairing, expected {len(PEERS) - 1}")


class Relay:
    """One link: `intercom relay` between two peers, restarted on the same ports to change
    its profile. Side A is the peer that calls (its --peer names this relay)."""

    def __init__(self, binary, workdir, name, listen_a, listen_b, peer_b):
        self.binary, self.workdir, self.name = binary, Path(workdir), name
        self.listen_a, self.listen_b, self.peer_b = listen_a, listen_b, peer_b
        self.proc = None
        self.profile = None
        self.history = []  # (monotonic time, a->b profile, b->a profile, pid)
        self.count = 0

    def set(self, a_to_b, b_to_a=None):
        b_to_a = b_to_a or a_to_b
        if self.proc is not None:
            self.proc.interrupt()
            self.proc.wait(timeout=5)
        # A port the last relay let go of may be taken for a moment by another program that
        # looked for a free one: try again a few times before the change counts as not made.
        for attempt in range(RELAY_START_ATTEMPTS):
            self.count += 1
            log = self.workdir / f"relay-{self.name}-{self.count}.log"
            self.proc = Proc([self.binary, "relay", "--listen-a", f"127.0.0.1:{self.listen_a}", "--listen-b",
                              f"127.0.0.1:{self.listen_b}", "--peer-b", f"127.0.0.1:{self.peer_b}", "--network", a_to_b,
                              "--network-back", b_to_a], log)
            # It runs once both its sockets are bound (its own words reach the log only at exit).
            def listening():
                return not Ports._free(self.listen_a) and not Ports._free(self.listen_b)
            for _ in range(250):
                if listening() or self.proc.poll() is not None:
                    break
                time.sleep(0.02)
            if self.proc.status is None and listening():
                break
            self.proc.stop()
            self.proc.wait(timeout=5)
            if attempt + 1 == RELAY_START_ATTEMPTS:
                self.proc = None
                raise RuntimeError(f"relay {self.name} did not start with {a_to_b}/{b_to_a}: "
                                   f"{log.read_text(errors='replace')[-300:]}")
            time.sleep(0.5)
        self.profile = (a_to_b, b_to_a)
        self.history.append((time.monotonic(), a_to_b, b_to_a, self.proc.pid))

    def stop(self):
        if self.proc is not None:
            self.proc.interrupt()
            self.proc.wait(timeout=5)


class Peer:
    """One `intercom daemon` with its own state directory, configuration directory and
    status socket, on its own pair of audio-lab devices."""

    def __init__(self, binary, lab, workdir, name, port, state_dir, static_peers):
        self.binary, self.lab, self.name, self.port = binary, lab, name, port
        self.dir = Path(workdir) / f"peer-{name}"
        (self.dir / "config/intercom").mkdir(parents=True, exist_ok=True)
        self.state_dir = state_dir
        self.socket = self.dir / "status.sock"
        self.static_peers = static_peers
        self.proc = None
        self.lives = []  # (start monotonic, end monotonic or None, exit status or None, pid)
        self.write_config(vox=80)

    def write_config(self, vox):
        (self.dir / "config/intercom/config.toml").write_text(f'[talk]\nmode = "open"\nvox-threshold = {vox}\n')

    def start(self):
        env = dict(self.lab.env, XDG_CONFIG_HOME=str(self.dir / "config"))
        args = [self.binary, "daemon", "--no-discovery", "--name", f"soak-{self.name.lower()}", "--port",
                str(self.port), "--state-dir", str(self.state_dir), "--status-socket", str(self.socket),
                "--capture", self.lab.pcm(f"mic_{self.name.lower()}"),
                "--playback", self.lab.pcm(f"spk_{self.name.lower()}"), "--frame-ms", "10"]
        for p in self.static_peers:
            args += ["--peer", p]
        n = len(self.lives) + 1
        self.proc = Proc(args, self.dir / f"daemon-{n}.log", env=env)
        self.lives.append([time.monotonic(), None, None, self.proc.pid])

    @property
    def log_path(self):
        return self.dir / f"daemon-{len(self.lives)}.log"

    def alive(self):
        return self.proc is not None and self.proc.status is None and self.proc.poll() is None

    def signal(self, sig):
        os.kill(self.proc.pid, sig)

    def wait_exit(self, timeout):
        rc = self.proc.wait(timeout=timeout)
        self.lives[-1][1] = time.monotonic()
        self.lives[-1][2] = rc
        return rc

    def status(self):
        try:
            r = run([self.binary, "status", "--json", "--socket", str(self.socket)], timeout=3)
        except subprocess.TimeoutExpired:
            return None
        if r.returncode != 0:
            return None
        try:
            return json.loads(r.stdout)
        except ValueError:
            return None


def proc_figures(pid):
    """RSS (MB), open descriptors, threads and CPU seconds of a running process, from /proc."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        rss = int(re.search(r"VmRSS:\s+(\d+)", status).group(1)) / 1024.0
        threads = int(re.search(r"Threads:\s+(\d+)", status).group(1))
        fds = len(os.listdir(f"/proc/{pid}/fd"))
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        return dict(rss_mb=rss, fds=fds, threads=threads, cpu_s=cpu)
    except (OSError, AttributeError, ValueError, IndexError):
        return None


class DiscoveryPair:
    """Two `intercom announce` processes (intercom's own mDNS publishing and browsing) in
    two hosts of the LAN lab, for the whole run; `restart_avahi` restarts one host's
    avahi-daemon and `rediscovery` reads how long each side took to find the other again."""

    def __init__(self, binary, workdir, seconds):
        self.binary, self.workdir = binary, Path(workdir)
        self.script = str(lan.SCRIPT)
        self.lab = f"s{os.getpid() % 100000}"
        self.env = dict(os.environ, LAN_LAB_OWNER=str(os.getpid()))
        r = run(["bash", self.script, "-l", self.lab, "up", "2"], env=self.env)
        if r.returncode != 0:
            raise RuntimeError(f"LAN lab: {r.stderr.strip()}")
        self.procs, self.logs = {}, {}
        for host, name in (("h1", "soak-d1"), ("h2", "soak-d2")):
            self.logs[host] = self.workdir / f"announce-{host}.jsonl"
            self.procs[host] = Proc(["bash", self.script, "-l", self.lab, "exec", host, binary, "announce", "--name",
                                     name, "--port", "5004", "--duration", f"{seconds:.0f}"], self.logs[host])
        self.names = {"h1": "soak-d1", "h2": "soak-d2"}
        self.restarts = []  # (host, began, ended, old pid, new pid)

    def avahi_pid(self, host):
        try:
            return int((Path("/tmp/intercom-lan-lab") / self.lab / host / "avahi.pid").read_text())
        except (OSError, ValueError):
            return None

    def events(self, host):
        out = []
        for line in self.logs[host].read_text(errors="replace").splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
        return out

    def found_each_other(self):
        return all(any(e.get("event") == "appeared" and e.get("peer", {}).get("name") == self.names[o]
                       for e in self.events(h)) for h, o in (("h1", "h2"), ("h2", "h1")))

    def restart_avahi(self, host):
        old = self.avahi_pid(host)
        began = time.monotonic()
        r = run(["bash", self.script, "-l", self.lab, "avahi-restart", host], env=self.env)
        ended = time.monotonic()
        new = self.avahi_pid(host)
        self.restarts.append(dict(host=host, began=began, ended=ended, old_pid=old, new_pid=new,
                                  ok=r.returncode == 0 and new is not None and new != old, error=r.stderr.strip()))

    def rediscovery(self, restart):
        """Seconds from the restart's start (the old avahi-daemon stopped) to each side's first
        `appeared` or `confirmed` event for the other after it (None: never): the side whose
        daemon restarted keeps the peer it knew and confirms it when the new daemon resolves it
        again; the other side sees it leave and appear again. Counted from the start, the
        daemon's own start-up is included; the lab only notices the new daemon running some
        tenths of a second after it already resolves."""
        out = {}
        for h, o in (("h1", "h2"), ("h2", "h1")):
            t = None
            for e in self.events(h):
                at = e.get("at_nanoseconds")
                if (e.get("event") in ("appeared", "confirmed") and e.get("peer", {}).get("name") == self.names[o]
                        and at is not None
                        and at / 1e9 >= restart["began"]):
                    t = at / 1e9 - restart["began"]
                    break
            out[f"{h} finds {o}"] = t
        return out

    def stop(self):
        for p in self.procs.values():
            p.interrupt()
        for p in self.procs.values():
            p.wait(timeout=5)
        run(["bash", self.script, "-l", self.lab, "down"], env=self.env)
