"""Calls through the audio lab (scripts/lab/audio-lab): PulseAudio null sinks seen by ALSA
programs as sound devices, paced in real time.

A's microphone (mic_a) and B's speaker (spk_b) are one-channel remapped sinks of one
two-channel null sink, the bus (`audio-lab start --bus mic_a,spk_b`). One recording of the
bus's monitor holds what reaches A's microphone (channel 0) and what B's speaker plays
(channel 1) sample-aligned, on the sink's one clock: the buffering of the tool that injects
the sound and of the tool that records it cancels out of the delay."""
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import numpy as np

from . import signals
from .runs import Proc, relay_counters, start_relay
from .signals import RATE

ROOT = Path(__file__).resolve().parent.parent.parent
SCRIPT = ROOT / "scripts/lab/audio-lab"
DEVICES = ("mic_a", "spk_a", "mic_b", "spk_b")
BUS = ("mic_a", "spk_b")

# The device settings. intercom: its defaults (its sound-card buffer, read from `intercom talk
# --help` when the benchmark starts; AEC, denoise and AGC on with live devices). The device
# path alone is copied with the same buffers.
ALSA_BUFFER_MS = 20
ALSA_PERIOD_MS = 10
# trx: what its own documentation suggests for a LAN (20 ms frames, 16 ms ALSA buffer, 16 ms
# jitter buffer) would underrun through PulseAudio at once; the smallest settings that play
# without dropouts in this lab, found by trying, are used instead (see TRX_*).
TRX_BUFFER_MS = 16
TRX_JITTER_MS = 16
TRX_FRAME = 960  # 20 ms at 48 kHz
TRX_KBPS = 32
# GStreamer: 10 ms device periods, 40 ms device buffers, the same 60 ms jitter buffer as
# file to file, the sink not clocked (sync=false).
GST_DEVICE = "buffer-time=40000 latency-time=10000"


def trx_tools():
    """The trx transmitter and receiver: Debian installs them as trx-tx and trx-rx."""
    for tx, rx in (("trx-tx", "trx-rx"), ("tx", "rx")):
        if shutil.which(tx) and shutil.which(rx):
            return shutil.which(tx), shutil.which(rx)
    return None


class AudioLab:
    """One audio lab for the whole benchmark, stopped by `stop` (and by the lab itself if
    this process dies first: `--owner`)."""

    def __init__(self, workdir, devices=DEVICES, bus=BUS, prefix="bench"):
        self.dir = Path(workdir) / "audio-lab"
        self.prefix = prefix
        subprocess.run([str(SCRIPT), "start", "--dir", str(self.dir), "--prefix", self.prefix,
                        "--devices", ",".join(devices), "--bus", ",".join(bus), "--owner", str(os.getpid())],
                       check=True, capture_output=True, text=True)
        out = subprocess.run([str(SCRIPT), "env", "--dir", str(self.dir)], check=True, capture_output=True,
                             text=True).stdout
        self.env = dict(os.environ)
        for line in out.splitlines():
            name, _, value = line.removeprefix("export ").partition("=")
            self.env[name] = value.strip("'")

    def pcm(self, device):
        return f"{self.prefix}_{device}"

    def proc(self, args, log, **kw):
        return Proc(args, log, env=self.env, **kw)

    def record_bus(self, path, log):
        return self.proc(["parec", "--latency-msec=20", "-d", "bus.monitor", "--raw", "--rate=48000", "--channels=2",
                          "--channel-map=aux0,aux1", "--format=s16le", str(path)], log)

    def inject(self, wav, device, log):
        return self.proc(["paplay", "--latency-msec=20", "-d", device, str(wav)], log)

    def unplug(self, device):
        subprocess.run([str(SCRIPT), "unplug", device, "--dir", str(self.dir)], check=True, capture_output=True)

    def plug(self, device):
        subprocess.run([str(SCRIPT), "plug", device, "--dir", str(self.dir)], check=True, capture_output=True)

    def stop(self):
        subprocess.run([str(SCRIPT), "stop", "--dir", str(self.dir)], capture_output=True)


def read_bus(path):
    d = np.fromfile(path, dtype="<i2")
    d = d[: len(d) // 2 * 2].reshape(-1, 2).astype(np.float64) / 32768.0
    return d[:, 0], d[:, 1]


def locate_program(mic, program):
    """Where the injected program starts in the microphone channel (samples), from the
    cross-correlation of the whole program; and the worst shift of any click from there
    (a glitch of the injection would show as one)."""
    from scipy import signal as S
    n = min(len(mic), len(program) + 10 * RATE)
    c = S.fftconvolve(mic[:n], program[::-1], mode="valid")
    return int(np.argmax(c))


def _stop_all(procs, grace=3.0):
    for p in procs:
        p.interrupt()
    deadline = time.monotonic() + grace
    for p in procs:
        p.wait(timeout=max(0.1, deadline - time.monotonic()))


def run_call(lab, impl, binary, workdir, tag, program_path, program, profile, ports, settle=1.5, tail=1.5,
             ours_extra=()):
    """One call from A's microphone to B's speaker through the relay; impl is "ours", "trx"
    or "gstreamer". Returns the same shape as runs.run_ours: B's output with a timeline and
    the time the input started, here both in samples of the bus's clock (as ns)."""
    workdir = Path(workdir)
    pa, pb, ra, rb = ports.take(4)
    seconds = len(program) / RATE
    duration = settle + seconds + tail
    bus_path = workdir / f"{tag}-bus.raw"
    rec = lab.record_bus(bus_path, workdir / f"{tag}-rec.log")
    procs, res, relay = [], {}, None
    try:
        time.sleep(0.3)
        if impl == "ours":
            a_json, b_json = workdir / f"{tag}-a.json", workdir / f"{tag}-b.json"
            common = ["--no-discovery", *ours_extra]
            b = lab.proc([binary, *common, "--port", str(pb), "--capture", lab.pcm("mic_b"), "--playback", lab.pcm("spk_b"),
                          "--duration", f"{duration + 0.8:.2f}", "--stats-json", str(b_json)], workdir / f"{tag}-b.log")
            procs.append(b)
            time.sleep(0.3)
            relay = start_relay(binary, ra, rb, pb, profile, duration + 1.0, workdir / f"{tag}-relay.log")
            time.sleep(0.2)
            a = lab.proc([binary, *common, "--port", str(pa), "--peer", f"127.0.0.1:{ra}", "--capture", lab.pcm("mic_a"),
                          "--playback", lab.pcm("spk_a"), "--duration", f"{duration:.2f}", "--stats-json", str(a_json)],
                         workdir / f"{tag}-a.log")
            procs.append(a)
            res.update(proc_a=a, proc_b=b)
        elif impl == "trx":
            tx_bin, rx_bin = trx_tools()
            rx = lab.proc([rx_bin, "-d", lab.pcm("spk_b"), "-h", "127.0.0.1", "-p", str(pb), "-c", "1",
                           "-m", str(TRX_BUFFER_MS), "-j", str(TRX_JITTER_MS)], workdir / f"{tag}-rx.log")
            procs.append(rx)
            time.sleep(0.3)
            relay = start_relay(binary, ra, rb, pb, profile, duration + 1.0, workdir / f"{tag}-relay.log")
            time.sleep(0.2)
            tx = lab.proc([tx_bin, "-d", lab.pcm("mic_a"), "-h", "127.0.0.1", "-p", str(ra), "-c", "1",
                           "-m", str(TRX_BUFFER_MS), "-f", str(TRX_FRAME), "-b", str(TRX_KBPS)], workdir / f"{tag}-tx.log")
            procs.append(tx)
            res.update(proc_tx=tx, proc_rx=rx)
        elif impl == "gstreamer":
            from .runs import GST_CAPS, GST_JITTER, GST_OPUSDEC, GST_OPUSENC
            rx = lab.proc(["gst-launch-1.0", "-q", "udpsrc", f"port={pb}", f"caps={GST_CAPS}", "!", *GST_JITTER.split(), "!",
                           "rtpopusdepay", "!", *GST_OPUSDEC.split(), "!", "audioconvert", "!", "audioresample", "!",
                           "pulsesink", "device=spk_b", *GST_DEVICE.split(), "sync=false"], workdir / f"{tag}-rx.log")
            procs.append(rx)
            time.sleep(0.3)
            relay = start_relay(binary, ra, rb, pb, profile, duration + 1.0, workdir / f"{tag}-relay.log")
            time.sleep(0.2)
            tx = lab.proc(["gst-launch-1.0", "-q", "pulsesrc", "device=mic_a.monitor", *GST_DEVICE.split(), "!",
                           "audio/x-raw,rate=48000,channels=1", "!", "audioconvert", "!", *GST_OPUSENC.split(), "!",
                           "rtpopuspay", "pt=96", "!", "udpsink", "host=127.0.0.1", f"port={ra}"], workdir / f"{tag}-tx.log")
            procs.append(tx)
            res.update(proc_tx=tx, proc_rx=rx)
        else:
            raise ValueError(impl)
        time.sleep(settle)
        for p in procs + [relay]:
            if p.status is None and p.poll() is not None:
                raise RuntimeError(f"{tag}: {p.args[0]} ended early; see {workdir}/{tag}-*.log")
        inj = lab.inject(program_path, "mic_a", workdir / f"{tag}-inject.log")
        inj.wait(timeout=seconds + 10)
        time.sleep(tail)
    finally:
        if impl == "ours":
            # Both end by themselves (--duration); the relay too.
            for p in procs:
                p.wait(timeout=8)
        else:
            _stop_all(procs)
        if relay is not None:
            relay.wait(timeout=5)
        rec.interrupt()
        rec.wait(timeout=5)
    if impl == "ours":
        if res["proc_a"].popen.returncode != 0 or res["proc_b"].popen.returncode != 0:
            raise RuntimeError(f"{tag}: intercom exited {res['proc_a'].popen.returncode}/{res['proc_b'].popen.returncode}; "
                               f"see {workdir}/{tag}-*.log")
        import json
        res["a"] = json.loads((workdir / f"{tag}-a.json").read_text())
        res["b"] = json.loads((workdir / f"{tag}-b.json").read_text())
    mic, spk = read_bus(bus_path)
    start = locate_program(mic, program)
    res.update(output=spk, out_times=np.arange(len(spk)) * (1e9 / RATE), in_start_ns=start * 1e9 / RATE,
               relay=relay_counters(workdir / f"{tag}-relay.log"), audio_seconds=seconds, mic=mic,
               mic_offset=start)
    bus_path.unlink(missing_ok=True)  # big; the logs stay
    return res


def run_device_path(lab, workdir, tag, program_path, program, settle=1.0, tail=1.0):
    """The lab's own overhead: A's microphone device copied to B's speaker device by
    `arecord | aplay` (10 ms periods, 40 ms buffers, as intercom's default), no network or codec."""
    workdir = Path(workdir)
    bus_path = workdir / f"{tag}-bus.raw"
    rec = lab.record_bus(bus_path, workdir / f"{tag}-rec.log")
    fmt = ["-f", "S16_LE", "-r", "48000", "-c", "1", "-t", "raw", f"--buffer-time={ALSA_BUFFER_MS * 1000}",
           f"--period-time={ALSA_PERIOD_MS * 1000}"]
    procs = []
    try:
        time.sleep(0.3)
        ar = lab.proc(["arecord", "-q", "-D", lab.pcm("mic_a"), *fmt], workdir / f"{tag}-arecord.log",
                      stdout=subprocess.PIPE)
        procs.append(ar)
        ap = lab.proc(["aplay", "-q", "-D", lab.pcm("spk_b"), *fmt], workdir / f"{tag}-aplay.log", stdin=ar.popen.stdout)
        procs.append(ap)
        ar.popen.stdout.close()
        time.sleep(settle)
        inj = lab.inject(program_path, "mic_a", workdir / f"{tag}-inject.log")
        inj.wait(timeout=len(program) / RATE + 10)
        time.sleep(tail)
    finally:
        _stop_all(procs)
        rec.interrupt()
        rec.wait(timeout=5)
    mic, spk = read_bus(bus_path)
    start = locate_program(mic, program)
    bus_path.unlink(missing_ok=True)
    return dict(output=spk, out_times=np.arange(len(spk)) * (1e9 / RATE), in_start_ns=start * 1e9 / RATE,
                audio_seconds=len(program) / RATE, mic=mic, mic_offset=start)


def cpu_now(pid):
    """CPU seconds (user + system) a running process has used so far, from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


class CPUProfile:
    """Where processes spend their CPU, by library: perf sampling the CPU clock (it needs no
    hardware counters) while they run, reported as each library's share of the samples."""

    def __init__(self, popen, path):
        self.popen, self.path = popen, path

    @classmethod
    def start(cls, pids, path):
        if shutil.which("perf") is None:
            return None
        popen = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-F", "999", "-o", str(path),
                                  "-p", ",".join(str(pid) for pid in pids)],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return cls(popen, path)

    def stop(self):
        """[(library, percent of samples)], largest first; None when perf recorded nothing."""
        self.popen.send_signal(signal.SIGINT)
        try:
            self.popen.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            return None
        return self.shares(self.path)

    @staticmethod
    def shares(path):
        report = subprocess.run(["perf", "report", "-i", str(path), "--no-children", "--sort", "dso", "--stdio",
                                 "-g", "none"], capture_output=True, text=True)
        rows = []
        for line in report.stdout.splitlines():
            match = re.match(r"\s*([0-9.]+)%\s+(\S+)", line)
            if match and not line.lstrip().startswith("#"):
                rows.append((match.group(2), float(match.group(1))))
        return rows or None


def run_duplex(lab, impl, binary, workdir, tag, talk_path, talk_seconds, silent_seconds, ports, ours_extra=(),
               settle=1.5):
    """Both peers talk at once for talk_seconds (speech injected into both microphones), then
    both are silent for silent_seconds; the streams pass through a counting relay. Returns
    CPU seconds per second of each peer over the talking part (from /proc, so start-up is
    left out), each process's peak RSS, and the bytes on the wire per stream, talking and
    silent. A peer is one intercom process, or trx's tx and rx, or GStreamer's two pipelines."""
    from .netcount import CountingRelay
    workdir = Path(workdir)
    relay = CountingRelay()
    peers = {"A": [], "B": []}
    procs = []
    profile = None
    duration = settle + talk_seconds + silent_seconds + 1.5
    try:
        if impl == "ours":
            pa, pb, ra, rb = ports.take(4)
            relay.add(ra, rb, pb, "ab")
            relay.start()
            common = ["--no-discovery", *ours_extra]
            b = lab.proc([binary, *common, "--port", str(pb), "--capture", lab.pcm("mic_b"), "--playback", lab.pcm("spk_b"),
                          "--duration", f"{duration + 0.3:.2f}"], workdir / f"{tag}-b.log")
            a = lab.proc([binary, *common, "--port", str(pa), "--peer", f"127.0.0.1:{ra}", "--capture", lab.pcm("mic_a"),
                          "--playback", lab.pcm("spk_a"), "--duration", f"{duration:.2f}"], workdir / f"{tag}-a.log")
            peers = {"A": [a], "B": [b]}
        elif impl == "trx":
            tx_bin, rx_bin = trx_tools()
            p1, r1a, r1b, p2, r2a, r2b = ports.take(6)
            relay.add(r1a, r1b, p1, "ab")
            relay.add(r2a, r2b, p2, "ba")
            relay.start()
            rx_args = ["-h", "127.0.0.1", "-c", "1", "-m", str(TRX_BUFFER_MS), "-j", str(TRX_JITTER_MS)]
            tx_args = ["-h", "127.0.0.1", "-c", "1", "-m", str(TRX_BUFFER_MS), "-f", str(TRX_FRAME), "-b", str(TRX_KBPS)]
            rx_b = lab.proc([rx_bin, "-d", lab.pcm("spk_b"), "-p", str(p1), *rx_args], workdir / f"{tag}-rx-b.log")
            rx_a = lab.proc([rx_bin, "-d", lab.pcm("spk_a"), "-p", str(p2), *rx_args], workdir / f"{tag}-rx-a.log")
            tx_a = lab.proc([tx_bin, "-d", lab.pcm("mic_a"), "-p", str(r1a), *tx_args], workdir / f"{tag}-tx-a.log")
            tx_b = lab.proc([tx_bin, "-d", lab.pcm("mic_b"), "-p", str(r2a), *tx_args], workdir / f"{tag}-tx-b.log")
            peers = {"A": [tx_a, rx_a], "B": [tx_b, rx_b]}
        elif impl == "gstreamer":
            from .runs import GST_CAPS, GST_JITTER, GST_OPUSDEC, GST_OPUSENC
            p1, r1a, r1b, p2, r2a, r2b = ports.take(6)
            relay.add(r1a, r1b, p1, "ab")
            relay.add(r2a, r2b, p2, "ba")
            relay.start()

            def rx(port, sink, log):
                return lab.proc(["gst-launch-1.0", "-q", "udpsrc", f"port={port}", f"caps={GST_CAPS}", "!",
                                 *GST_JITTER.split(), "!", "rtpopusdepay", "!", *GST_OPUSDEC.split(), "!", "audioconvert",
                                 "!", "audioresample", "!", "pulsesink", f"device={sink}", *GST_DEVICE.split(),
                                 "sync=false"], log)

            def tx(source, port, log):
                return lab.proc(["gst-launch-1.0", "-q", "pulsesrc", f"device={source}.monitor", *GST_DEVICE.split(), "!",
                                 "audio/x-raw,rate=48000,channels=1", "!", "audioconvert", "!", *GST_OPUSENC.split(), "!",
                                 "rtpopuspay", "pt=96", "!", "udpsink", "host=127.0.0.1", f"port={port}"], log)

            rx_b, rx_a = rx(p1, "spk_b", workdir / f"{tag}-rx-b.log"), rx(p2, "spk_a", workdir / f"{tag}-rx-a.log")
            tx_a, tx_b = tx("mic_a", r1a, workdir / f"{tag}-tx-a.log"), tx("mic_b", r2a, workdir / f"{tag}-tx-b.log")
            peers = {"A": [tx_a, rx_a], "B": [tx_b, rx_b]}
        else:
            raise ValueError(impl)
        procs = peers["A"] + peers["B"]
        time.sleep(settle)
        for p in procs:
            if p.poll() is not None:
                raise RuntimeError(f"{tag}: {p.args[0]} ended early; see {workdir}/{tag}-*.log")
        inj = [lab.inject(talk_path, dev, workdir / f"{tag}-inject-{dev}.log") for dev in ("mic_a", "mic_b")]
        t0 = time.monotonic()
        cpu0 = {p.pid: cpu_now(p.pid) for p in procs}
        profile = CPUProfile.start([p.pid for p in peers["A"]], workdir / f"{tag}-a.perf")
        for i in inj:
            i.wait(timeout=talk_seconds + 10)
        t1 = time.monotonic()
        cpu1 = {p.pid: cpu_now(p.pid) for p in procs}
        cpu_by_library = profile.stop() if profile else None
        time.sleep(silent_seconds)
        t2 = time.monotonic()
    finally:
        if profile is not None and profile.popen.poll() is None:
            profile.popen.kill()
        if impl == "ours":
            for p in procs:
                p.wait(timeout=duration + 8)
        else:
            _stop_all(procs)
        relay.stop()
    if impl == "ours" and any(p.popen.returncode != 0 for p in procs):
        raise RuntimeError(f"{tag}: intercom exited {[p.popen.returncode for p in procs]}; see {workdir}/{tag}-*.log")
    out = dict(talk_seconds=t1 - t0, silent_seconds=t2 - t1, cpu_by_library_a=cpu_by_library)
    for name, ps in peers.items():
        out[name] = dict(cpu=sum(cpu1[p.pid] - cpu0[p.pid] for p in ps) / (t1 - t0),
                         cpu_whole_run=sum(p.cpu_seconds for p in ps) / duration,
                         rss=[p.max_rss_mb for p in ps], mappings=[p.mappings_kb for p in ps])
    f = relay.flows[0]
    out["talking"] = relay.rate(f["a_to_b"], t0 + 0.5, t1 - 0.3)
    out["silent"] = relay.rate(f["a_to_b"], t1 + 1.0, t2)
    return out
