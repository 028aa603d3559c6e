"""The figures taken from one call's audio: delay from the clicks, speech quality and delay
from the utterances, and the counters the call reported."""
import numpy as np

from . import signals
from .signals import RATE


def analyse(call, program, clicks, spans, impl):
    """Delay from the clicks, speech quality and delay from the utterances, counters.
    `call` is what runs.run_ours, runs.run_gst or lab.run_call returned."""
    in0 = call["in_start_ns"]
    output, out_times = call["output"], call["out_times"]
    in_times = in0 + np.asarray(clicks) * (1e9 / RATE)
    delays = signals.find_clicks(output, out_times, in_times)
    found = delays[~np.isnan(delays)]
    res = dict(click_delays=delays, clicks_found=int(found.size), clicks_total=len(clicks))
    if found.size:
        res.update(delay_median=float(np.median(found)), delay_p95=float(np.percentile(found, 95)),
                   delay_min=float(found.min()), delay_max=float(found.max()))
    guess = res.get("delay_median", 60.0)
    per_utterance, window_delays = [], []
    for voice, start, end in spans:
        ref = program[start:end]
        segment, delay, corr = signals.speech_segment(output, out_times, in0 + start * 1e9 / RATE, end - start, guess,
                                                      ref)
        pesq, stoi = signals.quality(ref, segment) if segment is not None else (float("nan"), float("nan"))
        per_utterance.append(dict(voice=voice, pesq=pesq, stoi=stoi, delay=delay, corr=corr))
        window_delays += signals.windowed_delays(output, out_times, program, in0, (start, end), guess)
    res["utterances"] = per_utterance
    res["pesq"] = float(np.nanmean([u["pesq"] for u in per_utterance])) if per_utterance else float("nan")
    res["stoi"] = float(np.nanmean([u["stoi"] for u in per_utterance])) if per_utterance else float("nan")
    if window_delays:
        res.update(speech_delay_median=float(np.median(window_delays)),
                   speech_delay_p95=float(np.percentile(window_delays, 95)), speech_windows=len(window_delays))
    res["relay"] = call.get("relay", {}).get("aToB", {})
    if "mic_offset" in call:
        # A lab call: the program as it reached A's microphone, checked click by click, so a
        # glitch of the injection cannot pass for the call's delay.
        mic_times = np.arange(len(call["mic"])) * (1e9 / RATE)
        mic_delays = signals.find_clicks(call["mic"], mic_times, in_times, max_delay_ms=50.0, search_ms=20.0)
        res["injection_error_ms"] = float(np.nanmax(np.abs(mic_delays))) if np.isfinite(mic_delays).any() else float("nan")
    if impl.startswith("ours") and "b" in call:
        receiver_stats = call["b"]
        res["receiver"] = {k: receiver_stats[k] for k in ("received", "lost", "recovered_fec", "concealed", "late",
                                                         "duplicated", "target_delay_ms", "jitter_ms")}
        streams = receiver_stats.get("streams") or [{}]
        res["receiver"].update(network_budget_ms=streams[0].get("network_budget_ms"),
                               speaker_queue_ms=receiver_stats.get("speaker_queue_ms"),
                               codec_mode=receiver_stats.get("codec_mode"))
        res["sender"] = {"codec_mode": call["a"].get("codec_mode")}
        res["cpu"] = dict(a=call["proc_a"].cpu_seconds / call["a"]["running_seconds"],
                          b=call["proc_b"].cpu_seconds / call["b"]["running_seconds"],
                          rss_a=call["proc_a"].max_rss_mb, rss_b=call["proc_b"].max_rss_mb)
    elif "proc_tx" in call:
        if "lateness_ms" in call:
            late = call["lateness_ms"]
            res["timing"] = dict(write_late_median=float(np.median(late)), write_late_p99=float(np.percentile(late, 99)),
                                 write_late_max=float(late.max()), reads=call["reads"],
                                 bytes_per_read=len(call["output"]) * 2 / max(1, call["reads"]))
        seconds = call["audio_seconds"]
        res["cpu"] = dict(tx=call["proc_tx"].cpu_seconds / seconds, rx=call["proc_rx"].cpu_seconds / seconds,
                          rss_tx=call["proc_tx"].max_rss_mb, rss_rx=call["proc_rx"].max_rss_mb)
    return res
