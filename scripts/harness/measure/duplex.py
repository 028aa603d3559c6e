"""Full-duplex calls through the audio lab: both peers talk at once, then both are silent;
the CPU each peer uses, its peak memory, where its CPU goes by library, and the bytes on
the wire, talking and silent."""
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

from harness.lab.anchors import (GST_CAPS, GST_DEVICE, GST_JITTER, GST_OPUSDEC, GST_OPUSENC, TRX_BUFFER_MS, TRX_FRAME,
                                 TRX_JITTER_MS, TRX_KBPS, trx_tools)
from harness.lab.processes import stop_all

from .netcount import CountingRelay


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
    CPU seconds per second of each peer over the talking part and over the silent part from
    1 s after the speech (from /proc, so start-up is left out), each process's peak RSS, and
    the bytes on the wire per stream, talking and silent. A peer is one intercom process, or trx's tx and rx, or GStreamer's two pipelines."""
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
        # The silent part from 1 s after the speech ends, as the bytes are counted.
        time.sleep(1.0)
        t_quiet = time.monotonic()
        cpu_quiet = {p.pid: cpu_now(p.pid) for p in procs}
        time.sleep(max(0.0, silent_seconds - 1.0))
        t2 = time.monotonic()
        cpu2 = {p.pid: cpu_now(p.pid) for p in procs}
    finally:
        if profile is not None and profile.popen.poll() is None:
            profile.popen.kill()
        if impl == "ours":
            for p in procs:
                p.wait(timeout=duration + 8)
        else:
            stop_all(procs)
        relay.stop()
    if impl == "ours" and any(p.popen.returncode != 0 for p in procs):
        raise RuntimeError(f"{tag}: intercom exited {[p.popen.returncode for p in procs]}; see {workdir}/{tag}-*.log")
    out = dict(talk_seconds=t1 - t0, silent_seconds=t2 - t1, cpu_by_library_a=cpu_by_library)
    for name, ps in peers.items():
        out[name] = dict(cpu=sum(cpu1[p.pid] - cpu0[p.pid] for p in ps) / (t1 - t0),
                         cpu_silent=sum(cpu2[p.pid] - cpu_quiet[p.pid] for p in ps) / (t2 - t_quiet),
                         cpu_whole_run=sum(p.cpu_seconds for p in ps) / duration,
                         rss=[p.max_rss_mb for p in ps], mappings=[p.mappings_kb for p in ps])
    f = relay.flows[0]
    out["talking"] = relay.rate(f["a_to_b"], t0 + 0.5, t1 - 0.3)
    out["silent"] = relay.rate(f["a_to_b"], t1 + 1.0, t2)
    return out
