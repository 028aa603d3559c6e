"""What limits each figure that missed its target: one paragraph per miss the summary found,
from the run's own figures."""
from harness.judge.bench import FRAME_MS, PESQ_FILE_TARGET, RSS_TARGET_MB
from harness.measure.bench_figures import is_number, peer_cpu

from .bench_resources import cpu_groups, memory_groups
from .markdown import number


def unsteady_device_path(run, consequence=""):
    """A clause on the lab's device path when its own delay wandered by more than 5 ms in this run."""
    dev = run.device_path
    if not (is_number(dev.get("delay_max")) and dev["delay_max"] - dev["delay_min"] > 5):
        return ""
    return (f"; the lab's device path itself was unsteady in this run (its clicks came {dev['delay_min']:.0f}–"
            f"{dev['delay_max']:.0f} ms late){consequence}")


def explain_delay(run, miss):
    link, ours, trx = miss.link, miss.value, miss.against
    receiver = run.lab_results.get((link, "ours"), {}).get("receiver", {})
    file_delay = run.file_figure(link, "ours", "delay_median")
    return (f"- Delay, {link}: intercom {ours:.1f} ms against trx's {trx:.1f} ms ({ours / trx:.2f} ×). Of intercom's "
            f"delay, the lab's device path alone (the same {run.buffer_ms} ms device buffers, copied by `arecord | aplay`) "
            f"is {number(run.device_path.get('delay_median'))} ms; its receiver held a jitter-buffer target of "
            f"{number(receiver.get('target_delay_ms'))} ms"
            + (f" ({receiver['network_budget_ms']:.1f} ms for the spread of arrivals it measured; the rest is the "
               "playback period fetched ahead and a margin: a frame for FEC while the stream is robust, as in the "
               "silence at the call's end when the figures were read, and during low-delay speech only what packets "
               "wait for the speaker's next period)"
               if is_number(receiver.get("network_budget_ms")) else "")
            + (f" and its speaker's queue was {receiver['speaker_queue_ms']:.1f} ms"
               if is_number(receiver.get("speaker_queue_ms")) else "")
            + (f"; file to file, without devices, the same link gives {file_delay:.1f} ms" if is_number(file_delay) else "")
            + ". trx runs 16 ms device buffers and a 16 ms jitter buffer and barely conceals loss"
            + (f" (its PESQ-WB here: {number(run.lab_figure(link, 'trx', 'pesq'), '{:.2f}')})" if link != "clean" else "")
            + f"; intercom's {run.buffer_ms} ms device buffers (`--audio-buffer-ms`) and its adaptive jitter buffer are "
            "where the difference lies"
            + (f" (here {receiver.get('late')} packets came too late for it)" if receiver.get("late") else "")
            + unsteady_device_path(run) + ".")


def explain_pesq(run, miss):
    link = miss.link
    receiver = run.lab_results.get((link, "ours"), {}).get("receiver", {})
    file_pesq = run.file_figure(link, "ours", "pesq")
    clean_file_pesq = run.file_figure("clean", "ours", "pesq")
    return (f"- PESQ-WB, {link}: {miss.value:.2f} < {miss.against}: the receiver lost {receiver.get('lost', '?')} of "
            f"{(receiver.get('received') or 0) + (receiver.get('lost') or 0)} packets, recovered "
            f"{receiver.get('recovered_fec', '?')} with in-band FEC and concealed {receiver.get('concealed', '?')} with "
            f"Opus PLC ({receiver.get('late', '?')} late)"
            + (f"; file to file the same link scores {file_pesq:.2f}" if is_number(file_pesq) else "")
            + (f"; file to file on a clean link it scores {clean_file_pesq:.2f}, so what this call lost or delayed, not "
               "the encoder, holds it down (concealed and late frames are what PESQ punishes)"
               if is_number(clean_file_pesq) else "")
            + unsteady_device_path(run, ", so the machine's other load disturbed the lab's timing") + ".")


def explain_file_pesq(run, miss):
    receiver = run.file_results.get(("clean", "ours"), {}).get("receiver", {})
    ceiling = run.ceiling
    codec_alone = ""
    if ceiling:
        codec_alone = (f"; the codec alone with the same settings (10 ms frames, FEC on at 10 % expected loss) scores "
                       f"{ceiling[(10, True)]['pesq']:.2f}, without FEC {ceiling[(10, False)]['pesq']:.2f}, with 20 ms "
                       f"frames and FEC {ceiling[(20, True)]['pesq']:.2f} (all at 32 kb/s)")
    return (f"- PESQ-WB, clean, file to file: {miss.value:.2f} < {PESQ_FILE_TARGET} with no packet lost (receiver: "
            f"{receiver.get('lost', '?')} lost, {receiver.get('concealed', '?')} concealed at the start)"
            + codec_alone + ".")


def explain_drift(run, miss):
    return (f"- Delay drift: the delay moved by up to {miss.value:.1f} ms between the first and the last minute (the "
            f"settled p5–p95 spread was up to {number(miss.against)} ms), more than one {FRAME_MS} ms frame: the "
            "receiver's rate adjustment did not hold the delay at its target against the skew; see the plot below.")


def explain_cpu(run, miss):
    ours_off = peer_cpu(run.duplex.get("ours-no-aec-denoise", {}))

    def packets(name):
        rate = run.duplex.get(name, {}).get("talking", {}).get("datagrams_per_s")
        return rate if is_number(rate) and rate > 0 else None

    on, off, trx = packets("ours"), packets("ours-no-aec-denoise"), packets("trx")
    groups = cpu_groups(run.duplex.get("ours", {}).get("cpu_by_library_a"), {"intercom"})
    largest = "; ".join(f"{name} {percent:.0f} %" for name, percent in groups[:4])
    rates = ""
    if on:
        rates = f"; while talking A sent {on:.0f} datagrams/s with them on ({1000 / on:.1f} ms of audio each)"
        if off:
            rates += f" and {off:.0f}/s with them off"
        if trx:
            rates += f", trx {trx:.0f}/s"
    return (f"- CPU: a full-duplex intercom peer used {miss.value:.4f} s per s with AEC and denoise on, "
            f"{number(ours_off, '{:.4f}')} with them off, against {miss.against:.4f} for trx's tx + rx "
            f"({miss.value / miss.against:.2f} ×){rates}. "
            + (f"Where it went (\"Where a peer's CPU goes\"): {largest}." if largest else
               "Besides the echo canceller and denoiser, intercom runs two real-time audio threads and a network "
               "thread that seals and opens every packet, the resampler of the rate adjustment, and ALSA's pulse "
               "plugin inside the process as trx does."))


def explain_rss(run, miss):
    groups = memory_groups(run)
    parts = "; ".join(f"{name} {kb / 1024:.1f} MB" for name, kb in groups[:3]) if groups else "no breakdown measured"
    return (f"- RSS: {miss.value:.1f} MB > {RSS_TARGET_MB} MB. Largest parts of a full-duplex peer at its peak: {parts} "
            "(see \"Where a peer's memory goes\").")


def explain_discovery(run, miss):
    return (f"- Discovery: the slowest trial took {miss.value:.3f} s. A newly started peer publishes only after mDNS "
            "probing (three probes 250 ms apart, RFC 6762 §8.1, done by avahi-daemon), so the peers already on the LAN "
            "cannot see it sooner than about 0.8 s after it starts.")


def explain_file_delay(run, miss):
    result = run.file_results.get(("clean", "ours"), {})
    receiver, sender = result.get("receiver", {}), result.get("sender", {})
    mode = sender.get("codec_mode", "?")
    # A peer whose codec adapts (its mode is robust or low delay, not fixed) turns its loops every 5 ms.
    playback = {"robust": "the receiver's 5 ms playback period", "low-delay": "the receiver's 5 ms playback period",
                "fixed": "the receiver's playback period of one frame"}.get(receiver.get("codec_mode"),
                                                                             "the receiver's playback period")
    if mode == "low-delay":
        rest = (f"the 5 ms capture period and frame, the low-delay encoder's 2.5 ms lookahead, {playback} and the "
                "rate adjuster's lookahead")
    else:
        rest = (f"the 10 ms capture period and frame, the encoder's 6.5 ms lookahead (SILK and hybrid modes), "
                f"{playback} and the rate adjuster's lookahead")
    fixed = (" A file is sent in 10 ms SILK or hybrid frames with FEC (the codec adapts on a live microphone only), "
             "so the target holds a 10 ms frame of margin for FEC where low-delay CELT frames would need none."
             if mode != "low-delay" else "")
    return (f"- Delay, file to file: {miss.value:.1f} ms > {miss.against} ms. The receiver held a jitter-buffer target of "
            f"{number(receiver.get('target_delay_ms'))} ms (the sender's codec ended in mode {mode}); the rest is "
            f"{rest}.{fixed}")


def explain_wire(run, miss):
    return (f"- Silent stream: {miss.value:.1f} kb/s > {miss.against} kb/s on the wire; in silence the robust encoder's "
            "DTX should send a comfort-noise update every 400 ms and nothing else.")


EXPLAIN_MISS = {"delay": explain_delay, "pesq": explain_pesq, "pesq-file": explain_file_pesq, "drift": explain_drift,
                "cpu": explain_cpu, "rss": explain_rss, "discovery": explain_discovery,
                "delay-file": explain_file_delay, "wire": explain_wire}


def misses_section(run, misses):
    if not misses:
        return []
    return (["Where a figure misses its target, and what limits it:", ""]
            + [EXPLAIN_MISS[miss.kind](run, miss) for miss in misses] + [""])
