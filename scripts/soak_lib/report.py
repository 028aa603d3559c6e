"""The soak's report: report.md with every promise's verdict and figures, and plots."""
from pathlib import Path

import numpy as np

from soak_lib import judge

COLORS = {"A": "tab:blue", "B": "tab:orange", "C": "tab:green"}


def fmt_clock(s):
    return f"{int(s // 60):d}:{s % 60:04.1f}"


def shade(ax, soak):
    for f in soak.faults:
        t0 = (f["began"] - soak.t_start) / 60
        t1 = (f.get("clean_at") or f.get("restarted_at") or f.get("plugged_at") or f["ended"]) - soak.t_start
        ax.axvspan(t0, max(t1 / 60, t0 + 0.05), color="0.85", zorder=0)


def plots(out, soak):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(5, 1, figsize=(11, 14), sharex=True)
    for ax in axes:
        shade(ax, soak)
    for p in soak.peers:
        ss = [s for s in soak.samples if s["peer"] == p and "rss_mb" in s]
        t = np.array([(s["t"] - soak.t_start) / 60 for s in ss])
        # Each life of a restarted peer as its own line.
        pids = [s["pid"] for s in ss]
        for pid in dict.fromkeys(pids):
            m = np.array([x == pid for x in pids])
            lbl = p if pid == pids[0] else None
            axes[0].plot(t[m], [s["rss_mb"] for s, k in zip(ss, m) if k], color=COLORS[p], label=lbl)
            axes[1].plot(t[m], [s["fds"] for s, k in zip(ss, m) if k], color=COLORS[p], label=lbl)
            axes[1].plot(t[m], [s["threads"] for s, k in zip(ss, m) if k], color=COLORS[p], ls="--")
            cpu = np.array([s["cpu_s"] for s, k in zip(ss, m) if k])
            tt = np.array([s["t"] for s, k in zip(ss, m) if k])
            if len(cpu) > 1:
                axes[2].plot(t[m][1:], np.diff(cpu) / np.diff(tt), color=COLORS[p], label=lbl)
    axes[0].set_ylabel("RSS (MB)")
    axes[1].set_ylabel("fds (—), threads (--)")
    axes[2].set_ylabel("CPU s per s")
    for s in soak.peers:
        for r in soak.peers:
            if s == r:
                continue
            ev = judge.events(soak, s, r)
            t = [(e["t"] - soak.t_start) / 60 for e in ev if e["heard"]]
            d = [e["delay_ms"] for e in ev if e["heard"]]
            axes[3].plot(t, d, ".", ms=2, color=COLORS[s], label=f"{s}→{r}" if r == min(set(soak.peers) - {s}) else None)
            miss = [(e["t"] - soak.t_start) / 60 for e in ev if not e["heard"]]
            axes[3].plot(miss, [5] * len(miss), "|", color=COLORS[s], ms=6)
    axes[3].set_ylabel("click delay (ms)\n(ticks at 5: not heard)")
    axes[3].set_ylim(0, min(600, max(200, axes[3].get_ylim()[1])))
    for r in soak.peers:
        ss = [s for s in soak.samples if s["peer"] == r and s.get("streams")]
        for sender in soak.peers:
            pts = [((s["t"] - soak.t_start) / 60, s["streams"][sender]["target_delay_ms"]) for s in ss
                   if sender in s["streams"] and s["streams"][sender].get("target_delay_ms") is not None]
            if pts:
                axes[4].plot(*zip(*pts), color=COLORS[sender], lw=0.8)
        queue = [((s["t"] - soak.t_start) / 60, s["speaker_queue_ms"]) for s in ss if s.get("speaker_queue_ms") is not None]
        if queue:
            axes[4].plot(*zip(*queue), "--", color=COLORS[r], lw=0.8)
    axes[4].set_ylabel("jitter-buffer target (ms)\n(colour: sender)\nspeaker queue (--, colour: receiver)")
    axes[4].set_xlabel("minutes into the call (grey: a fault in progress)")
    for ax in axes[:4]:
        ax.legend(loc="upper right", fontsize=7, ncol=3)
    fig.tight_layout()
    fig.savefig(out / "soak.png", dpi=90)
    plt.close(fig)


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
