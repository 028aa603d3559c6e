"""The benchmark report's summary: one row per figure with its target and verdict; the rows
also return the targets they found missed, which the section after the summary explains."""
import math
from typing import NamedTuple

import numpy as np

from harness.judge.bench import (CPU_TARGET_FACTOR, DELAY_AGAINST_TRX, DISCOVERY_TARGET_S, FILE_DELAY_TARGET_MS,
                                 FIRST_CLICK_MARGIN_MS, FRAME_MS, FULL_DRIFT_SECONDS, PESQ_FILE_TARGET, PESQ_TARGETS,
                                 RSS_TARGET_MB, SILENT_WIRE_TARGET_KBPS, TALK_KEY_MARGIN_MS, WIRE_AGAINST_TRX, Miss,
                                 cpu_against_trx,
                                 delay_against_trx, drift_within_frame, first_click_in_time, judged, largest_rss, met,
                                 talk_key_in_time)
from harness.measure.bench_figures import is_number, peer_cpu, peer_rss, wire_kbps

from .markdown import number, ratio, table_header


class SummaryRow(NamedTuple):
    text: str
    miss: object = None  # a Miss, or None


def summary_section(run):
    """The summary table, and the targets it found missed."""
    rows = [device_path_summary_row(run), *delay_summary_rows(run), *pesq_summary_rows(run),
            file_pesq_summary_row(run), file_delay_summary_row(run), drift_summary_row(run), *cpu_summary_rows(run),
            instructions_summary_row(run), rss_summary_row(run),
            discovery_summary_row(run), *wire_summary_rows(run), first_click_summary_row(run), *talk_key_summary_rows(run),
            *pi_profile_summary_rows(run)]
    lines = ["## Summary", "",
             *table_header("figure", "intercom", "trx", "GStreamer", "intercom / trx", "intercom / GStreamer",
                           "target (issues 8 and 14)", "verdict"),
             *(row.text for row in rows), ""]
    return lines, [row.miss for row in rows if row.miss]


def device_path_summary_row(run):
    return SummaryRow(
        f"| lab device path alone (`arecord \\| aplay`, {run.buffer_ms} ms buffers), median | "
        f"{number(run.device_path.get('delay_median'))} ms | – | – | – | – | "
        "reference: about 62 ms in the issue's lab | – |")


def delay_cell(run, link, impl):
    """A device-to-device call's delay: median and p95."""
    call = run.lab_results.get((link, impl), {})
    if "error" in call:
        return "could not run"
    if impl not in run.lab_impls or not is_number(call.get("delay_median")):
        return "–"
    return f"{call['delay_median']:.1f} ms (p95 {number(call.get('delay_p95'))})"


def delay_summary_rows(run):
    """Delay against trx's: on the clean link, and on a lossy one where the speech must also be far better."""
    rows = []
    for link, label, factor in DELAY_AGAINST_TRX:
        ours, trx, gst = (run.lab_figure(link, impl, "delay_median") for impl in ("ours", "trx", "gstreamer"))
        lossy = link != "clean"
        target = f"≤ {factor} × trx's" + (", with far better speech" if lossy else "")
        pesq_ours, pesq_trx = run.lab_figure(link, "ours", "pesq"), run.lab_figure(link, "trx", "pesq")
        ok = delay_against_trx(ours, trx, factor, pesq_ours, pesq_trx, lossy)
        miss = None
        if ok is None:
            verdict = "not judged: no trx figure"
        else:
            verdict = met(ok)
            if lossy:
                verdict += (f" ({ours / trx:.2f} × trx's; PESQ-WB {number(pesq_ours, '{:.2f}')} "
                            f"against trx's {number(pesq_trx, '{:.2f}')})")
            if not ok:
                miss = Miss("delay", link, ours, trx)
        rows.append(SummaryRow(
            f"| {label} | {delay_cell(run, link, 'ours')} | {delay_cell(run, link, 'trx')} | "
            f"{delay_cell(run, link, 'gstreamer')} | {ratio(ours, trx)} | {ratio(ours, gst)} | {target} | {verdict} |",
            miss))
    return rows


def pesq_summary_rows(run):
    """Speech quality device to device on the lossy links the issue sets targets for."""
    rows = []
    for link, label, target in PESQ_TARGETS:
        if link not in run.lab_links:
            continue
        ours, trx, gst = (run.lab_figure(link, impl, "pesq") for impl in ("ours", "trx", "gstreamer"))
        missed, verdict = judged(ours, target, higher_is_better=True)
        rows.append(SummaryRow(
            f"| {label} | {number(ours, '{:.2f}')} | {number(trx, '{:.2f}')} | {number(gst, '{:.2f}')} | "
            f"{ratio(ours, trx)} | {ratio(ours, gst)} | ≥ {target} | {verdict} |",
            Miss("pesq", link, ours, target) if missed else None))
    return rows


def file_pesq_summary_row(run):
    ours, gst = run.file_figure("clean", "ours", "pesq"), run.file_figure("clean", "gstreamer", "pesq")
    missed, verdict = judged(ours, PESQ_FILE_TARGET, higher_is_better=True)
    return SummaryRow(
        f"| PESQ-WB, clean link, file to file | {number(ours, '{:.2f}')} | – (trx plays only to devices) | "
        f"{number(gst, '{:.2f}')} | – | {ratio(ours, gst)} | ≥ {PESQ_FILE_TARGET} | {verdict} |",
        Miss("pesq-file", "clean", ours, PESQ_FILE_TARGET) if missed else None)


def file_delay_summary_row(run):
    """Mouth-to-ear without devices: the codec, the network path and the jitter buffer alone."""
    ours, gst = run.file_figure("clean", "ours", "delay_median"), run.file_figure("clean", "gstreamer", "delay_median")
    fixed = run.file_figure("clean", "ours-10ms", "delay_median")
    missed, verdict = judged(ours, FILE_DELAY_TARGET_MS, higher_is_better=False)
    return SummaryRow(
        f"| mouth-to-ear delay, clean link, file to file, median | {number(ours)} ms ({number(fixed)} with "
        f"`--frame-ms 10`) | – (trx plays only to devices) | {number(gst)} | – | {ratio(ours, gst)} | "
        f"≤ {FILE_DELAY_TARGET_MS} ms | {verdict} |",
        Miss("delay-file", "clean", ours, FILE_DELAY_TARGET_MS) if missed else None)


def drift_summary_row(run):
    """How far the delay moved over the drift calls: within one frame is the target."""
    drifts = run.drifts
    if not drifts:
        return SummaryRow(
            f"| delay drift at ±500 ppm | not measured: {'; '.join(run.extras.get('drift_errors', ['no run']))} | "
            "– | – | – | – | within one frame | not judged |")
    worst = max((abs(d.get("change_ms", float("nan"))) for d in drifts if is_number(d.get("change_ms"))), default=None)
    spread = max((d.get("p95_ms", 0) - d.get("p5_ms", 0) for d in drifts if is_number(d.get("p95_ms"))), default=None)
    cells = "; ".join(f"{d['ppm']:+d} ppm: {number(d.get('change_ms'), '{:+.1f}')} ms from start to end "
                      f"(p5–p95 {number(d.get('p5_ms'))}–{number(d.get('p95_ms'))} ms)" for d in drifts)
    miss = None
    ok = drift_within_frame(worst)
    if ok is None:
        verdict = "–"
    else:
        verdict = met(ok)
        if run.ctx["drift_seconds"] < FULL_DRIFT_SECONDS:
            verdict += f" over {run.drift_minutes} min only: the target is for 30 min (full run)"
        if not ok:
            miss = Miss("drift", None, worst, spread)
    return SummaryRow(
        f"| delay drift over {run.drift_minutes} min at ±500 ppm, file to file, settled | {cells} | – | – | – | – | "
        f"within one frame ({FRAME_MS} ms) | {verdict} |", miss)


def cpu_summary_rows(run):
    """CPU of a full-duplex peer against trx's tx + rx, with AEC and denoise on, then off."""
    duplex = run.duplex
    ours, trx, gst = (peer_cpu(duplex.get(k, {})) for k in ("ours", "trx", "gstreamer"))
    ours_off = peer_cpu(duplex.get("ours-no-aec-denoise", {}))
    silent = [peer_cpu(duplex.get(k, {}), "cpu_silent") for k in ("ours", "trx", "gstreamer")]
    miss = None
    ok = cpu_against_trx(ours, trx)
    if ok is None:
        verdict = "not judged"
    else:
        verdict = met(ok)
        if not ok:
            miss = Miss("cpu", None, ours, trx)
    rows = [
        SummaryRow(
            f"| CPU s per s, full-duplex peer, AEC and denoise on, live lab devices (trx: tx + rx) | {number(ours, '{:.4f}')} | "
            f"{number(trx, '{:.4f}')} | {number(gst, '{:.4f}')} | {ratio(ours, trx)} | {ratio(ours, gst)} | "
            f"≤ {CPU_TARGET_FACTOR} × trx's tx+rx (0.6 × the next goal) | {verdict} |", miss),
        SummaryRow(
            f"| CPU s per s, full-duplex peer, AEC and denoise off | {number(ours_off, '{:.4f}')} | {number(trx, '{:.4f}')} | "
            f"{number(gst, '{:.4f}')} | {ratio(ours_off, trx)} | {ratio(ours_off, gst)} | – | – |"),
    ]
    if silent[0] is not None:
        rows.append(SummaryRow(
            f"| CPU s per s, the same full-duplex peers while both are silent (AEC and denoise on) | "
            f"{' | '.join(number(value, '{:.4f}') for value in silent)} | {ratio(silent[0], silent[1])} | "
            f"{ratio(silent[0], silent[2])} | – | – |"))
    return rows


def instructions_summary_row(run):
    """The whole live chain's instructions per second of audio: the figure that does not move with the machine."""
    counted = run.extras.get("instructions")
    cell = f"{counted['instructions_per_second'] / 1e6:.1f} M" if counted else "not measured"
    return SummaryRow(f"| instructions per s of audio, the live chain of a full-duplex peer (`intercom bench-dsp` under "
                      f"callgrind; repeatable) | {cell} | – | – | – | – | – (tracks each change's cost) | – |")


def rss_summary_row(run):
    """Peak RSS of a full-duplex peer; the target holds for every intercom process of the run."""
    duplex = run.duplex
    ours, trx, gst = (peer_rss(duplex.get(k, {})) for k in ("ours", "trx", "gstreamer"))
    largest = largest_rss(run, ours)
    missed, verdict = judged(largest, RSS_TARGET_MB, higher_is_better=False)
    return SummaryRow(
        f"| peak RSS of a peer, full duplex (trx, GStreamer: both processes together) | {number(ours)} MB (largest of "
        f"any intercom process in this run: {number(largest)} MB) | {number(trx)} | {number(gst)} | {ratio(ours, trx)} | "
        f"{ratio(ours, gst)} | ≤ {RSS_TARGET_MB} MB | {verdict} |",
        Miss("rss", None, largest, RSS_TARGET_MB) if missed else None)


def median_seconds(values):
    return f"{np.median(values):.3f} s" if values else "–"


def discovery_unmeasured_reason(run):
    return run.ctx.get("disc_unavailable") or run.discovery.get("error", "not run")


def first_click_summary_row(run):
    """The first click of a clean-link lab call (the first word of the call) against the call's median."""
    def cell(impl):
        call = run.lab_results.get(("clean", impl), {})
        delays = call.get("click_delays")
        if delays is None or not is_number(call.get("delay_median")):
            return "–", None
        first = float(delays[0])
        if math.isnan(first):
            return f"not found (median {call['delay_median']:.1f} ms)", math.inf
        return f"{first:.1f} ms (median {call['delay_median']:.1f} ms)", first - call["delay_median"]
    ours, excess = cell("ours")
    trx, _ = cell("trx")
    gst, _ = cell("gstreamer")
    ok = first_click_in_time(excess)
    verdict = "not judged" if ok is None else met(ok)
    return SummaryRow(f"| first click of a call, clean link, lab devices, against the call's median | {ours} | {trx} | {gst} | – | – | "
                      f"≤ median + {FIRST_CLICK_MARGIN_MS} ms | {verdict} |")


def talk_key_summary_rows(run):
    """Talk key to ear, one row per press, against the same call's steady delay (target: no
    more than 10 ms above it); trx has no talk key, so its mouth-to-ear stands beside."""
    presses = run.extras.get("talkkey")
    trx = run.lab_results.get(("clean", "trx"), {}).get("delay_median")
    trx_cell = f"{trx:.1f} ms (its mouth-to-ear, clean lab link; no talk key)" if is_number(trx) else "– (no talk key)"
    if not isinstance(presses, list):
        reason = presses.get("error") if isinstance(presses, dict) else "not run"
        return [SummaryRow(f"| talk key to ear (terminal key through tmux) | not measured: {reason} | {trx_cell} | – | – | – | "
                           f"≤ steady delay + {TALK_KEY_MARGIN_MS} ms | not judged |")]
    rows = []
    for p in presses:
        if "error" in p:
            rows.append(SummaryRow(f"| talk key to ear, {p['case']} | {p['error']} | {trx_cell} | – | – | – | "
                                   f"≤ steady delay + {TALK_KEY_MARGIN_MS} ms | **missed** |"))
            continue
        # Judged from when intercom got the key; both figures are shown.
        ok = talk_key_in_time(p)
        reached = (f"; the key reached intercom {p['key_reached_ms']:.1f} ms after tmux was told to type it, "
                   f"heard {p['seen_to_ear_ms']:.1f} ms after that") if "seen_to_ear_ms" in p else ""
        rows.append(SummaryRow(
            f"| talk key to ear (space through tmux, file to file, clean link), {p['case']} | {p['key_to_ear_ms']:.1f} ms "
            f"(steady mouth-to-ear of the same call {p['steady_ms']:.1f} ms; first sample sent from "
            f"{p['sent_from_ms']:+.1f} ms of the press{reached}) | {trx_cell} | – | – | – | "
            f"from the key's arrival ≤ steady delay + {TALK_KEY_MARGIN_MS} ms | {met(ok)} |"))
    return rows


def discovery_summary_row(run):
    disc = run.discovery
    if "joining_new" not in disc:
        return SummaryRow(f"| time from start to discovery | not measured: {discovery_unmeasured_reason(run)} | "
                          "– | – | – | – | ≤ 1 s | not judged |")
    every_trial = disc["joining_new"] + disc["joining_old"] + disc["together"]
    worst = max(every_trial) if every_trial else None
    missed, verdict = judged(worst, DISCOVERY_TARGET_S, higher_is_better=False)
    return SummaryRow(
        f"| time from start to discovery, LAN lab (median; worst of all trials) | a new peer finds one already there: "
        f"{median_seconds(disc['joining_new'])}; the one there finds the new one: {median_seconds(disc['joining_old'])}; "
        f"both start together: {median_seconds(disc['together'])}; worst {number(worst, '{:.3f}')} s | – (none) | "
        f"– (none) | – | – | ≤ 1 s | {verdict} |",
        Miss("discovery", None, worst, DISCOVERY_TARGET_S) if missed else None)


def wire_summary_rows(run):
    """Bytes on the wire per stream, talking and silent (a target for silence)."""
    duplex = run.duplex
    calls = [duplex.get(k, {}) for k in ("ours", "trx", "gstreamer")]
    no_dtx = duplex.get("ours-no-dtx", {})
    rows = []
    for part in ("talking", "silent"):
        ours, trx, gst = (wire_kbps(call, part) for call in calls)
        without_dtx = f" ({number(wire_kbps(no_dtx, part), '{:.1f}')} with `--no-dtx`)" if no_dtx else ""
        target, verdict, miss = "–", "–", None
        if part == "silent":
            missed, verdict = judged(ours, SILENT_WIRE_TARGET_KBPS, higher_is_better=False)
            target = f"≤ {SILENT_WIRE_TARGET_KBPS} kb/s, first syllable not clipped"
            miss = Miss("wire", part, ours, SILENT_WIRE_TARGET_KBPS) if missed else None
        rows.append(SummaryRow(
            f"| bytes on the wire per stream, {part}: kb/s with IPv4 + UDP headers | {number(ours)}{without_dtx} | "
            f"{number(trx)} | {number(gst)} | {ratio(ours, trx)} | {ratio(ours, gst)} | {target} | {verdict} |", miss))
    return rows


def pi_profile_summary_rows(run):
    """`--profile pi` against trx (issue 31): a full-duplex peer's CPU, a talking stream's bytes,
    and the clean link's delay with the speech it keeps."""
    duplex = run.duplex
    pi, trx = duplex.get("ours-pi", {}), duplex.get("trx", {})
    if not pi and ("clean", "ours-pi") not in run.lab_results:
        return []
    clean_factor = next(factor for link, _, factor in DELAY_AGAINST_TRX if link == "clean")
    figures = (
        ("CPU s per s, full-duplex peer, AEC and denoise on", peer_cpu(pi), peer_cpu(trx), CPU_TARGET_FACTOR, "{:.4f}"),
        ("bytes on the wire per stream, talking: kb/s", wire_kbps(pi, "talking"), wire_kbps(trx, "talking"),
         WIRE_AGAINST_TRX, "{:.1f}"),
        ("mouth-to-ear delay, clean link, lab devices, median (ms)", run.lab_figure("clean", "ours-pi", "delay_median"),
         run.lab_figure("clean", "trx", "delay_median"), clean_factor, "{:.1f}"),
    )
    rows = []
    for name, ours, theirs, factor, form in figures:
        ok = ours <= factor * theirs if is_number(ours) and is_number(theirs) else None
        rows.append(SummaryRow(
            f"| `--profile pi`: {name} | {number(ours, form)} | {number(theirs, form)} | – | {ratio(ours, theirs)} | – | "
            f"≤ {factor:g} × trx's | {'not judged' if ok is None else met(ok)} |"))
    pesq_pi, pesq_ours = run.lab_figure("clean", "ours-pi", "pesq"), run.lab_figure("clean", "ours", "pesq")
    rows.append(SummaryRow(
        f"| `--profile pi`: PESQ-WB, clean link, lab devices (against the default settings') | {number(pesq_pi, '{:.2f}')} | "
        f"{number(run.lab_figure('clean', 'trx', 'pesq'), '{:.2f}')} | – | – | – | reported (default: "
        f"{number(pesq_ours, '{:.2f}')}) | – |"))
    return rows
