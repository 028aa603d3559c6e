"""The soak's run: three paired daemons on the audio lab's devices joined through relays,
the planned faults made to happen one after the other, every peer sampled every SAMPLE_S
seconds and click probes followed from every microphone to every other speaker."""
import signal
import threading
import time
import traceback
from pathlib import Path

from harness.judge.soak import fault_name
from harness.lab import lan, soak_call
from harness.lab.audio import AudioLab
from harness.lab.processes import Ports
from harness.lab.soak_call import PEERS
from harness.lab.soak_schedule import QUIET_AFTER_FAULT_S, plan
from harness.measure import probes
from harness.report.soak import fmt_clock

DEVICES = ("mic_a", "mic_b", "mic_c", "spk_a", "spk_b", "spk_c")
SAMPLE_S = 2.0


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
        soak_call.pair(self.binary, self.workdir, self.ports, state, names)
        port = dict(zip(PEERS, self.ports.take(3)))
        self.relays = {}
        static = {p: [] for p in PEERS}
        for a, b in soak_call.LINKS:
            la, lb = self.ports.take(2)
            self.relays[a + b] = soak_call.Relay(self.binary, self.workdir, a + b, la, lb, port[b])
            static[a].append(f"127.0.0.1:{la}")
        for r in self.relays.values():
            r.set("clean")
        self.peers = {p: soak_call.Peer(self.binary, self.lab, self.workdir, p, port[p], state[p], static[p]) for p in PEERS}
        for p in PEERS:
            self.peers[p].start()
        why = lan.available()
        if why:
            self.notes.append(f"avahi-daemon restart not staged: {why}")
        else:
            try:
                self.disc = soak_call.DiscoveryPair(self.binary, self.workdir, self.seconds + 120)
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
                fig = soak_call.proc_figures(peer.proc.pid)
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
        """Makes one planned fault happen and records what happened, with its evidence."""
        kind = f["kind"]
        rec = dict(kind=kind, planned_at=f["at"], **{k: v for k, v in f.items() if k not in ("at", "kind")})
        rec["began"] = time.monotonic()
        try:
            make = self.FAULTS.get(kind)
            if make:
                make(self, f, rec)
        except Exception as e:  # noqa: BLE001
            rec["happened"] = False
            rec["error"] = f"{type(e).__name__}: {e}"
            traceback.print_exc()
        rec["ended"] = time.monotonic()
        self.faults.append(rec)
        print(f"soak: {fmt_clock(rec['began'] - self.t_start)} {kind} {rec.get('profile', rec.get('peer', ''))}"
              f" {'done' if rec.get('happened') else 'NOT DONE' if rec.get('happened') is False else 'not staged'}",
              flush=True)

    def link_fault(self, f, rec):
        self.set_links(f["profile"])
        rec["evidence"] = [r.history[-1][1:] for r in self.relays.values()]
        self.sleep(f["hold"])
        self.set_links("clean")
        rec["clean_at"] = time.monotonic()
        rec["happened"] = all(r.history[-2][1] == f["profile"] for r in self.relays.values())

    def skew_fault(self, f, rec):
        self.set_skew(f["peer"], f["profile"])
        rec["skew_from"] = time.monotonic()
        self.sleep(f["hold"])
        self.set_links("clean")
        rec["clean_at"] = time.monotonic()
        rec["happened"] = any(f["profile"] in r.history[-2][1:3] for r in self.relays.values())

    def departure_fault(self, f, rec):
        # SIGKILL must kill; SIGTERM must leave cleanly (exit 0).
        sig, patience, expected = ((signal.SIGKILL, 5, -signal.SIGKILL) if f["kind"] == "kill"
                                   else (signal.SIGTERM, 10, 0))
        p = self.peers[f["peer"]]
        p.signal(sig)
        rc = p.wait_exit(patience)
        rec["left_at"], rec["exit"] = time.monotonic(), rc
        self.sleep(f["down"])
        p.start()
        rec["restarted_at"] = time.monotonic()
        rec["happened"] = rc == expected

    def unplug_fault(self, f, rec):
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

    def avahi_fault(self, f, rec):
        if self.disc is None:
            rec["happened"] = None
            rec["why_not"] = self.notes[-1] if self.notes else "no LAN lab"
        else:
            self.disc.restart_avahi(f["host"])
            r = self.disc.restarts[-1]
            rec.update(restart=r)
            rec["happened"] = r["ok"]

    def reload_fault(self, f, rec):
        p = self.peers[f["peer"]]
        p.write_config(vox=70)
        size = p.log_path.stat().st_size
        p.signal(signal.SIGHUP)
        rec["signalled_at"] = time.monotonic()
        self.sleep(1.0)
        text = p.log_path.read_text(errors="replace")[size:]
        rec["log"] = [line for line in text.splitlines() if "reload" in line]
        rec["happened"] = "configuration reloaded" in text and p.alive()

    # Each kind of fault the schedule names, and the method that makes it happen.
    FAULTS = {"link": link_fault, "skew": skew_fault, "kill": departure_fault, "leave": departure_fault,
              "unplug": unplug_fault, "avahi": avahi_fault, "reload": reload_fault}

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
                self.notes.append(f"{fault_name(f)} began {due - self.t_start - f['at']:.1f} s "
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
