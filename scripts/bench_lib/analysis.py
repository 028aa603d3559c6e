"""The figures taken from one call's audio: delay from the clicks, speech quality and delay
from the utterances, and the counters the call reported."""
import numpy as np

from . import signals
from .signals import RATE


def analyse(r, program, clicks, spans, impl):
    """Delay from the clicks, speech quality and delay from the utterances, counters."""
    in0 = r["in_start_ns"]
    in_times = in0 + np.asarray(clicks) * (1e9 / RATE)
    delays = signals.find_clicks(r["output"], r["out_times"], in_times)
    found = delays[~np.isnan(delays)]
    res = dict(click_delays=delays, clicks_found=int(found.size), clicks_total=len(clicks))
    if found.size:
        res.update(delay_median=float(np.median(found)), delay_p95=float(np.percentile(found, 95)),
                   delay_min=float(found.min()), delay_max=float(found.max()))
    guess = res.get("delay_median", 60.0)
    per_utt, win = [], []
    for name, a, b in spans:
        ref = program[a:b]
        seg, d, corr = signals.speech_segment(r["output"], r["out_times"], in0 + a * 1e9 / RATE, b - a, guess, ref)
        p, s = signals.quality(ref, seg) if seg is not None else (float("nan"), float("nan"))
        per_utt.append(dict(voice=name, pesq=p, stoi=s, delay=d, corr=corr))
        win += signals.windowed_delays(r["output"], r["out_times"], program, in0, (a, b), guess)
    res["utterances"] = per_utt
    res["pesq"] = float(np.nanmean([u["pesq"] for u in per_utt])) if per_utt else float("nan")
    res["stoi"] = float(np.nanmean([u["stoi"] for u in per_utt])) if per_utt else float("nan")
    if win:
        res.update(speech_delay_median=float(np.median(win)), speech_delay_p95=float(np.percentile(win, 95)),
                   speech_windows=len(win))
    res["relay"] = r.get("relay", {}).get("aToB", {})
    if "mic_offset" in r:
        # A lab call: the program as it reached A's microphone, checked click by click, so a
        # glitch of the injection cannot pass for the call's delay.
        mic_times = np.arange(len(r["mic"])) * (1e9 / RATE)
        mic_delays = signals.find_clicks(r["mic"], mic_times, in_times, max_delay_ms=50.0, search_ms=20.0)
        res["injection_error_ms"] = float(np.nanmax(np.abs(mic_delays))) if np.isfinite(mic_delays).any() else float("nan")
    if impl.startswith("ours") and "b" in r:
        b = r["b"]
        res["receiver"] = {k: b[k] for k in ("received", "lost", "recovered_fec", "concealed", "late", "duplicated",
                                            "target_delay_ms", "jitter_ms")}
        res["cpu"] = dict(a=r["proc_a"].cpu_seconds / r["a"]["running_seconds"],
                          b=r["proc_b"].cpu_seconds / r["b"]["running_seconds"],
                          rss_a=r["proc_a"].max_rss_mb, rss_b=r["proc_b"].max_rss_mb)
    elif "proc_tx" in r:
        if "lateness_ms" in r:
            late = r["lateness_ms"]
            res["timing"] = dict(write_late_median=float(np.median(late)), write_late_p99=float(np.percentile(late, 99)),
                                 write_late_max=float(late.max()), reads=r["reads"],
                                 bytes_per_read=len(r["output"]) * 2 / max(1, r["reads"]))
        secs = r["audio_seconds"]
        res["cpu"] = dict(tx=r["proc_tx"].cpu_seconds / secs, rx=r["proc_rx"].cpu_seconds / secs,
                          rss_tx=r["proc_tx"].max_rss_mb, rss_rx=r["proc_rx"].max_rss_mb)
    return res
