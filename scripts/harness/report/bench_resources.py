"""The benchmark report's sections on drift, CPU, memory and where they go, the cost of
encryption, the live chain in instructions, and discovery."""
from harness.judge.bench import FULL_DRIFT_SECONDS
from harness.measure.bench_figures import is_number

from .bench_names import DUPLEX_LABEL
from .bench_summary import discovery_unmeasured_reason
from .markdown import number, ratio, table_header


def instructions_section(run):
    counted = run.extras.get("instructions")
    lines = ["## The live chain in instructions", ""]
    if not counted:
        return lines + [f"Not measured: {run.extras.get('instructions_error', 'the step did not run')}.", ""]
    lines += ["`intercom bench-dsp` runs what a full-duplex peer does to its audio on recordings, faster than real time, "
              "with no sound card and no network: the microphone's chain (echo alignment, canceller and preprocessor, "
              "the VOX gate, both encoders, which code every frame here where a call uses one at a time) over a microphone that hears the far end 40 ms later at half level with "
              "the last utterance spoken over it, then the other side's for the frames it sent (RTP, sealing, "
              "opening, jitter buffer and mixer, decoder, drift resampler). valgrind's callgrind counts its "
              f"instructions: {counted['instructions'] / 1e6:.1f} M for {counted['audio_seconds']:.1f} s of audio, "
              f"**{counted['instructions_per_second'] / 1e6:.1f} M per second of audio** (starting the program and "
              "reading the files included), the same to a few parts in a million from run to run whatever the "
              "machine is doing. CPU time per stage is from a run outside valgrind (this machine's clock, so it "
              "moves with the load).", "",
              *table_header("stage", "ms of CPU per s of audio"),
              *(f"| {stage} | {ms:.2f} |" for stage, ms in counted["stages"]), "",
              *table_header("where the instructions are (self counts by library)", "M per s of audio", "share"),
              *(f"| {name} | {per_second / 1e6:.2f} | {100 * per_second / counted['instructions_per_second']:.1f} % |"
                for name, per_second in counted["libraries"] if per_second >= 1e4), "",
              "`intercom` holds the program's own code, the C signal kernels and the Swift runtime linked into it."]
    return lines + [""]


def listeners_section(run):
    measured = run.extras.get("listeners")
    lines = ["## A stream many devices hear", ""]
    if not measured:
        return lines + ["Not measured: the step did not run.", ""]
    lines += ["Every device a talker reaches is sent a copy of its own. One talker reads the program from a file "
              "to 1, 2 and 5 listeners on loopback (no relay), default settings; its statistics give the bitrate "
              "in force (`ListenerBudget`: the robust encoder's 10 ms frames from three listeners on, three "
              "copies' worth of bitrate shared from four) and what it sent, with 28 bytes of IPv4 and UDP "
              "headers a datagram, over the program's length; the first listener's recording is scored as a "
              "file-to-file call's. From a file the talker codes the robust encoder's frames whatever the count; "
              "with a live microphone one or two listeners get 5 ms low-delay frames while it speaks (the "
              "full-duplex call in \"CPU, memory and bytes on the wire\").", "",
              *table_header("listeners", "bitrate in force", "talker's codec mode", "datagrams a second, per stream",
                            "one stream on the wire", "all copies", "PESQ-WB at the first listener",
                            "its delay (speech, median)")]
    for row in measured:
        if "error" in row:
            lines.append(f"| {row['listeners']} | not measured: {row['error']} | | | | | | |")
            continue
        lines.append(f"| {row['listeners']} | {row.get('bitrate')} | {row.get('codec_mode')} | "
                     f"{row['datagrams_per_second']:.1f} | {row['stream_kbps']:.1f} kb/s | {row['all_kbps']:.1f} kb/s | "
                     f"{number(row.get('pesq'), '{:.2f}')} | {number(row.get('speech_delay_median'))} ms |")
    unscored = [f"{row['listeners']}: {row['score_error']}" for row in measured if row.get("score_error")]
    if unscored:
        lines += ["", "Not scored: " + "; ".join(unscored) + "."]
    return lines + [""]


def drift_row(d):
    """One drift call: d is what drift.finish returned."""
    receiver = d.get("receiver", {})
    return (f"| {d['ppm']:+d} ppm | `{d['profile']}` | {d['found']}/{d['total']} | {number(d.get('start_ms'))} ms | "
            f"{number(d.get('end_ms'))} ms | {number(d.get('change_ms'), '{:+.1f}')} ms | "
            f"{number(d.get('p5_ms'))}–{number(d.get('p95_ms'))} ms | {number(d.get('slope_ms_per_min'), '{:+.2f}')} ms/min | "
            f"{receiver.get('lost')} / {receiver.get('concealed')} / {receiver.get('late')} | "
            f"{number(receiver.get('target_delay_ms'))} ms |")


def drift_section(run, images):
    lines = ["## Delay drift at ±500 ppm", ""]
    if run.drifts:
        lines += [f"File to file, intercom with 10 ms frames, {run.drift_minutes} minutes per call, both calls at once; "
                  "clicks 0.7–1.3 s apart. \"Settled\" leaves out the first 10 s.", "",
                  *table_header("skew", "relay profile", "clicks found", "delay, first minute (median)", "last minute",
                                "change", "settled p5–p95", "slope", "receiver: lost / PLC / late",
                                "jitter buffer target at the end"),
                  *(drift_row(d) for d in run.drifts), ""]
        if "drift.png" in images:
            lines += ["![drift](benchmarks/drift.png)", ""]
    lines += [f"- could not run: {e}" for e in run.extras.get("drift_errors", [])]
    if run.ctx["quick"] and run.ctx["drift_seconds"] < FULL_DRIFT_SECONDS:
        lines.append(f"This is the --quick version ({run.drift_minutes} min); the full run (`scripts/bench`) runs "
                     "30 minutes.")
    return lines + [""]


def stream_rate(part):
    """datagrams/s, bytes/datagram, kb/s of one part (talking or silent) of A's stream."""
    return (f"{part.get('datagrams_per_s', float('nan')):.1f}, {number(part.get('bytes_per_datagram'))}, "
            f"{number(part.get('ip_bytes_per_s', float('nan')) * 8 / 1000)}")


def process_rss(rss):
    return " + ".join(f"{x:.1f}" for x in rss)


def resources_section(run):
    talk_seconds, silent_seconds = run.extras.get("duplex_seconds", (0, 0))
    lines = ["## CPU, memory and bytes on the wire (full duplex, lab devices)", "",
             f"Both peers talk at once for {talk_seconds:.0f} s (speech injected into both microphone devices) and are "
             f"then silent for {silent_seconds:.0f} s, on a clean link through a counting UDP relay (a few lines of "
             "Python in the benchmark). CPU: user + system seconds from `/proc/PID/stat` over the talking part, per "
             "second, and over the silent part from 1 s after the speech ends; a peer is one intercom process, or "
             "trx's `tx` and `rx`, or GStreamer's sender and receiver pipelines. Peak RSS: VmHWM from `/proc/PID/status`, read every 50 ms. Bytes: every datagram of A's stream "
             "(for intercom that includes its RTCP reports and hellos on the same port; trx's RTCP goes to port + 1 and "
             "is not counted; the GStreamer pipelines send none), plus 28 bytes of IPv4 + UDP headers each; talking "
             "from 0.5 s after the speech starts, silent from 1 s after it ends.", "",
             *table_header("peer", "CPU s per s (A / B)", "silent: CPU s per s (A / B)", "peak RSS, MB (each process)",
                           "A's stream talking: datagrams/s, bytes/datagram, kb/s",
                           "silent: datagrams/s, bytes/datagram, kb/s")]
    for variant, label in DUPLEX_LABEL.items():
        call = run.duplex.get(variant)
        if call is None:
            continue
        if "error" in call:
            lines.append(f"| {label} | could not run: {call['error']} |||||")
            continue
        silent = " / ".join(f"{call[peer]['cpu_silent']:.4f}" if "cpu_silent" in call[peer] else "–" for peer in "AB")
        lines.append(f"| {label} | {call['A']['cpu']:.4f} / {call['B']['cpu']:.4f} | {silent} | "
                     f"{process_rss(call['A']['rss'])} / {process_rss(call['B']['rss'])} | "
                     f"{stream_rate(call['talking'])} | {stream_rate(call['silent'])} |")
    return lines + ["",
                    "Silence in the lab is digital zeros from the null sink's monitor; a real microphone's noise floor "
                    "may keep DTX from engaging as often.", ""]


# What a peer's resident memory is made of, by the mapping's path (first match wins).
MEMORY_GROUPS = (
    ("Swift runtime and Foundation libraries (the toolchain's)", ("/usr/lib/swift/", "libswift", "Foundation",
                                                                      "libdispatch", "libBlocksRuntime")),
    ("C and C++ runtime (libc, libm, libstdc++, the loader)", ("/libc.so", "/libm.so", "/libstdc++", "/libgcc_s",
                                                               "/ld-linux")),
    ("ALSA and its PulseAudio plugin with what that loads", ("libasound", "pulse", "libX11", "libxcb", "libXau",
                                                             "libXdmcp", "libsndfile", "libFLAC", "libvorbis", "libogg",
                                                             "libmp3lame", "libmpg123", "libopus.so", "libasyncns",
                                                             "libapparmor", "libwrap")),
    ("codec, DSP and crypto libraries (Opus, SpeexDSP, kissfft, libsodium)", ("libopus", "libspeexdsp", "libkissfft",
                                                                               "libsodium")),
)


def memory_groups(run):
    """(group, kB) of intercom peer A's resident memory in the full-duplex run, largest first."""
    mappings = (run.duplex.get("ours", {}).get("A", {}).get("mappings") or [{}])[0]
    if not mappings:
        return []

    def group(path):
        if path == "[anonymous]":
            return "anonymous memory (heap, thread stacks)"
        if path == "[executable]" or path.endswith("/intercom"):  # runs saved before "[executable]" named it
            return "the intercom executable (its code, the Swift runtime's linked into it, and read-only data, as far as touched)"
        return named_group(MEMORY_GROUPS, path)
    return totals_by_group(mappings.items(), group)


def named_group(groups, name):
    """The first of `groups` ((label, substrings)) whose substrings `name` contains."""
    return next((label for label, keys in groups if any(k in name for k in keys)), "other libraries")


def totals_by_group(items, group):
    """(group, total) of (key, amount) items, largest first."""
    totals = {}
    for key, amount in items:
        totals[group(key)] = totals.get(group(key), 0) + amount
    return sorted(totals.items(), key=lambda item: -item[1])


def memory_section(run):
    groups = memory_groups(run)
    if not groups:
        return []
    total = sum(kb for _, kb in groups)
    return ["## Where a peer's memory goes", "",
            f"Intercom peer A of the full-duplex run above (AEC + denoise + AGC on), its resident memory by mapping "
            f"(`/proc/PID/smaps`, taken near its peak): {total / 1024:.1f} MB in all; a file's row holds its code, read-only "
            "data and writable data. Clean pages mapped from files are shared with every other process using the same "
            "file and can be dropped and read again under memory pressure. The benchmark measures the build users "
            "install (as scripts/package makes it: the Swift runtime linked into the executable, so only what a peer "
            "touches of it is resident; `scripts/memory BINARY` shows the same breakdown for any build, in a "
            "file-to-file call). On a Raspberry Pi the ALSA device is a `hw:` card, "
            "so the PulseAudio plugin and the libraries it loads are not there.", "",
            *table_header("part", "MB", "share"),
            *(f"| {name} | {kb / 1024:.1f} | {100 * kb / total:.0f} % |" for name, kb in groups), ""]


CPU_GROUPS = (
    ("the kernel (system calls, scheduling, UDP)", ("[kernel", "[vdso]")),
    ("SpeexDSP (echo canceller, preprocessor, drift resampler)", ("libspeexdsp",)),
    ("kissfft (the residual echo suppressor's spectra)", ("libkissfft",)),
    ("Opus", ("libopus",)),
    ("ALSA and its PulseAudio plugin", ("libasound", "libpulse", "libsndfile")),
    ("Swift runtime and Foundation", ("libswift", "Foundation", "libdispatch", "libBlocksRuntime")),
    ("C runtime (libc, libm)", ("libc.so", "libm.so", "ld-linux")),
    ("libsodium (encryption)", ("libsodium",)),
)


def cpu_groups(shares, own):
    """(group, percent of samples), largest first; `own` names the programs' own executables."""
    return totals_by_group(shares or [], lambda dso: OWN_CODE if dso in own else named_group(CPU_GROUPS, dso))


# intercom's executable, as packaged, holds the Swift runtime too.
OWN_CODE = "the program's own code (intercom's with the Swift runtime linked in)"


def cpu_profile_section(run):
    ours = cpu_groups(run.duplex.get("ours", {}).get("cpu_by_library_a"), {"intercom"})
    trx = cpu_groups(run.duplex.get("trx", {}).get("cpu_by_library_a"), {"tx", "rx", "trx"})
    if not ours:
        return []
    cpu_ours, cpu_trx = (run.duplex.get(name, {}).get("A", {}).get("cpu") for name in ("ours", "trx"))
    names = [name for name, _ in ours] + [name for name, _ in trx if name not in dict(ours)]

    def cell(groups, name, cpu):
        percent = dict(groups).get(name)
        if percent is None:
            return "–"
        return f"{percent:.0f} %" + (f" ({cpu * percent / 100:.4f} s/s)" if is_number(cpu) else "")

    return ["## Where a peer's CPU goes", "",
            "Peer A of the full-duplex runs above while both talk (intercom with AEC + denoise + AGC on; trx's tx and "
            "rx together), sampled by `perf record -e cpu-clock` (999 Hz; this machine has no hardware counters): each "
            "part's share of the samples, and of the CPU seconds per second measured from /proc.", "",
            *table_header("part", "intercom", "trx"),
            *(f"| {name} | {cell(ours, name, cpu_ours)} | {cell(trx, name, cpu_trx)} |" for name in names), ""]


def encryption_cost_section(run):
    """What encryption (the default) costs against `--unencrypted`, from this run's figures."""
    on, off = run.duplex.get("ours", {}), run.duplex.get("ours-unencrypted", {})
    lines = ["**What encryption costs.** Calls are encrypted by default (Noise handshake, then ChaCha20-Poly1305 per "
             "packet, constrained VBR); the rows above compare them with `--unencrypted`.", ""]
    if "A" in on and "A" in off:
        cpu_on = (on["A"]["cpu"] + on["B"]["cpu"]) / 2
        cpu_off = (off["A"]["cpu"] + off["B"]["cpu"]) / 2
        extra = (on["talking"].get("bytes_per_datagram", float("nan"))
                 - off["talking"].get("bytes_per_datagram", float("nan")))
        lines += [f"- CPU per peer: {cpu_on:.4f} s/s encrypted, {cpu_off:.4f} unencrypted ({ratio(cpu_on, cpu_off)} ×).",
                  f"- Bytes per datagram while talking: {number(extra)} more encrypted (the 16-byte frame header and the "
                  "16-byte tag are 32; constrained VBR moves the rest)."]
    else:
        lines.append(f"- Not measured: {on.get('error') or off.get('error') or 'a variant did not run'}.")
    both = [(link, run.file_figure(link, "ours", "pesq"), run.file_figure(link, "ours-unencrypted", "pesq"))
            for link in run.file_links]
    both = [(link, a, b) for link, a, b in both if a is not None and b is not None]
    if both:
        lines.append("- PESQ-WB file to file, encrypted / unencrypted: "
                     + "; ".join(f"{link} {a:.2f} / {b:.2f}" for link, a, b in both) + ".")
    return lines + [""]


def seconds_list(values):
    return ", ".join(f"{x:.3f}" for x in values)


def discovery_section(run):
    disc = run.discovery
    lines = ["## Discovery", ""]
    if "joining_new" not in disc:
        return lines + [f"Not measured: {discovery_unmeasured_reason(run)}", ""]
    return lines + [
        "In the LAN lab (`scripts/lab/lan-lab`): two network namespaces on one bridge, each with its own D-Bus and "
        "avahi-daemon; `intercom announce` in each publishes `_intercom._udp`, browses, and prints each event with its "
        "CLOCK_MONOTONIC time (one clock for both namespaces). Fresh service names every trial. "
        f"{disc.get('failures', 0)} trial(s) failed.", "",
        *table_header("trial", "times (s)"),
        f"| B running for 2 s, A starts: A finds B after | {seconds_list(disc['joining_new'])} |",
        f"| … B finds A, after A's start | {seconds_list(disc['joining_old'])} |",
        f"| A and B start together: each finds the other after | {seconds_list(disc['together'])} |", ""]
