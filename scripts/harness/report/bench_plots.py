"""The benchmark report's plots: delay and PESQ-WB per link for every implementation, and
the drift calls' delay over time."""
import numpy as np

from harness.judge.bench import PESQ_TARGETS
from harness.measure.bench_figures import is_number

from .bench_names import LAB_SHORT


def plots(outdir, run):
    """Draws the plots into outdir and returns their file names."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    outdir.mkdir(parents=True, exist_ok=True)
    made = [plot_delay_per_link(plt, outdir, run), plot_pesq_per_link(plt, outdir, run)]
    if any(len(d.get("times", [])) for d in run.drifts):
        made.append(plot_drift(plt, outdir, run))
    return made


def lab_figures(run, impl, key):
    """One figure of one implementation's device-to-device calls, link by link (NaN where missing)."""
    return np.array([run.lab_figure(link, impl, key) for link in run.lab_links], dtype=float)


def grouped_bars(run):
    """Each implementation's bar positions around the links' ticks, and the bars' width."""
    ticks = np.arange(len(run.lab_links))
    width = 0.8 / max(1, len(run.lab_impls))
    centre = (len(run.lab_impls) - 1) / 2
    return [(impl, ticks + (i - centre) * width) for i, impl in enumerate(run.lab_impls)], width


def finish_plot(plt, fig, ax, outdir, name, title, legend=None, grid=None):
    """Titles, labels and saves a plot; legend and grid take matplotlib's keyword arguments."""
    ax.set_title(title)
    ax.legend(**(legend or {}))
    ax.grid(alpha=0.3, **(grid or {}))
    fig.tight_layout()
    fig.savefig(outdir / name, dpi=100)
    plt.close(fig)
    return name


def plot_delay_per_link(plt, outdir, run):
    fig, ax = plt.subplots(figsize=(9, 4.5))
    bars, width = grouped_bars(run)
    for impl, xs in bars:
        median, p95 = lab_figures(run, impl, "delay_median"), lab_figures(run, impl, "delay_p95")
        ax.bar(xs, median, width, label=f"{LAB_SHORT[impl]} (median)")
        ax.errorbar(xs, median, yerr=[np.zeros_like(median), np.nan_to_num(np.maximum(p95 - median, 0))], fmt="none",
                    ecolor="black", capsize=3)
    device_path = run.device_path.get("delay_median")
    if is_number(device_path):
        ax.axhline(device_path, color="grey", linestyle="dotted", label=f"device path alone ({device_path:.0f} ms)")
    ax.set_xticks(np.arange(len(run.lab_links)), run.lab_links)
    ax.set_ylabel("mouth-to-ear delay, ms (bar: median, whisker: p95)")
    return finish_plot(plt, fig, ax, outdir, "delay-per-link.png",
                       "Delay per link, A's microphone device to B's speaker device (audio lab)",
                       legend=dict(fontsize=8), grid=dict(axis="y"))


def plot_pesq_per_link(plt, outdir, run):
    fig, ax = plt.subplots(figsize=(9, 4.5))
    bars, width = grouped_bars(run)
    for impl, xs in bars:
        ax.bar(xs, lab_figures(run, impl, "pesq"), width, label=LAB_SHORT[impl])
    for link, _, target in PESQ_TARGETS:
        if link in run.lab_links:
            k = run.lab_links.index(link)
            ax.hlines(target, k - 0.45, k + 0.45, colors="red", linestyles="dashed")
    ax.set_xticks(np.arange(len(run.lab_links)), run.lab_links)
    ax.set_ylim(1, 4.64)
    ax.set_ylabel("PESQ-WB (MOS-LQO); red dashes: the issue's targets")
    return finish_plot(plt, fig, ax, outdir, "pesq-per-link.png", "Speech quality per link (audio lab)",
                       legend=dict(fontsize=8), grid=dict(axis="y"))


def plot_drift(plt, outdir, run):
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for d in run.drifts:
        if not len(d.get("times", [])):
            continue
        ok = np.isfinite(d["delays"])
        ax.plot(d["times"][ok] / 60, d["delays"][ok], ".", ms=3, label=f"{d['ppm']:+d} ppm")
    ax.set_xlabel("minutes into the call")
    ax.set_ylabel("mouth-to-ear delay, ms (the relay's fixed delay taken out)")
    return finish_plot(plt, fig, ax, outdir, "drift.png",
                       "Delay with the peers' clocks ±500 ppm apart, file to file (intercom, 10 ms frames)")
