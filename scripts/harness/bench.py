"""Benchmarks intercom against trx and a GStreamer RTP/Opus pipeline on this machine and
writes Docs/benchmarks.md and Docs/benchmarks/*.png.

Calls run device to device through the audio lab (PulseAudio null sinks seen as ALSA
devices, scripts/lab/audio-lab) and file to file, both through `intercom relay` on loopback
UDP; discovery is timed in the LAN lab (network namespaces with avahi-daemon,
scripts/lab/lan-lab). It reports what it measured, good or bad, and exits 0 unless it could
not run at all. Delay-sensitive calls run one at a time. Every seed is fixed."""
import argparse
import datetime
import os
import pickle
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import ROOT
from harness.bench_steps import FILE_CONFIGS, Steps
from harness.lab import anchors, audio, host, lan
from harness.lab.processes import Ports
from harness.measure import signals
from harness.measure.bench_figures import BenchRun
from harness.measure.signals import UTTERANCES
from harness.report import bench as report

LINKS = ["clean", "lan", "wifi", "loss5", "loss10-jitter30", "bursty"]
QUICK_LAB_LINKS = ["clean", "loss5", "loss10-jitter30", "bursty"]
DEFAULT_BINARY = str(ROOT / ".build-bench/release/intercom")
# The default binary: scripts/package builds the executable users install, kept in .build-bench.
PACKAGED_BUILD = ("--binary-only", "--scratch-path", ".build-bench")


def arguments():
    ap = argparse.ArgumentParser(prog="scripts/bench", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="fewer links and one utterance per call, a 2-minute drift run (under 10 minutes on 2 cores)")
    ap.add_argument("--drift-minutes", type=float,
                    help="length of the ±500 ppm drift run (default: 30, or 2 with --quick)")
    ap.add_argument("--binary", default=DEFAULT_BINARY, help="the intercom executable")
    ap.add_argument("--output", default=str(ROOT / "Docs/benchmarks.md"), help="where to write the report")
    ap.add_argument("--workdir", help="keep the WAV, JSON and log files here (default: a temporary directory)")
    ap.add_argument("--port-base", type=int, default=46000, help="first loopback UDP port to use")
    ap.add_argument("--report-from", help=argparse.SUPPRESS)  # re-render a run's saved figures (results.pickle)
    ap.add_argument("--smoke", action="store_true", help=argparse.SUPPRESS)  # a minute's check that every part runs
    return ap.parse_args()


def command_line(args):
    """The command the report names, to run it again."""
    command = "scripts/bench" + (" --quick" if args.quick else "")
    if args.drift_minutes:
        command += f" --drift-minutes {args.drift_minutes:g}"
    if args.binary != DEFAULT_BINARY:
        command += f" --binary {shlex.quote(args.binary)}"
    return command


def measured_binary(args):
    """The intercom executable to measure, built first when it is the default one."""
    if args.binary == DEFAULT_BINARY:
        # Measure the code in this work tree as scripts/package builds it for users: release mode,
        # the Swift runtime linked into the executable (incrementally).
        print("bench: building intercom (release, Swift runtime linked statically, as packaged)", flush=True)
        subprocess.run([str(ROOT / "scripts/package"), *PACKAGED_BUILD], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    binary = str(Path(args.binary).resolve())
    host.BINARY[0] = binary
    if not os.access(binary, os.X_OK):
        sys.exit(f"bench: no intercom executable at {binary}; build it with "
                 f"`scripts/package {' '.join(PACKAGED_BUILD)}`")
    return binary


def check_tools():
    """Exits when a tool or Python package the benchmark needs is missing."""
    for tool in ("gst-launch-1.0", "espeak-ng", "pulseaudio", "parec", "paplay", "arecord", "aplay"):
        if subprocess.run(["which", tool], capture_output=True).returncode != 0:
            sys.exit(f"bench: {tool} is missing; run scripts/setup")
    try:
        import matplotlib, pesq, pystoi  # noqa: F401,E401
    except ImportError as e:
        sys.exit(f"bench: Python package missing ({e}); run scripts/setup --bench")


def missing_anchors():
    """The anchors not installed here, which this run leaves out."""
    missing = []
    if anchors.trx_tools() is None:
        missing.append("trx")
        print("bench: trx is not installed (its tx and rx, Debian package `trx`: apt-get install trx); "
              "the trx anchor is left out of this run and the targets relative to trx are not judged", flush=True)
    return missing


def main():
    args = arguments()
    if args.report_from:
        saved = pickle.loads(Path(args.report_from).read_bytes())
        report.write(Path(args.output), BenchRun(*saved))
        return
    drift_seconds = 60.0 * (args.drift_minutes if args.drift_minutes else (2.0 if args.quick else 30.0))
    command = command_line(args)
    wall0 = time.monotonic()
    binary = measured_binary(args)
    # The device path alone and the anchors' notes use intercom's own default device buffer.
    audio.ALSA_BUFFER_MS = host.intercom_default("audio-buffer-ms") or audio.ALSA_BUFFER_MS
    check_tools()
    missing = missing_anchors()
    disc_unavailable = lan.available()
    if disc_unavailable:
        print(f"bench: discovery is not timed: {disc_unavailable}", flush=True)

    workdir = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="intercom-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    ctx = dict(command=command, quick=args.quick, machine=host.machine(),
               started=datetime.datetime.now(datetime.timezone.utc), loadavg_start=host.loadavg(), missing=missing,
               drift_seconds=drift_seconds, disc_unavailable=disc_unavailable)
    print(f"bench: working in {workdir} (load average {ctx['loadavg_start']})", flush=True)

    n_utt = 1 if args.quick else 3
    utterances = [(voice, signals.espeak(text, voice, workdir)) for voice, text in UTTERANCES[:n_utt]]
    steps = Steps(args, binary, workdir, Ports(args.port_base), ctx, utterances, started)
    ctx.update(program_seconds=steps.program_seconds, n_clicks=len(steps.clicks), voices=[v for v, _ in utterances],
               utterance_texts=UTTERANCES[:n_utt])

    lab_links = QUICK_LAB_LINKS if args.quick else LINKS
    if args.smoke:
        lab_links, drift_seconds = ["clean", "loss5"], 20.0
        ctx["drift_seconds"] = drift_seconds
    file_links = ["clean"] if args.quick else LINKS
    lab_impls = ["ours"] + ([] if args.smoke else ["ours-pi"]) + ["gstreamer"] + ([] if "trx" in missing else ["trx"])
    ctx.update(lab_links=lab_links, file_links=file_links)
    steps.run(lab_links, file_links, lab_impls, drift_seconds)

    ctx["loadavg_end"] = host.loadavg()
    ctx["elapsed"] = time.monotonic() - started
    ctx["elapsed_with_build"] = time.monotonic() - wall0
    out = Path(args.output)
    figures = BenchRun(ctx, steps.lab_results, steps.file_results, steps.extras, lab_links, file_links, lab_impls,
                       [c[0] for c in FILE_CONFIGS])
    (workdir / "results.pickle").write_bytes(pickle.dumps(tuple(figures)))  # a plain tuple: --report-from reads old ones
    report.write(out, figures)
    print(f"bench: wrote {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out} in {ctx['elapsed']:.0f} s "
          f"({ctx['elapsed_with_build']:.0f} s with the build)", flush=True)
