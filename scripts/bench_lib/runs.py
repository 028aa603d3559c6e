"""The calls the benchmark makes: ours (two intercom processes) and the GStreamer anchor,
each through `intercom relay` on loopback UDP, one call at a time."""
import json
import os
import re
import signal
import resource
import subprocess
import threading
import time
from pathlib import Path

import numpy as np

from . import signals
from .signals import RATE

GST_CAPS = "application/x-rtp,media=(string)audio,clock-rate=(int)48000,encoding-name=(string)OPUS,payload=(int)96"
GST_OPUSENC = "opusenc bitrate=32000 frame-size=20 inband-fec=true packet-loss-percentage=10"
GST_JITTER = "rtpjitterbuffer latency=60 do-lost=true"
GST_OPUSDEC = "opusdec plc=true use-inband-fec=true"


def gst_sender_args(port):
    return ["gst-launch-1.0", "-q", "fdsrc", "fd=0", "!", "rawaudioparse", "use-sink-caps=false", "format=pcm",
            "pcm-format=s16le", "sample-rate=48000", "num-channels=1", "!", "audioconvert", "!",
            *GST_OPUSENC.split(), "!", "rtpopuspay", "pt=96", "!", "udpsink", "host=127.0.0.1", f"port={port}",
            "sync=false"]


def gst_receiver_args(port):
    return ["gst-launch-1.0", "-q", "udpsrc", f"port={port}", f"caps={GST_CAPS}", "!", *GST_JITTER.split(), "!",
            "rtpopusdepay", "!", *GST_OPUSDEC.split(), "!", "audioconvert", "!", "audioresample", "!",
            "audio/x-raw,format=S16LE,rate=48000,channels=1", "!", "fdsink", "fd=1", "sync=false"]


def resident_by_mapping(pid):
    """Resident kB of a running process by what is mapped: each file's path, "[executable]" for
    the program's own file (whatever it is called), or "[anonymous]" for memory of its own (heap,
    stacks, libraries' writable data). {} once it is gone."""
    out, name = {}, None
    try:
        executable = os.readlink(f"/proc/{pid}/exe")
        with open(f"/proc/{pid}/smaps") as fh:
            for line in fh:
                head = line.split(maxsplit=5)
                if head and "-" in head[0] and len(head) >= 5 and not head[0].endswith(":"):
                    name = head[5].strip() if len(head) == 6 and head[5].strip().startswith("/") else "[anonymous]"
                    name = "[executable]" if name == executable else name
                elif head and head[0] == "Rss:" and name:
                    out[name] = out.get(name, 0) + int(head[1])
    except (OSError, ValueError):
        return {}
    return out


class Proc:
    """A child process started and waited for by its PID; its rusage is kept."""

    def __init__(self, args, log, **kw):
        self.args = args
        self.log = open(log, "wb")
        kw.setdefault("stdout", self.log)
        self.popen = subprocess.Popen(args, stderr=self.log, **kw)
        self.pid = self.popen.pid
        self.started = time.monotonic()
        self.rusage = None
        self.status = None
        self.wall = None
        # Peak RSS is VmHWM, read from /proc while the process runs: rusage's ru_maxrss is
        # useless here, since exec keeps the high-water mark of the forked Python parent.
        self.vm_hwm_kb = 0
        # What was resident, mapping by mapping, near the peak: taken again whenever the peak
        # has grown by 512 kB since the last one, at most once a second.
        self.mappings_kb = {}
        self._watch = threading.Thread(target=self._watch_memory, daemon=True)
        self._watch.start()

    def _watch_memory(self):
        path = f"/proc/{self.pid}/status"
        mapped_at_kb, mapped_time = 0, 0.0
        while self.status is None:
            try:
                with open(path) as fh:
                    for line in fh:
                        if line.startswith("VmHWM:"):
                            self.vm_hwm_kb = max(self.vm_hwm_kb, int(line.split()[1]))
                            break
            except (OSError, ValueError):
                return
            if self.vm_hwm_kb >= mapped_at_kb + 512 and time.monotonic() >= mapped_time + 1.0:
                mappings = resident_by_mapping(self.pid)
                if mappings:
                    self.mappings_kb, mapped_at_kb, mapped_time = mappings, self.vm_hwm_kb, time.monotonic()
            time.sleep(0.05)

    def poll(self):
        """The exit code if the process has ended (reaping it, rusage kept), else None."""
        if self.status is not None:
            return self.popen.returncode
        try:
            pid, status, ru = os.wait4(self.pid, os.WNOHANG)
        except ChildProcessError:
            # Reaped elsewhere (subprocess's own poll): its exit code is all there is.
            self.status = self.popen.returncode if self.popen.returncode is not None else -1
            self.wall = time.monotonic() - self.started
            self.log.close()
            return self.popen.returncode
        if pid != self.pid:
            return None
        self.status, self.rusage = status, ru
        self.wall = time.monotonic() - self.started
        self.popen.returncode = os.waitstatus_to_exitcode(status)
        self.log.close()
        return self.popen.returncode

    def wait(self, timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            code = self.poll()
            if self.status is not None:
                return code
            if deadline is not None and time.monotonic() > deadline:
                self.stop()
                deadline = None
            time.sleep(0.02)

    def interrupt(self):
        self._signal(signal.SIGINT)

    def stop(self):
        self._signal(signal.SIGKILL)

    def _signal(self, number):
        if self.status is None:
            try:
                os.kill(self.pid, number)
            except ProcessLookupError:
                pass

    @property
    def cpu_seconds(self):
        """NaN for a process reaped by someone else: its rusage is gone with it."""
        if self.rusage is None:
            return float("nan")
        return self.rusage.ru_utime + self.rusage.ru_stime

    @property
    def max_rss_mb(self):
        return self.vm_hwm_kb / 1024.0


class Ports:
    """Fresh loopback ports for every call, so no stray packet of one call reaches the next.
    Each port handed out is free on 127.0.0.1 and so is the one after it (RTP tools such as
    trx's take port + 1 for RTCP); ports in use by anything else are skipped."""

    def __init__(self, base):
        self.next = base

    @staticmethod
    def _free(port):
        import socket
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            try:
                s.bind(("127.0.0.1", port))
                return True
            except OSError:
                return False

    def take(self, n):
        out = []
        while len(out) < n:
            p = self.next
            self.next += 2
            if self._free(p) and self._free(p + 1):
                out.append(p)
        return out


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


def run_ours(binary, workdir, tag, input_path, input_seconds, profile, frame_ms, ports, extra=(),
             b_input=None, tail=2.0):
    """Peer A speaks input_path through the relay to peer B, which writes what it hears.
    Returns both peers' statistics, their rusage and B's output with its wall-clock timeline."""
    workdir = Path(workdir)
    pa, pb, ra, rb = ports.take(4)
    out = workdir / f"{tag}-out.wav"
    a_json, b_json = workdir / f"{tag}-a.json", workdir / f"{tag}-b.json"
    da = input_seconds + 0.3
    db = da + tail
    # No frame length: the default (from a file, 10 ms frames).
    common = ["--no-discovery", *(["--frame-ms", str(frame_ms)] if frame_ms else []), *extra]
    b_args = [binary, *common, "--port", str(pb), "--output-file", str(out), "--duration", f"{db:.2f}",
              "--stats-json", str(b_json)]
    if b_input:
        b_args += ["--input-file", str(b_input)]
    b = Proc(b_args, workdir / f"{tag}-b.log")
    time.sleep(0.5)
    relay = start_relay(binary, ra, rb, pb, profile, da + tail - 0.3, workdir / f"{tag}-relay.log")
    time.sleep(0.3)
    a = Proc([binary, *common, "--port", str(pa), "--peer", f"127.0.0.1:{ra}", "--input-file", str(input_path),
              "--duration", f"{da:.2f}", "--stats-json", str(a_json)], workdir / f"{tag}-a.log")
    a.wait(timeout=da + 30)
    b.wait(timeout=db + 30)
    relay.wait(timeout=db + 30)
    if a.popen.returncode != 0 or b.popen.returncode != 0:
        raise RuntimeError(f"{tag}: intercom exited {a.popen.returncode}/{b.popen.returncode}; see {workdir}/{tag}-*.log")
    sa, sb = json.loads(a_json.read_text()), json.loads(b_json.read_text())
    output, rate = signals.read_wav(out)
    out_times = sb["output_start_ns"] + np.arange(len(output)) * (1e9 / RATE)
    return dict(a=sa, b=sb, proc_a=a, proc_b=b, relay=relay_counters(workdir / f"{tag}-relay.log"),
                output=output, out_times=out_times, in_start_ns=float(sa["input_start_ns"]), output_path=out,
                audio_seconds=input_seconds)


def run_gst(binary, workdir, tag, x, profile, ports, preroll=1.0, tail=1.5):
    """The GStreamer anchor. The sender reads raw PCM from our pipe, written one 10 ms chunk
    at a time when a microphone would hand it over; the receiver writes decoded PCM to our
    pipe as soon as it has it (fdsink sync=false, like pulsesink sync=false); we time-stamp
    every read and model a sound card that plays the chunks back to back."""
    workdir = Path(workdir)
    pb, ra, rb = ports.take(3)
    rx = Proc(gst_receiver_args(pb), workdir / f"{tag}-rx.log", stdout=subprocess.PIPE)
    reads = []  # (realtime ns after read returned, bytes so far before this read, bytes read)
    chunks = []

    def reader():
        fd = rx.popen.stdout.fileno()
        total = 0
        while True:
            data = os.read(fd, 65536)
            now = time.time_ns()
            if not data:
                break
            reads.append((now, total, len(data)))
            chunks.append(data)
            total += len(data)

    rt = threading.Thread(target=reader, daemon=True)
    rt.start()
    time.sleep(1.0)
    seconds = preroll + len(x) / RATE
    relay = start_relay(binary, ra, rb, pb, profile, seconds + tail + 1.0, workdir / f"{tag}-relay.log")
    time.sleep(0.3)
    tx = Proc(gst_sender_args(ra), workdir / f"{tag}-tx.log", stdin=subprocess.PIPE)
    pcm = signals.pcm_bytes(np.concatenate([np.zeros(int(preroll * RATE)), x]))
    chunk = 480 * 2
    lateness = []
    rt0, mono0 = time.time_ns(), time.monotonic_ns()
    for k in range(0, len(pcm) // chunk):
        due = mono0 + (k + 1) * 10_000_000
        wait = due - time.monotonic_ns()
        if wait > 0:
            time.sleep(wait / 1e9)
        lateness.append((time.monotonic_ns() - due) / 1e6)
        tx.popen.stdin.write(pcm[k * chunk:(k + 1) * chunk])
        tx.popen.stdin.flush()
    tx.popen.stdin.close()
    tx.wait(timeout=30)
    time.sleep(tail)
    rx.interrupt()
    rx.wait(timeout=10)
    rt.join(timeout=5)
    relay.wait(timeout=30)
    data = b"".join(chunks)
    output = np.frombuffer(data[:len(data) // 2 * 2], dtype="<i2").astype(np.float64) / 32768.0
    signals.write_wav(workdir / f"{tag}-out.wav", output)
    # A sound card fed with sync=false plays each chunk when it comes, or when the one
    # before it has finished, whichever is later.
    out_times = np.zeros(len(output))
    play_end = 0.0
    for now, before, n in reads:
        s0, s1 = before // 2, min(len(output), (before + n) // 2)
        start = max(float(now), play_end)
        out_times[s0:s1] = start + np.arange(s1 - s0) * (1e9 / RATE)
        play_end = start + (s1 - s0) * 1e9 / RATE
    return dict(proc_tx=tx, proc_rx=rx, relay=relay_counters(workdir / f"{tag}-relay.log"), output=output,
                out_times=out_times, in_start_ns=float(rt0) + preroll * 1e9, lateness_ms=np.array(lateness),
                reads=len(reads), audio_seconds=seconds)


def codec_ceiling(workdir, x, frame_ms, fec):
    """Opus alone, no network: x through GStreamer's opusenc (32 kb/s, VOIP audio type as
    intercom uses) and opusdec. Returns the decoded samples, aligned to x."""
    workdir = Path(workdir)
    src = workdir / "ceiling-in.wav"
    dst = workdir / f"ceiling-{frame_ms}-{'fec' if fec else 'nofec'}.wav"
    signals.write_wav(src, x)
    enc = ["opusenc", "bitrate=32000", f"frame-size={frame_ms}", "audio-type=voice"]
    if fec:
        enc += ["inband-fec=true", "packet-loss-percentage=10"]
    subprocess.run(["gst-launch-1.0", "-q", "filesrc", f"location={src}", "!", "wavparse", "!", "audioconvert", "!",
                    *enc, "!", "opusdec", "!", "audioconvert", "!", "audio/x-raw,format=S16LE,rate=48000,channels=1",
                    "!", "wavenc", "!", "filesink", f"location={dst}"], check=True, capture_output=True)
    y, _ = signals.read_wav(dst)
    from scipy import signal as S
    c = S.fftconvolve(y[:len(x) + 4800], x[::-1], mode="valid")
    k = int(np.argmax(c))
    return y[k:k + len(x)]


# The two encoders of intercom's adaptive codec, at its default bitrate (OpusEncoderConfiguration).
COMPLEXITY_ENCODERS = {
    "robust": ["bitrate=96000", "frame-size=10", "audio-type=voice", "inband-fec=true", "packet-loss-percentage=2"],
    "low-delay": ["bitrate=96000", "frame-size=5", "audio-type=restricted-lowdelay"],
}


BITRATES = (24_000, 32_000, 48_000, 64_000, 96_000)


def opus_scores(workdir, utterances, settings, tag):
    """(PESQ-WB, STOI) of each utterance through GStreamer's opusenc with `settings` and
    opusdec, the decoded speech found again by cross-correlation."""
    from scipy import signal as S
    workdir = Path(workdir)
    scores = []
    for index, (_, utterance) in enumerate(utterances):
        one = workdir / f"{tag}-{index}.wav"
        out = workdir / f"{tag}-{index}-out.wav"
        signals.write_wav(one, utterance)
        subprocess.run(["gst-launch-1.0", "-q", "filesrc", f"location={one}", "!", "wavparse", "!", "audioconvert", "!",
                        "opusenc", *settings, "!", "opusdec", "!", "audioconvert", "!",
                        "audio/x-raw,format=S16LE,rate=48000,channels=1", "!", "wavenc", "!", "filesink",
                        f"location={out}"], check=True, capture_output=True)
        y, _ = signals.read_wav(out)
        c = S.fftconvolve(y[:len(utterance) + 4800], utterance[::-1], mode="valid")
        k = int(np.argmax(c))
        scores.append(signals.quality(utterance, y[k:k + len(utterance)]))
    return scores


def codec_bitrate(workdir, utterances, encoder, bitrate):
    """One of intercom's encoders (its settings but the bitrate, at complexity 8) through
    GStreamer's opusenc and opusdec at `bitrate`: mean PESQ-WB and STOI of the utterances."""
    settings = [f"bitrate={bitrate}" if s.startswith("bitrate=") else s for s in COMPLEXITY_ENCODERS[encoder]] + ["complexity=8"]
    scores = opus_scores(workdir, utterances, settings, f"bitrate-{encoder}-{bitrate}")
    return dict(encoder=encoder, bitrate=bitrate, pesq=float(np.nanmean([p for p, _ in scores])),
                stoi=float(np.nanmean([q for _, q in scores])))


def codec_complexity(workdir, utterances, encoder, complexity, repeat=6):
    """One of intercom's encoders through GStreamer's opusenc at `complexity`: PESQ-WB of the
    utterances through it and opusdec, and the encoder's CPU per second of audio (the CPU of
    encoding the utterances `repeat` times over, less that of the same pipeline without it)."""
    workdir = Path(workdir)
    src = workdir / "complexity-in.wav"
    long_src = workdir / "complexity-long.wav"
    speech = np.concatenate([u for _, u in utterances])
    signals.write_wav(src, speech)
    signals.write_wav(long_src, np.tile(speech, repeat))
    settings = [*COMPLEXITY_ENCODERS[encoder], f"complexity={complexity}"]

    def cpu_seconds(*elements):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(["gst-launch-1.0", "-q", "filesrc", f"location={long_src}", "!", "wavparse", "!", "audioconvert",
                        "!", *elements, "fakesink"], check=True, capture_output=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)

    encoding = cpu_seconds("opusenc", *settings, "!") - cpu_seconds()
    scores = [pesq for pesq, _ in opus_scores(workdir, utterances, settings, f"complexity-{encoder}-{complexity}")]
    seconds = repeat * len(speech) / RATE
    return dict(encoder=encoder, complexity=complexity, pesq=float(np.nanmean(scores)),
                cpu_per_second=max(0.0, encoding) / seconds)
