"""Calls through the audio lab, device to device: A's microphone to B's speaker through the
relay, for intercom and each anchor, and the lab's own device path without any network.

A's microphone and B's speaker are channels of the lab's bus (see harness.lab.audio): one
recording of the bus holds what went in and what came out on one clock."""
import json
import subprocess
import time
from pathlib import Path

import numpy as np

from harness.lab import audio
from harness.lab.anchors import (GST_CAPS, GST_DEVICE, GST_JITTER, GST_OPUSDEC, GST_OPUSENC, TRX_BUFFER_MS, TRX_FRAME,
                                 TRX_JITTER_MS, TRX_KBPS, trx_tools)
from harness.lab.processes import stop_all
from harness.lab.relay import relay_counters, start_relay

from .signals import RATE


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


def run_call(lab, impl, binary, workdir, tag, program_path, program, profile, ports, settle=1.5, tail=1.5,
             ours_extra=()):
    """One call from A's microphone to B's speaker through the relay; impl is "ours", "trx"
    or "gstreamer". Returns the same shape as file_calls.run_ours: B's output with a timeline and
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
            stop_all(procs)
        if relay is not None:
            relay.wait(timeout=5)
        rec.interrupt()
        rec.wait(timeout=5)
    if impl == "ours":
        if res["proc_a"].popen.returncode != 0 or res["proc_b"].popen.returncode != 0:
            raise RuntimeError(f"{tag}: intercom exited {res['proc_a'].popen.returncode}/{res['proc_b'].popen.returncode}; "
                               f"see {workdir}/{tag}-*.log")
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
    fmt = ["-f", "S16_LE", "-r", "48000", "-c", "1", "-t", "raw", f"--buffer-time={audio.ALSA_BUFFER_MS * 1000}",
           f"--period-time={audio.ALSA_PERIOD_MS * 1000}"]
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
        stop_all(procs)
        rec.interrupt()
        rec.wait(timeout=5)
    mic, spk = read_bus(bus_path)
    start = locate_program(mic, program)
    bus_path.unlink(missing_ok=True)
    return dict(output=spk, out_times=np.arange(len(spk)) * (1e9 / RATE), in_start_ns=start * 1e9 / RATE,
                audio_seconds=len(program) / RATE, mic=mic, mic_offset=start)
