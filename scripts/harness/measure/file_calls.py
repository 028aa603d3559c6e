"""File-to-file calls: ours (two intercom processes, A reading a WAV file as its microphone
and B writing what it plays to one) and the GStreamer anchor, each through `intercom relay`
on loopback UDP, one call at a time."""
import json
import os
import subprocess
import threading
import time
from pathlib import Path

import numpy as np

from harness.lab.anchors import gst_receiver_args, gst_sender_args
from harness.lab.processes import Proc
from harness.lab.relay import relay_counters, start_relay

from . import signals
from .signals import RATE


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
