"""One benchmark run's figures, as the calls and measures produced them, and the few
figures read off them that more than one part of the report and its verdicts need."""
import math
from typing import NamedTuple

from harness.lab import audio


def is_number(x):
    """True for a figure that was measured: not None and not NaN."""
    return x is not None and not (isinstance(x, float) and math.isnan(x))


class BenchRun(NamedTuple):
    """One run's figures, as scripts/bench hands them over (and saves them, as a plain tuple in
    this order, to results.pickle). Results are keyed by (link, implementation)."""
    ctx: dict  # how the run was made: command, machine, times, utterances, drift length…
    lab_results: dict  # device-to-device calls
    file_results: dict  # file-to-file calls
    extras: dict  # device path alone, full duplex, discovery, drift, codec ceiling
    lab_links: list
    file_links: list
    lab_impls: list
    file_impls: list

    def lab_figure(self, link, impl, key):
        """One figure of a device-to-device call, or None if it was not measured."""
        v = self.lab_results.get((link, impl), {}).get(key)
        return v if is_number(v) else None

    def file_figure(self, link, impl, key):
        """One figure of a file-to-file call as it was stored (it may be NaN)."""
        return self.file_results.get((link, impl), {}).get(key)

    @property
    def device_path(self):
        return self.extras.get("device_path", {})

    @property
    def duplex(self):
        return self.extras.get("duplex", {})

    @property
    def discovery(self):
        return self.extras.get("discovery", {})

    @property
    def drifts(self):
        return self.extras.get("drift", [])

    @property
    def ceiling(self):
        """The codec alone, keyed by (frame ms, FEC on)."""
        return {(c["frame"], c["fec"]): c for c in self.extras.get("ceiling", [])}

    @property
    def drift_minutes(self):
        return f"{self.ctx['drift_seconds'] / 60:.3g}"

    @property
    def buffer_ms(self):
        """The device buffer the run used (a re-rendered report describes its own run)."""
        return self.ctx["machine"].get("audio_buffer_ms") or audio.ALSA_BUFFER_MS


def peer_cpu(duplex_call, part="cpu"):
    """CPU seconds per second of the busier peer of a full-duplex call: while both talk
    (`cpu`), or while both are silent (`cpu_silent`)."""
    if "A" not in duplex_call or part not in duplex_call["A"]:
        return None
    return max(duplex_call["A"][part], duplex_call["B"][part])


def peer_rss(duplex_call):
    """Peak RSS of the larger peer of a full-duplex call, its processes added up."""
    return max(sum(duplex_call["A"]["rss"]), sum(duplex_call["B"]["rss"])) if "A" in duplex_call else None


def wire_kbps(duplex_call, part):
    """kb/s on the wire, IPv4 + UDP headers included, of A's stream while "talking" or "silent"."""
    v = duplex_call.get(part, {}).get("ip_bytes_per_s")
    return v * 8 / 1000 if is_number(v) else None
