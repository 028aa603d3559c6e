"""The benchmark report's sections on the calls: device to device and file to file, link
by link; the codec alone, at each complexity and bitrate; and speech quality per utterance."""
from harness.measure import codec
from harness.measure.bench_figures import is_number

from .bench_names import FILE_LABEL, LAB_LABEL
from .markdown import number, table_header


PER_LINK_COLUMNS = ("link", "sender → receiver", "delay median", "p95", "min–max", "clicks",
                    "speech-window delay median / p95", "PESQ-WB", "STOI", "relay dropped",
                    "receiver: lost / FEC / PLC / late", "jitter buffer target")


def per_link_rows(results, links, impls, labels):
    """One table row per call: delay, quality and the receiver's counters."""
    lines = []
    for link in links:
        for impl in impls:
            call = results.get((link, impl))
            if call is None:
                continue
            if "error" in call:
                lines.append(f"| {link} | {labels[impl]} | could not run: {call['error']} |||||||||")
                continue
            receiver = call.get("receiver")
            if receiver:
                counters = (f"{receiver['lost']} / {receiver['recovered_fec']} / {receiver['concealed']} / "
                            f"{receiver['late']}")
                target = f"{receiver['target_delay_ms']:.1f} ms"
            else:
                counters = "not reported"
                target = "16 ms (`-j 16`)" if impl == "trx" else "60 ms (fixed)"
            relay = call.get("relay", {})
            lines.append(
                f"| {link} | {labels[impl]} | {number(call.get('delay_median'))} ms | {number(call.get('delay_p95'))} ms | "
                f"{number(call.get('delay_min'))}–{number(call.get('delay_max'))} | {call['clicks_found']}/{call['clicks_total']} | "
                f"{number(call.get('speech_delay_median'))} / {number(call.get('speech_delay_p95'))} ms | "
                f"{number(call.get('pesq'), '{:.2f}')} | {number(call.get('stoi'), '{:.3f}')} | "
                f"{relay.get('dropped', '?')} of {relay.get('received', '?')} | {counters} | {target} |")
    return lines


def device_path_link_row(run):
    """The device path alone as a row of the device-to-device table."""
    dev = run.device_path
    if not dev:
        return []
    if "error" in dev:
        return [f"| – | device path alone | could not run: {dev['error']} |||||||||"]
    return [f"| – | device path alone (`arecord \\| aplay`) | {number(dev.get('delay_median'))} ms | "
            f"{number(dev.get('delay_p95'))} ms | {number(dev.get('delay_min'))}–{number(dev.get('delay_max'))} | "
            f"{dev['clicks_found']}/{dev['clicks_total']} | {number(dev.get('speech_delay_median'))} / "
            f"{number(dev.get('speech_delay_p95'))} ms | {number(dev.get('pesq'), '{:.2f}')} | "
            f"{number(dev.get('stoi'), '{:.3f}')} | – | – | {run.buffer_ms} ms device buffers |"]


def device_to_device_section(run, images, plot_error):
    lines = ["## Device to device, per link", "",
             "A's microphone device to B's speaker device through the relay. Delay: each click found again at B's "
             "speaker (median, p95, range, clicks found/sent); then the delay of 0.5 s windows of speech aligned by "
             "cross-correlation (median / p95) as a cross-check. PESQ-WB and STOI: mean over the utterances.", "",
             *table_header(*PER_LINK_COLUMNS), *device_path_link_row(run),
             *per_link_rows(run.lab_results, run.lab_links, run.lab_impls, LAB_LABEL), ""]
    for image in images:
        if image != "drift.png":
            lines += [f"![{image[:-4]}](benchmarks/{image})", ""]
    if plot_error:
        lines += [f"Plots could not be drawn: {plot_error}", ""]
    injection = [call.get("injection_error_ms") for call in run.lab_results.values()
                 if is_number(call.get("injection_error_ms"))]
    if injection:
        lines += [f"Every click was found again in A's microphone channel of the bus within {max(injection):.2f} ms of "
                  "where the program put it, so no glitch of the injection passes for a delay.", ""]
    return lines


def file_to_file_section(run):
    lines = ["## File to file, per link", "",
             "Delay and quality as in the device-to-device table, with no device: A's file clock to B's file clock "
             "(see \"How it is measured\").", "",
             *table_header(*PER_LINK_COLUMNS),
             *per_link_rows(run.file_results, run.file_links, run.file_impls, FILE_LABEL), ""]
    return lines + codec_alone_section(run) + complexity_section(run) + bitrate_section(run)


def codec_alone_section(run):
    if not run.ceiling:
        return []
    return ["### Codec alone", "",
            "The ceiling a link cannot beat: the same utterances through libopus (GStreamer's `opusenc bitrate=32000 "
            "audio-type=voice frame-size=F [inband-fec=true packet-loss-percentage=10]` and `opusdec`), no network, no "
            f"jitter buffer. 32 kb/s is the anchors' bitrate; intercom's default is "
            f"{run.ctx['machine'].get('bitrate') or 'unknown'} b/s (`intercom talk --help`), with its FEC sized to the "
            "loss its peers report.", "",
            *table_header("frame", "in-band FEC", "PESQ-WB", "STOI"),
            *(f"| {c['frame']} ms | {'on, 10 % expected loss' if c['fec'] else 'off'} | {c['pesq']:.2f} | "
              f"{c['stoi']:.3f} |" for c in run.extras["ceiling"]), ""]


ENCODERS = (("robust", "robust"), ("low-delay", "low delay"), ("pi", "`--profile pi`"))


def pesq_cell(r):
    return number(r.get("pesq"), "{:.2f}")


def encoder_sweep_section(run, key, title, intro, setting_label, setting_text, figures):
    """A table of intercom's two encoders alone at each value of one setting (`key` in the
    bench's extras): `figures` are (column name, cell from a row) for each encoder."""
    if run.extras.get(f"{key}_error"):
        return [f"### {title}", "", f"Not measured: {run.extras[f'{key}_error']}.", ""]
    rows = run.extras.get(key)
    if not rows:
        return []
    by = {(r["encoder"], r[key]): r for r in rows}
    lines = [f"### {title}", "", intro, "",
             *table_header(setting_label, *(f"{label}: {name}" for _, label in ENCODERS for name, _ in figures))]
    for value in sorted({r[key] for r in rows}):
        cells = [cell(by.get((encoder, value), {})) for encoder, _ in ENCODERS for _, cell in figures]
        lines.append(f"| {setting_text(value)} | " + " | ".join(cells) + " |")
    return lines + [""]


def complexity_section(run):
    intro = ("intercom's encoders alone (GStreamer's `opusenc` with their settings: robust "
             f"`{' '.join(codec.COMPLEXITY_ENCODERS['robust'])}`, low delay "
             f"`{' '.join(codec.COMPLEXITY_ENCODERS['low-delay'])}`, `--profile pi` "
             f"`{' '.join(codec.COMPLEXITY_ENCODERS['pi'])}`) at each complexity: PESQ-WB of the utterances "
             "through the encoder and `opusdec`, and the encoder's CPU as a share of one core (encoding the utterances "
             "six times over, less the same pipeline without the encoder). intercom encodes at complexity 8 "
             "(`OpusEncoderConfiguration.complexity`).")
    return encoder_sweep_section(
        run, "complexity", "Opus complexity", intro, "complexity", str,
        (("PESQ-WB", pesq_cell),
         ("CPU % of a core", lambda r: number(100 * r["cpu_per_second"] if r else None, "{:.2f}"))))


def bitrate_section(run):
    intro = ("intercom's encoders alone, as above at complexity 8, at each bitrate: PESQ-WB and STOI of the "
             "utterances through the encoder and `opusdec`. intercom sends 96000 b/s (`--bitrate`), 48000 with "
             "`--profile pi`.")
    return encoder_sweep_section(
        run, "bitrate", "Opus bitrate", intro, "kb/s", lambda bitrate: str(bitrate // 1000),
        (("PESQ-WB", pesq_cell), ("STOI", lambda r: number(r.get("stoi"), "{:.3f}"))))


def speech_per_utterance_section(run):
    voices = run.ctx["voices"]
    lines = ["### Speech quality per utterance", "",
             "| call | link | sender → receiver | " + " | ".join(f"{v}: PESQ-WB / STOI" for v in voices) + " |",
             "|---|---|---|" + "---|" * len(voices)]
    for kind, results, links, impls, labels in (
            ("devices", run.lab_results, run.lab_links, run.lab_impls, LAB_LABEL),
            ("files", run.file_results, run.file_links, run.file_impls, FILE_LABEL)):
        for link in links:
            for impl in impls:
                call = results.get((link, impl))
                if not call or "error" in call:
                    continue
                scores = " | ".join(f"{number(u['pesq'], '{:.2f}')} / {number(u['stoi'], '{:.3f}')}"
                                    for u in call["utterances"])
                lines.append(f"| {kind} | {link} | {labels[impl]} | {scores} |")
    return lines + [""]
