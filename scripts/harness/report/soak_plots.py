"""The soak report's plots (soak.png): each peer's memory, descriptors, threads and CPU,
every pair's click delays, and the receivers' jitter-buffer targets and speaker queues, with
the faults shaded."""
import numpy as np

from harness.judge import soak as judge

COLORS = {"A": "tab:blue", "B": "tab:orange", "C": "tab:green"}


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
