"""The benchmark's targets (issues 8 and 14), and how a measured figure is held against one."""
from typing import NamedTuple

from harness.measure.bench_figures import is_number

FRAME_MS = 10


FULL_DRIFT_SECONDS = 1800  # the drift target is for a 30-minute call


# The speech targets, device to device: PESQ-WB at least this on these links.
PESQ_TARGETS = (("loss5", "PESQ-WB at 5 % loss, lab devices", 3.8),
                ("loss10-jitter30", "PESQ-WB at 10 % loss + 30 ms jitter, lab devices", 3.3),
                ("bursty", "PESQ-WB, bursty loss, lab devices", 3.0))


PESQ_FILE_TARGET = 3.8


FILE_DELAY_TARGET_MS = 25


SILENT_WIRE_TARGET_KBPS = 8


CPU_TARGET_FACTOR = 1.0  # of trx's tx + rx; 0.6 is the next goal


RSS_TARGET_MB = 20


DISCOVERY_TARGET_S = 1.0


def met(ok):
    return "met" if ok else "**missed**"


def judged(value, target, higher_is_better):
    """Whether a measured value missed its target, and the verdict to print ("–" when unmeasured)."""
    if not is_number(value):
        return False, "–"
    missed = value < target if higher_is_better else value > target
    return missed, met(not missed)


class Miss(NamedTuple):
    """A figure that missed its target: which one, on which link, the figure and what it was held against."""
    kind: str
    link: object
    value: float
    against: float
