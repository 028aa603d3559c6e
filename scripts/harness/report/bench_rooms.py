"""The benchmark report's section on the sound in real rooms (issue 29): the acoustic lab's
offline comparison of intercom's microphone chain with WebRTC, RNNoise and PulseAudio's
canceller, and the echo of a room live, call after call; each figure beside its target."""
import numpy as np

from harness.judge.rooms import (DOUBLE_TALK_PESQ, ECHO_REDUCTION_DB, NOISE_ANCHORS, NOISE_MARGIN, NOISE_SNR_DB,
                                 RECONVERGENCE_S, RESYNCS, SPEECH_LEVEL_DB, SPEECH_LEVEL_SNR_DB,
                                 SPEECH_LEVEL_TOLERANCE_DB, VOX_CLIPPED_PER_TEN, VOX_FALSE_S_PER_MIN, VOX_KINDS,
                                 double_talk_ok, every_run_at_least, noise_gain_ok, reconverged_ok, speech_level_ok,
                                 verdict)
from harness.measure.bench_figures import is_number
from harness.measure.rooms import LINEAR

from .markdown import number, table_header

OURS = "intercom"
# The anchors as the report names them.
NAMES = {"passthrough": "the microphone untouched", "webrtc": "WebRTC (AEC3 + NS)", "webrtc-aec": "WebRTC AEC3 alone",
         "webrtc-ns": "WebRTC NS alone", "rnnoise": "RNNoise", OURS: "intercom",
         LINEAR: "intercom, `--no-echo-distortion`",
         "pulse-webrtc": "PulseAudio's canceller", "pulse-webrtc-extended": "PulseAudio's canceller, extended filter"}
OFFICE, KITCHEN = "office-laptop", "kitchen-pi"


def rooms_section(run):
    offline, offline_error = run.extras.get("rooms_offline"), run.extras.get("rooms_offline_error")
    live = run.extras.get("rooms_live") or []
    lines = ["## The sound in real rooms", "",
             "Issue 29's figures, side by side on the same seeded signals (Docs/acoustic-lab.md has the rooms, "
             "the noises and how each figure is scored). **Offline**: `scripts/lab/acoustic-score` runs each "
             "scene through intercom's live microphone chain (`intercom bench-dsp` with the far end as the echo "
             "canceller's reference: alignment, SpeexDSP's canceller and preprocessor, the key click suppressor, "
             "the voice detector, as a live microphone has them; on the echo scenes also with `--no-echo-distortion`, "
             "the linear canceller alone, for a speaker that does not distort) and through the anchors: WebRTC's audio "
             "processing (`pywebrtc-audio`: AEC3, its noise suppressor at level 1, its VAD), RNNoise "
             "(`pyrnnoise`), and PulseAudio's `module-echo-cancel` (webrtc, gain controls off) in real time in "
             "the audio lab on the office laptop's echo scene. **Live**: two daemons in the audio lab, B's "
             "speaker reaching B's microphone through the lab's real-time acoustic path (a soft-clipping "
             "loudspeaker and the room's response); what A hears back with B's canceller on against off "
             "(`scripts/room-echo`), idle and with one core kept busy.", ""]
    if offline is None:
        lines += [f"Offline figures not measured: {offline_error or 'the step did not run'}.", ""]
        offline = {}
    lines += summary(offline, live) + echo_tables(offline) + noise_table(offline) + vox_table(offline)
    lines += live_table(live)
    return lines


def rows_of(offline, key, **match):
    return [r for r in offline.get(key, []) if all(r.get(k) == v for k, v in match.items())]


def one(offline, key, **match):
    rows = rows_of(offline, key, **match)
    return rows[0] if rows else {}


def runs_of(live, room, busy, change=False):
    return [r for r in live if "error" not in r and r.get("room") == room and r.get("busy") == busy
            and bool(r.get("change")) == change]


def spread(values, pattern="{:.1f}"):
    """least / median / most of the measured values, or a dash."""
    values = [v for v in values if is_number(v)]
    if not values:
        return "–"
    if len(values) == 1:
        return pattern.format(values[0])
    return " / ".join(pattern.format(v) for v in (min(values), float(np.median(values)), max(values)))


def summary(offline, live):
    lines = ["### Against issue 29's targets", "",
             *table_header("figure", "intercom", "PulseAudio's canceller", "WebRTC", "RNNoise", "target", "verdict")]
    for busy in (False, True):
        for room in (OFFICE, KITCHEN):
            runs = runs_of(live, room, busy)
            reductions = [r.get("converged_db") for r in runs]
            shown = spread(reductions) + (" dB (least / median / most)" if len(runs) > 1 else " dB") if runs else "–"
            lines.append(f"| echo reduced in the room, live, {room}, {'one core busy' if busy else 'idle'} "
                         f"({plural(len(runs), 'run')}) | {shown} | – | – | – | ≥ {ECHO_REDUCTION_DB:.0f} dB every run | "
                         f"{verdict(every_run_at_least(reductions, ECHO_REDUCTION_DB))} |")
    busy_runs = [r for r in live if r.get("busy") and is_number(r.get("resyncs"))]
    resyncs = sum(r["resyncs"] for r in busy_runs)
    lines.append(f"| echo reference re-syncs in those calls with a core busy | "
                 f"{resyncs if busy_runs else '–'} in {plural(len(busy_runs), 'call')} | – | – | – | {RESYNCS} | "
                 f"{verdict(resyncs <= RESYNCS if busy_runs else None)} |")
    for setup in (OFFICE, KITCHEN):
        ours, webrtc = one(offline, "echo", setup=setup, processor=OURS), one(offline, "echo", setup=setup, processor="webrtc")
        pulse = one(offline, "echo_pulseaudio_in_the_lab", setup=setup, processor="pulse-webrtc-extended")
        lines.append(f"| echo reduced offline, {setup}: converged / first 2 s (ERLE) | "
                     f"{number(ours.get('erle_converged'))} / {number(ours.get('erle_first_2s'))} dB | "
                     f"{pair(pulse, 'erle_converged', 'erle_first_2s', ' dB (extended filter)')} | "
                     f"{pair(webrtc, 'erle_converged', 'erle_first_2s', ' dB')} | – | reported | – |")
    ours = one(offline, "echo", setup=OFFICE, processor=OURS)
    webrtc = one(offline, "echo", setup=OFFICE, processor="webrtc")
    pulses = rows_of(offline, "echo_pulseaudio_in_the_lab", setup=OFFICE)
    best_pulse = max((p.get("pesq_double_talk") for p in pulses if is_number(p.get("pesq_double_talk"))), default=None)
    lines.append(f"| near end's PESQ-WB during double talk, {OFFICE} (untouched: "
                 f"{number(one(offline, 'echo', setup=OFFICE, processor='passthrough').get('pesq_double_talk'), '{:.2f}')}) | "
                 f"{number(ours.get('pesq_double_talk'), '{:.2f}')} | "
                 f"{' / '.join(number(p.get('pesq_double_talk'), '{:.2f}') for p in pulses) or '–'} | "
                 f"{number(webrtc.get('pesq_double_talk'), '{:.2f}')} | – | ≥ {DOUBLE_TALK_PESQ} and above PulseAudio's | "
                 f"{verdict(double_talk_ok(ours.get('pesq_double_talk'), best_pulse))} |")
    linear = one(offline, "echo", setup=OFFICE, processor=LINEAR)
    if linear:
        lines.append(f"| the same with `--no-echo-distortion` (the linear canceller alone, for a speaker that does "
                     f"not distort) | {number(linear.get('pesq_double_talk'), '{:.2f}')} | – | – | – | reported | – |")
    change = one(offline, "echo_path_change", processor=OURS)
    change_webrtc = one(offline, "echo_path_change", processor="webrtc")
    lines.append(f"| echo path changed (the lid moved), offline: back within 6 dB of before | "
                 f"{reconverged(change)} | – | {reconverged(change_webrtc)} | – | ≤ {RECONVERGENCE_S:g} s | "
                 f"{verdict(reconverged_ok(change.get('reconvergence_s')) if change else None)} |")
    lid = runs_of(live, OFFICE, False, change=True)
    if lid:
        backs = [r.get("back_within_s") for r in lid]
        worst = None if any(b is None for b in backs) else max(backs)
        lines.append(f"| echo path changed (the lid moved), live, {OFFICE}: back within 6 dB of before or at 30 dB "
                     f"({plural(len(lid), 'run')}) | {', '.join(seconds(b) for b in backs)} | – | – | – | ≤ {RECONVERGENCE_S:g} s | "
                     f"{verdict(False if worst is None else reconverged_ok(worst))} |")
    for kind in sorted({r["noise"] for r in offline.get("noise", [])}, key=kind_order):
        ours = one(offline, "noise", noise=kind, snr_db=NOISE_SNR_DB, processor=OURS).get("pesq_gain")
        anchors = {p: one(offline, "noise", noise=kind, snr_db=NOISE_SNR_DB, processor=p).get("pesq_gain")
                   for p in NOISE_ANCHORS}
        best = max((v for v in anchors.values() if is_number(v)), default=None)
        lines.append(f"| noise suppression, PESQ-WB gain at {NOISE_SNR_DB} dB SNR: {kind} | {number(ours, '{:+.2f}')} | – | "
                     f"{number(anchors['webrtc'], '{:+.2f}')} (NS alone {number(anchors['webrtc-ns'], '{:+.2f}')}) | "
                     f"{number(anchors['rnnoise'], '{:+.2f}')} | ≥ the best anchor's − {NOISE_MARGIN} | "
                     f"{verdict(noise_gain_ok(ours, best))} |")
    for kind in sorted({r["noise"] for r in offline.get("vox", [])}, key=kind_order):
        ours = one(offline, "vox", noise=kind, processor=OURS)
        webrtc, rnnoise = one(offline, "vox", noise=kind, processor="webrtc"), one(offline, "vox", noise=kind, processor="rnnoise")
        judged = kind in VOX_KINDS
        false_ok = None if not judged or not is_number(ours.get("false_s_per_min")) else \
            ours["false_s_per_min"] <= VOX_FALSE_S_PER_MIN
        lines.append(f"| VOX on a minute of {kind} alone: seconds sent | {number(ours.get('false_s_per_min'))} | – | "
                     f"{number(webrtc.get('false_s_per_min'))} | {number(rnnoise.get('false_s_per_min'))} | "
                     f"{f'≤ {VOX_FALSE_S_PER_MIN:g} s' if judged else 'reported'} | {verdict(false_ok) if judged else '–'} |")
    vox = rows_of(offline, "vox", processor=OURS)
    if vox:
        clipped = [r for r in vox if r["noise"] in VOX_KINDS]
        worst = max((r["onsets_clipped"] / max(1, r["onsets"]) for r in clipped), default=None)
        lines.append(f"| VOX: words whose onset was clipped, of ten in each noise ({', '.join(r['noise'] for r in vox)}) | "
                     f"{', '.join(str(r['onsets_clipped']) for r in vox)} | – | "
                     f"{', '.join(str(one(offline, 'vox', noise=r['noise'], processor='webrtc').get('onsets_clipped', '–')) for r in vox)} | "
                     f"{', '.join(str(one(offline, 'vox', noise=r['noise'], processor='rnnoise').get('onsets_clipped', '–')) for r in vox)} | "
                     f"≤ {VOX_CLIPPED_PER_TEN} in 10 ({', '.join(VOX_KINDS)}) | "
                     f"{verdict(None if worst is None else worst <= VOX_CLIPPED_PER_TEN / 10)} |")
    ours_noise = rows_of(offline, "noise", processor=OURS)
    snr = SPEECH_LEVEL_SNR_DB if any(r["snr_db"] == SPEECH_LEVEL_SNR_DB for r in ours_noise) else \
        max((r["snr_db"] for r in ours_noise), default=None)
    levels = [r.get("active_level_out_dbfs") for r in ours_noise if r["snr_db"] == snr]
    levels = [v for v in levels if is_number(v)]
    if levels:
        worst = max(levels, key=lambda v: abs(v - SPEECH_LEVEL_DB))
        lines.append(f"| active speech level leaving the microphone's chain (P.56; the noise scenes at "
                     f"{snr} dB SNR, speech in at {number(first(offline, 'speech_level_in_dbfs'))} dBFS) | "
                     f"{spread(levels)} dBFS | – | – | – | {SPEECH_LEVEL_DB:g} ± {SPEECH_LEVEL_TOLERANCE_DB:g} dBov | "
                     f"{verdict(speech_level_ok(worst))} |")
    lines += ["", "The talk key's own click, as sent, is measured by `TalkKeyClickTests` (seeded signals; "
              "architecture.md, \"The talk key's click\"), not here. The speech level is the microphone chain's "
              "output, before Opus and the far end's limiter, which leave speech at that level untouched "
              "(architecture.md, \"Levels\"); each scene has 8.5 s of speech, the AGC's first hearing of it.", ""]
    return lines


def first(offline, key):
    values = [r[key] for r in offline.get("noise", []) if key in r]
    return values[0] if values else None


def kind_order(kind):
    order = ("fan", "babble", "keyboard", "radio", "clatter")
    return order.index(kind) if kind in order else len(order)


def pair(row, a, b, unit):
    return f"{number(row.get(a))} / {number(row.get(b))}{unit}" if row else "–"


def plural(count, noun):
    return f"{count} {noun}" + ("" if count == 1 else "s")


def reconverged(row):
    """An offline path change's figure: a dash when not measured, and when the echo had not
    been cancelled before the change (nothing to come back to)."""
    if not row:
        return "–"
    if row.get("reconvergence_s") is None:
        return "not converged before"
    return seconds(row["reconvergence_s"])


def seconds(s):
    if s is None:
        return "never"
    return "never" if np.isinf(s) else f"{s:.2f} s"


def echo_tables(offline):
    lines = []
    echo = offline.get("echo", [])
    if echo:
        lines += ["### Echo, offline, per room", "",
                  "Far-end talk through each room at −20 dBFS active, the near end at −28 dBFS at the microphone "
                  "talking over it from 14 to 19 s. ERLE in dB: the echo's energy over what is left of it (in "
                  "double talk a lower bound: whatever of the near end was changed counts as echo).", "",
                  *table_header("room", "processor", "ERLE first 2 s", "converged", "in double talk", "near end kept",
                                "near end's PESQ-WB in double talk", "its STOI")]
        for r in echo + offline.get("echo_pulseaudio_in_the_lab", []):
            lines.append(f"| {r['setup']} | {NAMES.get(r['processor'], r['processor'])} | {number(r['erle_first_2s'])} | "
                         f"{number(r['erle_converged'])} | {number(r['erle_double_talk'])} | "
                         f"{number(r['near_end_kept_db'], '{:+.1f}')} dB | {number(r['pesq_double_talk'], '{:.2f}')} | "
                         f"{number(r['stoi_double_talk'], '{:.2f}')} |")
        lines.append("")
    change = offline.get("echo_path_change", [])
    if change:
        lines += ["### The echo path changes, offline", "",
                  "The office laptop's echo path becomes the lid-moved one 10 s into far-end talk; ERLE in 250 ms "
                  "windows, reconverged when a second's worth is back within 6 dB of before (or at 30 dB).", "",
                  *table_header("processor", "ERLE before", "first second after", "back in")]
        lines += [f"| {NAMES.get(r['processor'], r['processor'])} | {number(r['erle_before'])} dB | "
                  f"{number(r['erle_first_second_after'])} dB | {reconverged(r)} |" for r in change]
        lines.append("")
    return lines


def noise_table(offline):
    noise = offline.get("noise", [])
    if not noise:
        return []
    processors = [p for p in (OURS, "webrtc", "webrtc-ns", "rnnoise") if any(r["processor"] == p for r in noise)]
    lines = ["### Noise suppression, offline", "",
             "The near end talking for 8.5 s after 5 s of the noise alone, at each SNR; PESQ-WB and STOI of the "
             "output against the near end alone, as gains over the untouched microphone's.", "",
             *table_header("noise", "SNR", "microphone: PESQ-WB / STOI",
                           *(f"{NAMES[p]}: gain" for p in processors), "intercom's speech level out")]
    keys = sorted({(r["noise"], r["snr_db"]) for r in noise}, key=lambda k: (kind_order(k[0]), k[1]))
    for kind, snr in keys:
        rows = {p: one(offline, "noise", noise=kind, snr_db=snr, processor=p) for p in processors}
        base = next(iter(rows.values()))
        gains = [f"{number(r.get('pesq_gain'), '{:+.2f}')} / {number(r.get('stoi_gain'), '{:+.2f}')}" for r in rows.values()]
        lines.append(f"| {kind} | {snr} dB | {number(base.get('pesq_in'), '{:.2f}')} / {number(base.get('stoi_in'), '{:.2f}')} | "
                     + " | ".join(gains) + f" | {number(rows[processors[0]].get('active_level_out_dbfs'))} dBFS |")
    return lines + [""]


def vox_table(offline):
    vox = offline.get("vox", [])
    if not vox:
        return []
    lines = ["### Voice activation, offline", "",
             "A minute of each noise alone, and ten short words in it at 10 dB SNR. The anchors' detectors "
             "transmit from a probability of 0.5 with a 200 ms hang-over and no pre-roll; intercom's is its VOX "
             "gate as shipped. A word is clipped when more than its first few milliseconds were not sent.", "",
             *table_header("noise", "processor", "seconds sent a minute of noise alone", "onsets clipped",
                           "median ms lost at an onset")]
    for r in sorted(vox, key=lambda r: kind_order(r["noise"])):
        lines.append(f"| {r['noise']} | {NAMES.get(r['processor'], r['processor'])} | {number(r['false_s_per_min'])} | "
                     f"{r['onsets_clipped']} of {r['onsets']} | {number(r['onset_ms_lost_median'])} |")
    return lines + [""]


def live_table(live):
    lines = ["### Echo in a room, live", ""]
    if not live:
        return lines + ["Not measured: the step did not run.", ""]
    lines += ["Each run: a 14 s call with B's canceller on and one with it off; A hears back the difference "
              "(dB, over the call's second half and its first two seconds). B's statistics give the echo "
              "reference's re-syncs and the moves it followed. A run in which the lab's path moved the echo itself "
              "(it fell behind B's speaker by more than it had queued for B's microphone) was made again, twice at most.", "",
              *table_header("room", "machine", "run", "echo reduced", "first 2 s", "heard back without cancelling",
                            "re-syncs", "moves followed", "after the lid moved: before, back within 6 dB or at 30 dB")]
    counts = {}
    for r in live:
        if "error" in r:
            lines.append(f"| {r.get('room')} | {'one core busy' if r.get('busy') else 'idle'} | – | "
                         f"not measured: {r['error']} | | | | | |")
            continue
        key = (r["room"], r["busy"], bool(r.get("change")))
        counts[key] = counts.get(key, 0) + 1
        after = "–" if not r.get("change") else f"{number(r.get('before_db'))} dB, {seconds(r.get('back_within_s'))}"
        tries = r.get("lab_tries", 1)
        run = f"{counts[key]}" + (f" (made {tries} times: the lab's path moved the echo"
                                  f"{' in each' if r.get('lab_moved_echo') else ''})" if tries > 1 or r.get("lab_moved_echo") else "")
        lines.append(f"| {r['room']} | {'one core busy' if r['busy'] else 'idle'} | {run} | "
                     f"{number(r['converged_db'])} dB | {number(r['first_2s_db'])} dB | "
                     f"{number(r['heard_back_off_dbfs'])} dBFS | {r.get('resyncs')} | {r.get('moves')} | {after} |")
    return lines + [""]
