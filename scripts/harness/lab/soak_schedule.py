"""The soak's schedule of faults: which fault, when, on which peer or device, cycle after
cycle from the end of the warm-up on."""
import numpy as np

WARMUP_S = 60.0
NEVER_RESTARTED = "A"
KILLED, LEAVING, RELOADED, UNPLUGGED, SKEWED = "B", "C", "A", "spk_a", "B"
OUTAGE = "loss=100"
SKEW_SECONDS = 45.0
# The calm after a fault before the next may begin, whatever the schedule says: the checks
# judge 5-10 s after the links are clean (and a restarted peer within 2 s), so a fault that
# ran late must not push the next one into that window.
QUIET_AFTER_FAULT_S = 15.0


def cycle():
    """One round of faults: (offset s, kind, parameters). Link faults last `hold` s, then
    the links are clean again for at least 15 s before the next fault."""
    hold_skew = int(np.ceil(500e-6 * SKEW_SECONDS * 1000)) + 10
    return [
        (0, "link", dict(profile="wifi", hold=20)),
        (35, "link", dict(profile="bursty", hold=20)),
        (70, "link", dict(profile="loss10-jitter30", hold=20)),
        (105, "link", dict(profile=OUTAGE, hold=10, label="outage 10 s")),
        (130, "kill", dict(peer=KILLED, down=3)),
        (150, "leave", dict(peer=LEAVING, down=5)),
        (175, "unplug", dict(device=UNPLUGGED, peer="A", down=5)),
        (195, "avahi", dict(host="h2")),
        (210, "skew", dict(peer=SKEWED, ppm=500, hold=SKEW_SECONDS, profile=f"skew=500")),
        (270, "skew", dict(peer=SKEWED, ppm=-500, hold=SKEW_SECONDS, profile=f"delay={hold_skew}ms,skew=-500")),
        (335, "reload", dict(peer=RELOADED)),
    ], 350


def plan(seconds, smoke=False):
    """Faults from the end of the warm-up on, cycle after cycle, each cycle only if it fits
    whole with a minute of clean call after it; the rest of the run is clean. A smoke run
    (a check that every part works) takes whatever faults fit after a 20 s warm-up."""
    faults, length = cycle()
    if smoke:
        return [dict(at=20 + off, kind=kind, **params) for off, kind, params in faults
                if 20 + off + params.get("hold", 5) + 10 <= seconds]
    out, start = [], WARMUP_S
    while start + length + 60 <= seconds:
        out += [dict(at=start + off, kind=kind, **params) for off, kind, params in faults]
        start += length + 20
    return out
