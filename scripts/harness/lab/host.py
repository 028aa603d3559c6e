"""The machine a benchmark runs on and the intercom it measures: CPU, kernel, commit, the
anchors' and libraries' versions, the load; and the defaults intercom's own --help states."""
import os
import platform
import re
import subprocess
from pathlib import Path

from harness import ROOT

from . import audio

# The intercom executable whose --help states the defaults; the benchmark sets it to the one it measures.
BINARY = [str(ROOT / ".build-bench/release/intercom")]


def binary_for_help():
    return BINARY[0]


def intercom_default(option):
    """The default of one of `intercom talk`'s numeric options, as its --help states it."""
    text = subprocess.run([binary_for_help(), "talk", "--help"], capture_output=True, text=True).stdout
    # The option's own entry: from its name (options stand two spaces in; their descriptions
    # run on further in) to the next option.
    entry = re.search(rf"^ {{1,4}}--{option} (.*?)(?=^ {{1,4}}-)", text, re.S | re.M)
    found = entry and re.search(r"Default: (\d+)", entry.group(1))
    return int(found.group(1)) if found else None


def loadavg():
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def machine():
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass

    def out(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT).stdout.strip()
        except OSError:
            return ""

    commit = out(["git", "rev-parse", "--short=12", "HEAD"]) or "unknown"
    dirty = bool(out(["git", "status", "--porcelain", "--untracked-files=no"]))
    trx = out(["dpkg-query", "-W", "-f=${Version}", "trx"])
    pulse = out(["pulseaudio", "--version"])
    bitrate = intercom_default("bitrate")
    return dict(nproc=os.cpu_count(), cpu=cpu, kernel=platform.release(), commit=commit, dirty=dirty,
                bitrate=bitrate, audio_buffer_ms=audio.ALSA_BUFFER_MS,
                gstreamer=out(["gst-launch-1.0", "--version"]).splitlines()[0:2], trx=trx, pulseaudio=pulse,
                opus=out(["pkg-config", "--modversion", "opus"]), python=platform.python_version())
