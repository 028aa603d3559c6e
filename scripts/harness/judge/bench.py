"""The benchmark's targets (issues 8 and 14), and how a measured figure is held against one.
The report's summary prints each figure next to the verdict judged here."""
from typing import NamedTuple

from harness.measure.bench_figures import is_number

FRAME_MS = 10
FULL_DRIFT_SECONDS = 1800  # the drift target is for a 30-minute call
# Mouth-to-ear delay device to device against trx's, by link: at most this share of it. On the
# lossy link the speech must also be far better: PESQ-WB at least PESQ_BETTER_THAN_TRX above trx's.
DELAY_AGAINST_TRX = (("clean", "mouth-to-ear delay, clean link, same lab devices, median", 0.6),
                     ("loss10-jitter30", "mouth-to-ear delay at 10 % loss + 30 ms ± 15 ms jitter, median", 0.8))
PESQ_BETTER_THAN_TRX = 0.5
# The speech targets, device to device: PESQ-WB at least this on these links.
PESQ_TARGETS = (("loss5", "PESQ-WB at 5 % loss, lab devices", 3.8),
                ("loss10-jitter30", "PESQ-WB at 10 % loss + 30 ms jitter, lab devices", 3.3),
                ("bursty", "PESQ-WB, bursty loss, lab devices", 3.0))
PESQ_FILE_TARGET = 3.8
FILE_DELAY_TARGET_MS = 25
SILENT_WIRE_TARGET_KBPS = 8
CPU_TARGET_FACTOR = 1.0  # of trx's tx + rx; 0.6 is the next goal
RSS_TARGET_MB = 20
# A talking stream's bytes on the wire with `--profile pi`, against trx's (issue 31).
WIRE_AGAINST_TRX = 2.0
DISCOVERY_TARGET_S = 1.0
# The first click of a call, and speech after a talk key press, may come this much later than
# the same call's steady delay.
FIRST_CLICK_MARGIN_MS = 10
TALK_KEY_MARGIN_MS = 10


class Miss(NamedTuple):
    """A figure that missed its target: which one, on which link, the figure and what it was held against."""
    kind: str
    link: object
    value: float
    against: float


def met(ok):
    return "met" if ok else "**missed**"


def judged(value, target, higher_is_better):
    """Whether a measured value missed its target, and the verdict to print ("–" when unmeasured)."""
    if not is_number(value):
        return False, "–"
    missed = value < target if higher_is_better else value > target
    return missed, met(not missed)


def delay_against_trx(ours, trx, factor, pesq_ours=None, pesq_trx=None, lossy=False):
    """Whether intercom's delay is within `factor` of trx's and, on a lossy link, its speech
    far better than trx's. None when there is no pair of delays to judge."""
    if not (is_number(ours) and is_number(trx)):
        return None
    ok = ours <= factor * trx
    if lossy:
        better = is_number(pesq_ours) and is_number(pesq_trx) and pesq_ours >= pesq_trx + PESQ_BETTER_THAN_TRX
        ok = ok and better
    return ok


def drift_within_frame(worst_change_ms):
    """Whether the delay moved by no more than a frame over the drift calls (None: not measured)."""
    return worst_change_ms <= FRAME_MS if is_number(worst_change_ms) else None


def cpu_against_trx(ours, trx):
    """Whether a full-duplex peer's CPU is within the target share of trx's tx + rx (None: not both measured)."""
    return ours <= CPU_TARGET_FACTOR * trx if is_number(ours) and is_number(trx) else None


def largest_rss(run, duplex_rss):
    """The peak RSS the target is held against: the largest of any intercom process of the run
    (the full-duplex peer's, and each peer's of every call)."""
    calls = list(run.lab_results.values()) + list(run.file_results.values())
    every_rss = [duplex_rss] + [call.get("cpu", {}).get(k) for call in calls for k in ("rss_a", "rss_b")]
    every_rss = [x for x in every_rss if is_number(x)]
    return max(every_rss) if every_rss else None


def first_click_in_time(excess_ms):
    """Whether a call's first click came within the margin of its median (None: not measured)."""
    return None if excess_ms is None else excess_ms <= FIRST_CLICK_MARGIN_MS


def talk_key_in_time(press):
    """Whether speech after a talk key press reached the ear within the margin of the call's
    steady delay, counted from when intercom got the key: tmux's own client start is the
    benchmark's, not a keyboard's."""
    return press.get("seen_to_ear_ms", press["key_to_ear_ms"]) <= press["steady_ms"] + TALK_KEY_MARGIN_MS
