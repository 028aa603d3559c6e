"""The audio lab (scripts/lab/audio-lab): PulseAudio null sinks seen by ALSA programs as
sound devices, paced in real time.

A's microphone (mic_a) and B's speaker (spk_b) are one-channel remapped sinks of one
two-channel null sink, the bus (`audio-lab start --bus mic_a,spk_b`). One recording of the
bus's monitor holds what reaches A's microphone (channel 0) and what B's speaker plays
(channel 1) sample-aligned, on the sink's one clock: the buffering of the tool that injects
the sound and of the tool that records it cancels out of the delay."""
import os
import subprocess
from pathlib import Path

from harness import ROOT

from .processes import Proc

SCRIPT = ROOT / "scripts/lab/audio-lab"
DEVICES = ("mic_a", "spk_a", "mic_b", "spk_b")
BUS = ("mic_a", "spk_b")

# The device settings. intercom: its defaults (its sound-card buffer, read from `intercom talk
# --help` when the benchmark starts; AEC, denoise and AGC on with live devices). The device
# path alone is copied with the same buffers.
ALSA_BUFFER_MS = 20
ALSA_PERIOD_MS = 10


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

    def start_helper(self, *args):
        """Starts an audio-lab helper that lives until it is stopped by PID, the lab stops or
        this process ends (`room`, `busy`): its PID."""
        out = subprocess.run([str(SCRIPT), *args, "--dir", str(self.dir), "--owner", str(os.getpid())],
                             capture_output=True, text=True, check=True).stdout
        return int(out.split()[-1])

    def unplug(self, device):
        subprocess.run([str(SCRIPT), "unplug", device, "--dir", str(self.dir)], check=True, capture_output=True)

    def plug(self, device):
        subprocess.run([str(SCRIPT), "plug", device, "--dir", str(self.dir)], check=True, capture_output=True)

    def stop(self):
        subprocess.run([str(SCRIPT), "stop", "--dir", str(self.dir)], capture_output=True)
