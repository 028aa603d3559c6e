"""One talker heard by several devices: every device a talker reaches is sent a copy of its
own, so a household's Wi-Fi carries each talker's stream once per listener. The talker reads
the benchmark's program from a file to 1, 2 and 5 listeners on loopback (no relay: the wire is
what is measured), each listener writing what it hears; what the talker sent (its statistics)
gives the bitrate in force and the bytes on the wire, and the first listener's recording is
analysed as any file-to-file call's."""
import json
import time
from pathlib import Path

import numpy as np

from harness.lab.processes import Proc

from . import signals
from .signals import RATE

LISTENER_COUNTS = (1, 2, 5)
# IPv4 and UDP headers, per datagram.
HEADER_BYTES = 28


def run(binary, workdir, count, program_path, program_seconds, ports, tail=2.0):
    """The talker to `count` listeners. Returns the talker's and the first listener's
    statistics, their processes and the first listener's recording, shaped as
    `file_calls.run_ours` returns a call (for `analyse`)."""
    workdir = Path(workdir)
    tag = f"listeners-{count}"
    talker_port, *listener_ports = ports.take(count + 1)
    talker_seconds = program_seconds + 0.3
    listener_seconds = talker_seconds + tail
    listeners = []
    for index, port in enumerate(listener_ports):
        out, stats = workdir / f"{tag}-{index}-out.wav", workdir / f"{tag}-{index}.json"
        proc = Proc([binary, "--no-discovery", "--port", str(port), "--output-file", str(out),
                     "--duration", f"{listener_seconds:.2f}", "--stats-json", str(stats)], workdir / f"{tag}-{index}.log")
        listeners.append((proc, out, stats))
    time.sleep(0.5)
    talker_stats = workdir / f"{tag}-talker.json"
    peers = [argument for port in listener_ports for argument in ("--peer", f"127.0.0.1:{port}")]
    talker = Proc([binary, "--no-discovery", "--port", str(talker_port), *peers, "--input-file", str(program_path),
                   "--duration", f"{talker_seconds:.2f}", "--stats-json", str(talker_stats)], workdir / f"{tag}-talker.log")
    talker.wait(timeout=talker_seconds + 30)
    for proc, _, _ in listeners:
        proc.wait(timeout=listener_seconds + 30)
    failed = [p.popen.returncode for p in [talker] + [proc for proc, _, _ in listeners] if p.popen.returncode != 0]
    if failed:
        raise RuntimeError(f"{tag}: intercom exited {failed}; see {workdir}/{tag}-*.log")
    sent = json.loads(talker_stats.read_text())
    first, out, stats = listeners[0]
    heard = json.loads(stats.read_text())
    output, _ = signals.read_wav(out)
    return dict(a=sent, b=heard, proc_a=talker, proc_b=first, output=output,
                out_times=heard["output_start_ns"] + np.arange(len(output)) * (1e9 / RATE),
                in_start_ns=float(sent["input_start_ns"]), output_path=out, audio_seconds=program_seconds,
                listeners=count)


def wire(call):
    """What the talker's statistics say it sent: per stream and for all copies, kb/s with the
    IPv4 and UDP headers, over the program's length."""
    sent, count, seconds = call["a"], call["listeners"], call["audio_seconds"]
    total_kbps = (sent["bytes_sent"] + HEADER_BYTES * sent["datagrams_sent"]) * 8 / seconds / 1000
    return dict(listeners=count, bitrate=sent.get("bitrate"), codec_mode=sent.get("codec_mode"),
                datagrams_per_second=sent["datagrams_sent"] / count / seconds,
                stream_kbps=total_kbps / count, all_kbps=total_kbps)
