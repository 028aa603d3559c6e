"""Runs the acoustic lab's offline comparison and prints it as Markdown tables:

    scripts/lab/acoustic-score [--quick] [--processors passthrough,webrtc,...]
        [--command 'intercom bench-dsp --input-file {mic} --far-end-file {far} --output-file {out}'
         --command-name intercom] [--json FILE]

Echo: each room setup's echo scene (24 s of far-end talk, double talk from 14 to 19 s) and
the lid change of the office laptop. Noise: each noise kind at 0, 5 and 10 dB SNR (PESQ-WB and
STOI gains, and the active speech level that comes out).
Voice activation: a minute of each noise alone and ten short words in it at 10 dB SNR.
With --pulse, PulseAudio's own canceller on the office laptop's echo scene, in the audio lab.
Every signal is made from fixed seeds; the figures are what the processors did with them."""
import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from acoustic import levels, noises, processors, rooms, scenes, scores  # noqa: E402

SNRS = (0, 5, 10)
CHANGE = ("office-laptop", "office-laptop-lid")


def delays(procs):
    """Each processor's own delay, measured on dry speech (see scores.processing_delay)."""
    probe = levels.scaled_to(scenes.talk(scenes.NEAR_TALK, 6.0), scenes.NEAR_LEVEL_DB)
    return {p.name: scores.processing_delay(p.process, probe) for p in procs}


def echo_rows(procs, setups, lags):
    rows = []
    for setup in setups:
        scene = scenes.echo_scene(setup)
        for p in procs:
            if "echo" not in p.does:
                continue
            out, _ = p.process(scene.mic, scene.far)
            dt_erle, near_kept = scores.erle_double_talk(scene, out)
            pesq, stoi = scores.speech_quality(scene, out, "double_talk", lags[p.name])
            rows.append({"setup": setup, "processor": p.name, "erle_first_2s": scores.erle(scene.echo, out, scene.spans["first_2s"]),
                         "erle_converged": scores.erle(scene.echo, out, scene.spans["converged"]),
                         "erle_double_talk": dt_erle, "near_end_kept_db": near_kept, "pesq_double_talk": pesq,
                         "stoi_double_talk": stoi})
    return rows


def change_rows(procs):
    scene = scenes.change_scene(*CHANGE)
    rows = []
    for p in procs:
        if "echo" not in p.does or p.name == "passthrough":
            continue
        out, _ = p.process(scene.mic, scene.far)
        seconds, before, first = scores.reconvergence(scene, out)
        rows.append({"change": " to ".join(CHANGE), "processor": p.name, "erle_before": before,
                     "erle_first_second_after": first, "reconvergence_s": seconds})
    return rows


def noise_rows(procs, kinds, snrs, lags):
    rows = []
    for kind in kinds:
        for snr in snrs:
            scene = scenes.noise_scene(kind, snr)
            base = scores.speech_quality(scene, scene.mic, "speech")
            for p in procs:
                if "noise" not in p.does or p.name == "passthrough":
                    continue
                out, _ = p.process(scene.mic, scene.far)
                pesq, stoi = scores.speech_quality(scene, out, "speech", lags[p.name])
                start, end = scene.spans["speech"]
                rows.append({"noise": kind, "snr_db": snr, "processor": p.name, "pesq_in": base[0], "pesq_out": pesq,
                             "pesq_gain": pesq - base[0], "stoi_in": base[1], "stoi_out": stoi, "stoi_gain": stoi - base[1],
                             "speech_level_in_dbfs": scenes.NEAR_LEVEL_DB,
                             "active_level_out_dbfs": levels.active_level_db(out[start:end])})
    return rows


def vox_rows(procs, kinds):
    rows = []
    for kind in kinds:
        alone, words = scenes.vox_scenes(kind)
        for p in procs:
            if "vad" not in p.does:
                continue
            _, quiet = p.process(alone.mic, alone.far)
            _, talking = p.process(words.mic, words.far)
            lost = scores.onset_clipping(talking, words.spans["onsets"])
            rows.append({"noise": kind, "processor": p.name, "false_s_per_min": scores.false_transmission(quiet),
                         "onsets_clipped": sum(x > scores.CLIPPED_MS for x in lost), "onsets": len(lost),
                         "onset_ms_lost_median": float(np.median(lost))})
    return rows


def pulse_row(extended, tries=4):
    """PulseAudio's canceller in the lab: the first run whose recording could be placed on
    the scene's timeline (pulseanchor.py), and how many runs that took."""
    from acoustic import pulseanchor
    for attempt in range(1, tries + 1):
        row = pulseanchor.measure(CHANGE[0], extended)
        if row["placed_well"]:
            break
    return {**row, "runs": attempt}


def fmt(v):
    if v is None:
        return "–"
    if isinstance(v, float):
        return "–" if np.isnan(v) else ("∞" if np.isinf(v) else f"{v:.2f}")
    return str(v)


def table(rows, title):
    if not rows:
        return f"### {title}\n\n(no processor scored here)\n"
    keys = list(rows[0])
    lines = [f"### {title}", "", "| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(fmt(r[k]) for k in keys) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def chosen_processors(args):
    known = {p.name: p for p in processors.anchors()}
    procs = [known[n] for n in args.processors.split(",") if n]
    if args.command:
        does = tuple(args.command_does.split(","))
        procs.append(processors.Command(args.command, args.command_name, does))
    return procs


def main():
    ap = argparse.ArgumentParser(prog="acoustic-score", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="two room setups, one noise SNR (5 dB), three noises")
    ap.add_argument("--processors", default="passthrough,webrtc,webrtc-aec,webrtc-ns,rnnoise")
    ap.add_argument("--command", help="a processor command template ({mic} {far} {out}, optional {vad})")
    ap.add_argument("--command-name", default="command")
    ap.add_argument("--command-does", default="echo,noise", help="what the command is scored on")
    ap.add_argument("--pulse", action="store_true",
                    help="also PulseAudio's module-echo-cancel (webrtc; default and extended filter) in the audio lab, "
                         "on office-laptop's echo scene, in real time (about 30 s each)")
    ap.add_argument("--json", help="write every figure here too")
    args = ap.parse_args()
    procs = chosen_processors(args)
    setups = ["office-laptop", "kitchen-pi"] if args.quick else [s for s in rooms.names() if s != CHANGE[1]]
    kinds = ["fan", "babble", "keyboard"] if args.quick else list(noises.KINDS)
    snrs = (5,) if args.quick else SNRS
    started = time.time()
    lags = delays(procs)
    results = {"processing_delay_ms": [{"processor": k, "delay_ms": 1000 * v / scenes.RATE} for k, v in lags.items()],
               "echo": echo_rows(procs, setups, lags), "echo_path_change": change_rows(procs),
               "noise": noise_rows(procs, kinds, snrs, lags), "vox": vox_rows(procs, kinds)}
    if args.pulse:
        results["echo_pulseaudio_in_the_lab"] = [pulse_row(extended) for extended in (False, True)]
    for name, rows in results.items():
        print(table(rows, name))
    print(f"({time.time() - started:.0f} s)")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=float) + "\n")


if __name__ == "__main__":
    main()
