"""The soak's report: report.md with every promise's verdict and figures, and plots."""
from pathlib import Path

import numpy as np

from harness.judge import soak as judge

from .soak_plots import plots


def fmt_clock(s):
    return f"{int(s // 60):d}:{s % 60:04.1f}"


def counters(soak):
    """Each receiver's counters per sender, from its last status of each life."""
    rows = []
    for r in soak.peers:
        ss = [s for s in soak.samples if s["peer"] == r and s.get("streams")]
        last = {}
        for s in ss:
            for sender, st in s["streams"].items():
                last[(s["pid"], sender)] = st
        for (pid, sender), st in last.items():
            rows.append((r, pid, sender, st))
    return rows


def write(out, soak, results, meta):
    out = Path(out)
    try:
        plots(out, soak)
        plot_note = "![soak](soak.png)"
    except Exception as e:  # noqa: BLE001
        plot_note = f"(plots failed: {e})"
    failed = [r for r in results if r["verdict"] == "failed"]
    lines = [
        "# Soak report", "",
        f"`{meta['command']}` — {meta['started']}, commit `{meta['commit']}`, {meta['machine']}; load average "
        f"{' '.join(f'{x:.2f}' for x in meta['load'][0])} at the start, {' '.join(f'{x:.2f}' for x in meta['load'][1])} "
        "at the end.", "",
        f"**{'FAILED' if failed else 'PASSED'}**: {len(results) - len(failed)} of {len(results)} checks passed"
        + (f"; failed: {', '.join(r['promise'] for r in failed)}" if failed else "") + ".", "",
        "Three `intercom daemon` peers (A, B, C), each with its own state directory, paired with `intercom pair` codes, "
        "each on its own audio-lab microphone and speaker (all six on one bus, recorded on one clock). Every pair of peers "
        "talks through its own `intercom relay` on loopback; a link profile change restarts the relays on the same ports. "
        "Click probes: each microphone gets a 10 ms chirp every 0.6 s, in its own band and time slot; each other speaker "
        "is searched for it (matched filter, up to 0.58 s later). Every 2 s: RSS, descriptors, threads and CPU from "
        "/proc, and `intercom status --json` (per-sender delay, jitter-buffer target, counters; the speaker queue).", "",
    ]
    for n in soak.notes:
        lines.append(f"- note: {n}")
    lines += ["", plot_note, "", "## Promises", "", "| check | figure | verdict | how it was judged |", "|---|---|---|---|"]
    for r in results:
        v = f"**{r['verdict']}**" if r["verdict"] == "failed" else r["verdict"]
        lines.append(f"| {r['promise']} | {r['figure']} | {v} | {r['how']} |")
    lines += ["", "## Faults as they happened", "", "| planned (s) | began (m:s) | fault | happened | details |",
              "|---|---|---|---|---|"]
    for f in soak.faults:
        det = {k: v for k, v in f.items() if k in ("exit", "log", "error", "device_during", "status_noticed", "why_not")}
        if "restart" in f:
            det["avahi pid"] = f"{f['restart']['old_pid']} → {f['restart']['new_pid']}"
        lines.append(f"| {f['planned_at']:.0f} | {fmt_clock(f['began'] - soak.t_start)} | {judge.fault_name(f)} | "
                     f"{f.get('happened')} | {str(det).replace('|', '/')} |")
    lines += ["", "## Receivers' counters (last status of each daemon's life)", "",
              "| receiver | pid | sender | received | lost | FEC | concealed | late | target ms | delay ms |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for r, pid, sender, st in counters(soak):
        lines.append(f"| {r} | {pid} | {sender} | {st.get('received')} | {st.get('lost')} | {st.get('recovered_fec')} | "
                     f"{st.get('concealed')} | {st.get('late')} | {st.get('target_delay_ms', 0):.1f} | "
                     f"{st.get('current_delay_ms', 0):.1f} |")
    lines += ["", "## Click probes", "", "| sender → receiver | clicks | heard | delay median | p95 | max |",
              "|---|---|---|---|---|---|"]
    for s in soak.peers:
        for r in soak.peers:
            if s == r:
                continue
            ev = judge.events(soak, s, r)
            d = np.array([e["delay_ms"] for e in ev if e["heard"]])
            if len(d):
                lines.append(f"| {s} → {r} | {len(ev)} | {len(d)} | {np.median(d):.1f} ms | {np.percentile(d, 95):.1f} ms "
                             f"| {d.max():.1f} ms |")
            else:
                lines.append(f"| {s} → {r} | {len(ev)} | 0 | – | – | – |")
    lines += ["", "Raw figures: samples.json (every sample, click and fault; `scripts/soak --judge-again` judges them again); logs in work/.", ""]
    (out / "report.md").write_text("\n".join(lines))
