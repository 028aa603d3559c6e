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
import platform
import shlex
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from bench_lib import discovery, drift, instructions, lab, report, runs, signals, talkkey  # noqa: E402
from bench_lib.analysis import analyse  # noqa: E402
from bench_lib.signals import RATE  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent.parent
LINKS = ["clean", "lan", "wifi", "loss5", "loss10-jitter30", "bursty"]
QUICK_LAB_LINKS = ["clean", "loss5", "loss10-jitter30", "bursty"]
SEED = 8
UTTERANCES = [
    ("en-us+m3", "The north wind and the sun were arguing about which of them was the stronger."),
    ("en-us+f3", "Please bring the red toolbox up to the second floor before the meeting starts."),
    ("en-gb+m1", "A traveller came along, wrapped in a warm cloak, and they agreed on a test."),
]
DRIFT_PPM = (500, -500)


def main():
    ap = argparse.ArgumentParser(prog="scripts/bench", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="fewer links and one utterance per call, a 2-minute drift run (under 10 minutes on 2 cores)")
    ap.add_argument("--drift-minutes", type=float,
                    help="length of the ±500 ppm drift run (default: 30, or 2 with --quick)")
    ap.add_argument("--binary", default=str(ROOT / ".build-bench/release/intercom"), help="the intercom executable")
    ap.add_argument("--output", default=str(ROOT / "Docs/benchmarks.md"), help="where to write the report")
    ap.add_argument("--workdir", help="keep the WAV, JSON and log files here (default: a temporary directory)")
    ap.add_argument("--port-base", type=int, default=46000, help="first loopback UDP port to use")
    ap.add_argument("--report-from", help=argparse.SUPPRESS)  # re-render a run's saved figures (results.pickle)
    ap.add_argument("--smoke", action="store_true", help=argparse.SUPPRESS)  # a minute's check that every part runs
    args = ap.parse_args()
    if args.report_from:
        import pickle
        saved = pickle.loads(Path(args.report_from).read_bytes())
        report.write(Path(args.output), report.BenchRun(*saved))
        return
    drift_seconds = 60.0 * (args.drift_minutes if args.drift_minutes else (2.0 if args.quick else 30.0))

    command = "scripts/bench" + (" --quick" if args.quick else "")
    if args.drift_minutes:
        command += f" --drift-minutes {args.drift_minutes:g}"
    default_binary = str(ROOT / ".build-bench/release/intercom")
    if args.binary != default_binary:
        command += f" --binary {shlex.quote(args.binary)}"
    wall0 = time.monotonic()
    if args.binary == default_binary:
        # Measure the code in this work tree as scripts/package builds it for users: release mode,
        # the Swift runtime linked into the executable (incrementally).
        print("bench: building intercom (release, Swift runtime linked statically, as packaged)", flush=True)
        subprocess.run([str(ROOT / "scripts/package"), *PACKAGED_BUILD], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    binary = str(Path(args.binary).resolve())
    BINARY[0] = binary
    if not os.access(binary, os.X_OK):
        sys.exit(f"bench: no intercom executable at {binary}; build it with "
                 f"`scripts/package {' '.join(PACKAGED_BUILD)}`")
    # The device path alone and the anchors' notes use intercom's own default device buffer.
    lab.ALSA_BUFFER_MS = intercom_default("audio-buffer-ms") or lab.ALSA_BUFFER_MS
    for tool in ("gst-launch-1.0", "espeak-ng", "pulseaudio", "parec", "paplay", "arecord", "aplay"):
        if subprocess.run(["which", tool], capture_output=True).returncode != 0:
            sys.exit(f"bench: {tool} is missing; run scripts/setup")
    try:
        import matplotlib, pesq, pystoi  # noqa: F401,E401
    except ImportError as e:
        sys.exit(f"bench: Python package missing ({e}); run scripts/setup --bench")
    missing = []
    if lab.trx_tools() is None:
        missing.append("trx")
        print("bench: trx is not installed (its tx and rx, Debian package `trx`: apt-get install trx); "
              "the trx anchor is left out of this run and the targets relative to trx are not judged", flush=True)
    disc_unavailable = discovery.available()
    if disc_unavailable:
        print(f"bench: discovery is not timed: {disc_unavailable}", flush=True)

    workdir = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="intercom-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    ctx = dict(command=command, quick=args.quick, machine=machine(), started=datetime.datetime.now(datetime.timezone.utc),
               loadavg_start=loadavg(), missing=missing, drift_seconds=drift_seconds, disc_unavailable=disc_unavailable)
    print(f"bench: working in {workdir} (load average {ctx['loadavg_start']})", flush=True)

    def stamp(what):
        print(f"bench: {what} ({time.monotonic() - started:.0f} s)", flush=True)

    n_utt = 1 if args.quick else 3
    utterances = [(voice, signals.espeak(text, voice, workdir)) for voice, text in UTTERANCES[:n_utt]]
    program, clicks, spans = signals.build_program(utterances, SEED)
    program_path = workdir / "program.wav"
    signals.write_wav(program_path, program)
    program_seconds = len(program) / RATE
    ctx.update(program_seconds=program_seconds, n_clicks=len(clicks), voices=[v for v, _ in utterances],
               utterance_texts=UTTERANCES[:n_utt])
    ports = runs.Ports(args.port_base)

    lab_links = QUICK_LAB_LINKS if args.quick else LINKS
    if args.smoke:
        lab_links, drift_seconds = ["clean", "loss5"], 20.0
        ctx["drift_seconds"] = drift_seconds
    file_links = ["clean"] if args.quick else LINKS
    lab_impls = ["ours", "gstreamer"] + ([] if "trx" in missing else ["trx"])
    # (name, frame length (None: the default, which from a file is 10 ms), extra arguments); GStreamer is not ours.
    file_configs = [("ours", None, ()), ("ours-10ms", 10, ()), ("ours-20ms", 20, ()),
                    ("ours-unencrypted", None, ("--unencrypted",)), ("gstreamer", None, ())]
    ctx.update(lab_links=lab_links, file_links=file_links)
    lab_results, file_results, extras = {}, {}, {}
    drift_runs = []
    audio_lab = None
    try:
        stamp("starting the audio lab")
        audio_lab = lab.AudioLab(workdir)

        stamp("device path alone")
        try:
            r = lab.run_device_path(audio_lab, workdir, "device-path", program_path, program)
            extras["device_path"] = analyse(r, program, clicks, spans, "device")
        except Exception as e:
            traceback.print_exc()
            extras["device_path"] = dict(error=f"{type(e).__name__}: {e}")

        for link in lab_links:
            for impl in lab_impls:
                tag = f"lab-{link}-{impl}"
                stamp(tag)
                try:
                    r = lab.run_call(audio_lab, impl, binary, workdir, tag, program_path, program, f"{link},seed={SEED}",
                                     ports)
                    lab_results[(link, impl)] = analyse(r, program, clicks, spans, impl)
                except Exception as e:  # a benchmark reports what failed and goes on
                    traceback.print_exc()
                    lab_results[(link, impl)] = dict(error=f"{type(e).__name__}: {e}")

        for link in file_links:
            for impl, frame, extra in file_configs:
                tag = f"file-{link}-{impl}"
                stamp(tag)
                try:
                    if impl.startswith("ours"):
                        r = runs.run_ours(binary, workdir, tag, program_path, program_seconds, f"{link},seed={SEED}",
                                          frame, ports, extra=extra)
                    else:
                        r = runs.run_gst(binary, workdir, tag, program, f"{link},seed={SEED}", ports)
                    file_results[(link, impl)] = analyse(r, program, clicks, spans, impl)
                except Exception as e:
                    traceback.print_exc()
                    file_results[(link, impl)] = dict(error=f"{type(e).__name__}: {e}")

        # The drift calls run file to file in the background from here on, while the figures
        # that do not depend on timing are taken.
        stamp(f"drift: starting {drift_seconds / 60:g}-minute calls at {', '.join(f'{p:+d}' for p in DRIFT_PPM)} ppm")
        for ppm in DRIFT_PPM:
            try:
                drift_runs.append(drift.start(binary, workdir, drift_seconds, ppm, ports, seed=SEED))
            except Exception as e:
                traceback.print_exc()
                extras.setdefault("drift_errors", []).append(f"{ppm:+d} ppm: {type(e).__name__}: {e}")

        talk_seconds, silent_seconds = (10.0, 4.0) if args.quick else (30.0, 10.0)
        if args.smoke:
            talk_seconds, silent_seconds = 3.0, 2.0
        speech = np.concatenate([np.concatenate([u, np.zeros(int(0.3 * RATE))]) for _, u in utterances])
        talk = np.tile(speech, int(np.ceil(talk_seconds * RATE / len(speech))))[: int(talk_seconds * RATE)]
        talk_path = workdir / "talk.wav"
        signals.write_wav(talk_path, talk)
        duplex = {}
        variants = [("ours", ()), ("ours-no-aec-denoise", ("--no-aec", "--no-denoise")), ("ours-no-dtx", ("--no-dtx",)),
                    ("ours-unencrypted", ("--unencrypted",)),
                    ("gstreamer", ())] + ([] if "trx" in missing else [("trx", ())])
        for name, extra in (variants[:1] + variants[-1:] if args.smoke else variants):
            stamp(f"full duplex, CPU and bytes: {name}")
            try:
                duplex[name] = lab.run_duplex(audio_lab, name.split("-")[0], binary, workdir, f"duplex-{name}", talk_path,
                                              talk_seconds, silent_seconds, ports, ours_extra=extra)
            except Exception as e:
                traceback.print_exc()
                duplex[name] = dict(error=f"{type(e).__name__}: {e}")
        extras["duplex"] = duplex
        extras["duplex_seconds"] = (talk_seconds, silent_seconds)

        # Talk key to ear: the first press of a call, and one after 5 minutes of silence (1 with
        # --quick, 10 s with --smoke); the drift calls go on meanwhile.
        key_silence = 10.0 if args.smoke else (60.0 if args.quick else 300.0)
        stamp(f"talk key to ear (a press, {key_silence:g} s of silence, a press)")
        unavailable = talkkey.available()
        try:
            extras["talkkey"] = dict(error=unavailable) if unavailable else talkkey.run(binary, workdir, ports, key_silence)
        except Exception as e:
            traceback.print_exc()
            extras["talkkey"] = dict(error=f"{type(e).__name__}: {e}")
    finally:
        if audio_lab is not None:
            audio_lab.stop()

    try:
        if not disc_unavailable:
            stamp("discovery in the LAN lab")
            try:
                extras["discovery"] = discovery.run(binary, workdir, 1 if args.smoke else 2 if args.quick else 5)
            except Exception as e:
                traceback.print_exc()
                extras["discovery"] = dict(error=f"{type(e).__name__}: {e}")

        stamp("codec ceiling")
        try:
            ceiling = []
            for frame in (10, 20):
                for fec in (True, False):
                    scores = [signals.quality(u, runs.codec_ceiling(workdir, u, frame, fec)) for _, u in utterances]
                    ceiling.append(dict(frame=frame, fec=fec, pesq=float(np.nanmean([p for p, _ in scores])),
                                        stoi=float(np.nanmean([q for _, q in scores]))))
            extras["ceiling"] = ceiling
        except Exception as e:
            traceback.print_exc()
            extras["ceiling_error"] = f"{type(e).__name__}: {e}"

        stamp("Opus complexity")
        try:
            extras["complexity"] = [runs.codec_complexity(workdir, utterances, encoder, complexity)
                                    for encoder in runs.COMPLEXITY_ENCODERS for complexity in (0, 2, 4, 6, 8, 10)]
        except Exception as e:
            traceback.print_exc()
            extras["complexity_error"] = f"{type(e).__name__}: {e}"

        stamp("Opus bitrate")
        try:
            extras["bitrate"] = [runs.codec_bitrate(workdir, utterances, encoder, bitrate)
                                 for encoder in runs.COMPLEXITY_ENCODERS for bitrate in runs.BITRATES]
        except Exception as e:
            traceback.print_exc()
            extras["bitrate_error"] = f"{type(e).__name__}: {e}"

        stamp("the live chain in instructions (callgrind)")
        try:
            extras["instructions"] = instructions.measure(binary, workdir, utterances)
        except Exception as e:
            traceback.print_exc()
            extras["instructions_error"] = f"{type(e).__name__}: {e}"

        stamp("drift: waiting for the calls to end")
        extras["drift"] = []
        for run in drift_runs:
            try:
                extras["drift"].append(drift.finish(run))
            except Exception as e:
                traceback.print_exc()
                extras.setdefault("drift_errors", []).append(f"{run['ppm']:+d} ppm: {type(e).__name__}: {e}")
    finally:
        for run in drift_runs:
            for p in (run["a"], run["b"], run["relay"]):
                p.stop()  # only if still running (an error above); they end by themselves

    ctx["loadavg_end"] = loadavg()
    ctx["elapsed"] = time.monotonic() - started
    ctx["elapsed_with_build"] = time.monotonic() - wall0
    out = Path(args.output)
    figures = report.BenchRun(ctx, lab_results, file_results, extras, lab_links, file_links, lab_impls,
                              [c[0] for c in file_configs])
    import pickle
    (workdir / "results.pickle").write_bytes(pickle.dumps(tuple(figures)))  # a plain tuple: --report-from reads old ones
    report.write(out, figures)
    print(f"bench: wrote {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out} in {ctx['elapsed']:.0f} s "
          f"({ctx['elapsed_with_build']:.0f} s with the build)", flush=True)


def binary_for_help():
    return BINARY[0]


def intercom_default(option):
    """The default of one of `intercom talk`'s numeric options, as its --help states it."""
    import re
    text = subprocess.run([binary_for_help(), "talk", "--help"], capture_output=True, text=True).stdout
    found = re.search(rf"--{option} .*?\(default: (\d+)\)", text, re.S)
    return int(found.group(1)) if found else None


BINARY = [str(ROOT / ".build-bench/release/intercom")]
# The default binary: scripts/package builds the executable users install, kept in .build-bench.
PACKAGED_BUILD = ("--binary-only", "--scratch-path", ".build-bench")


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
                bitrate=bitrate, audio_buffer_ms=lab.ALSA_BUFFER_MS,
                gstreamer=out(["gst-launch-1.0", "--version"]).splitlines()[0:2], trx=trx, pulseaudio=pulse,
                opus=out(["pkg-config", "--modversion", "opus"]), python=platform.python_version())


if __name__ == "__main__":
    main()
