"""Which of the packaged binary's functions a running peer executes, for the linker to place
them together (scripts/package links with `--symbol-ordering-file`).

Code pages are resident as they are touched, and the kernel maps them around a fault 64 kB
at a time: with the functions of a call scattered over 13 MB of text a peer kept 8-11 MB of
the executable resident. Placed together they fill about 2 MB. The list is made by running
the binary under valgrind's callgrind in what a peer does (start-up, a two-peer call over
the lab's sound devices with echo cancelling, encrypted and not, the Pi profile, a call from
a file into a file) and keeping every function of the binary that ran, in the order first
seen. The list is checked in: rerun this when the program has changed much (scripts/package
says how many of the listed functions the binary still has).

    python scripts/harness hot_functions BINARY OUTPUT
"""
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from .lab.audio import AudioLab
from .lab.processes import Ports, Proc
from .measure import duplex, signals
from .measure.signals import RATE

CALL_VARIANTS = [(), ("--unencrypted",), ("--profile", "pi")]


def traced(binary, workdir):
    """A wrapper that runs BINARY (without its debug sections, which valgrind's reader rejects
    from lld) under callgrind, one profile per process."""
    plain = workdir / "intercom"
    subprocess.run(["objcopy", "--strip-debug", str(binary), str(plain)], check=True)
    wrapper = workdir / "traced-intercom"
    wrapper.write_text("#!/bin/sh\nexec valgrind --quiet --tool=callgrind --demangle=no "
                       f"--callgrind-out-file={workdir}/callgrind.%p {plain} \"$@\"\n")
    wrapper.chmod(0o755)
    return plain, wrapper


def program(workdir):
    """Half a second on, half off of a voiced tone: speech-like enough for the voice detector,
    the codec's modes and discontinuous transmission to take their turns."""
    t = np.arange(8 * RATE) / RATE
    x = 0.25 * np.sin(2 * np.pi * 180 * t) * (np.sin(2 * np.pi * t) > 0) + 0.002 * np.random.default_rng(7).standard_normal(len(t))
    path = workdir / "program.wav"
    signals.write_wav(path, x)
    return path, len(t) / RATE


def device_calls(wrapper, workdir, talk, seconds):
    lab = AudioLab(workdir, prefix="hot")
    ports = Ports(47600)
    try:
        for n, extra in enumerate(CALL_VARIANTS):
            # Under valgrind a peer runs some 30 times slower: the call is late, but it runs
            # every part of a call (and the recoveries from late devices, which a Pi sees too).
            duplex.run_duplex(lab, "ours", str(wrapper), workdir, f"call{n}", talk, seconds, 2.0, ports,
                              ours_extra=extra, settle=6.0)
    finally:
        lab.stop()


def file_call(wrapper, workdir, talk, seconds):
    ports = Ports(47700)
    listen, send = ports.take(2)
    common = ["--no-discovery", "--unencrypted"]
    receiver = Proc([str(wrapper), *common, "--port", str(listen), "--output-file", str(workdir / "out.wav"),
                     "--duration", f"{seconds + 14:.0f}"], workdir / "file-b.log")
    sender = Proc([str(wrapper), *common, "--port", str(send), "--peer", f"127.0.0.1:{listen}", "--input-file",
                   str(talk), "--duration", f"{seconds + 6:.0f}"], workdir / "file-a.log")
    sender.wait(timeout=seconds + 120)
    receiver.wait(timeout=seconds + 120)


def executed(plain, profiles):
    """The binary's functions named in callgrind's profiles, first seen first. Names defined
    more than once (local helpers each object file has its own copy of) are left out: which
    copy ran is not known, and each would pull its whole object's text to the front."""
    counts = {}
    for line in subprocess.run(["nm", "--defined-only", str(plain)], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[1] in "tTwW":
            counts[fields[2]] = counts.get(fields[2], 0) + 1
    seen = {}
    for profile in profiles:
        for line in profile.read_text(errors="replace").splitlines():
            match = re.match(r"c?fn=\(\d+\) (\S+)", line)
            if match:
                name = match.group(1).split("'")[0]
                if counts.get(name) == 1:
                    seen.setdefault(name, None)
    return list(seen)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1].strip())
    binary, output = Path(sys.argv[1]).resolve(), Path(sys.argv[2])
    workdir = Path(tempfile.mkdtemp(prefix="intercom-hot-"))
    plain, wrapper = traced(binary, workdir)
    talk, seconds = program(workdir)
    device_calls(wrapper, workdir, talk, seconds)
    file_call(wrapper, workdir, talk, seconds)
    profiles = sorted(workdir.glob("callgrind.*"))
    names = executed(plain, profiles)
    if len(profiles) < 2 * len(CALL_VARIANTS) + 2 or len(names) < 1000:
        sys.exit(f"hot_functions: {len(profiles)} profiles, {len(names)} functions: a call did not run "
                 f"(logs in {workdir})")
    output.write_text("".join(f"{name}\n" for name in names))
    shutil.rmtree(workdir)
    print(f"hot_functions: {len(names)} functions from {len(profiles)} processes written to {output}")
