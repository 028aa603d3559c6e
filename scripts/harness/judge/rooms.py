"""Issue 29's targets for the sound in real rooms, and how the acoustic lab's figures are held
against them (the report's "The sound in real rooms" prints each figure beside its verdict)."""
from harness.measure.bench_figures import is_number

from .bench import met

# Echo heard back, live in a room, idle and with one core busy: at least this much less with
# the canceller on, in every run; and no re-sync of the echo reference.
ECHO_REDUCTION_DB = 35.0
RESYNCS = 0
# The near end's PESQ-WB during double talk: at least this, and above PulseAudio's canceller.
DOUBLE_TALK_PESQ = 2.9
RECONVERGENCE_S = 1.0
# Noise suppression's PESQ-WB gain at this SNR, per noise kind: no less than the best anchor's
# less the margin.
NOISE_SNR_DB = 5
NOISE_MARGIN = 0.05
NOISE_ANCHORS = ("webrtc", "webrtc-ns", "rnnoise")
# Voice activation on a minute of noise alone, and on ten words in it.
VOX_KINDS = ("fan", "babble", "keyboard")
VOX_FALSE_S_PER_MIN = 2.0
VOX_CLIPPED_PER_TEN = 1
# The active speech level leaving the chain (ITU-T P.56), in dB under full scale.
SPEECH_LEVEL_DB = -26.0
SPEECH_LEVEL_TOLERANCE_DB = 3.0
# The noise scenes whose output level is judged: the quietest noise, so its level is the speech's.
SPEECH_LEVEL_SNR_DB = 10


def verdict(ok):
    """The printed verdict: met, missed, or a dash when nothing was measured (None)."""
    return "–" if ok is None else met(ok)


def every_run_at_least(values, floor):
    """Whether every measured run reached `floor` (None when no run was measured)."""
    measured = [v for v in values if is_number(v)]
    return None if not measured else min(measured) >= floor


def double_talk_ok(ours, pulse):
    """At least the target, and above PulseAudio's canceller where it was measured."""
    if not is_number(ours):
        return None
    return ours >= DOUBLE_TALK_PESQ and (not is_number(pulse) or ours > pulse)


def reconverged_ok(seconds):
    """Within the target; a change never reconverged from (inf) misses it."""
    return None if seconds is None else seconds <= RECONVERGENCE_S


def noise_gain_ok(ours, best_anchor):
    if not (is_number(ours) and is_number(best_anchor)):
        return None
    return ours >= best_anchor - NOISE_MARGIN


def speech_level_ok(level_db):
    return None if not is_number(level_db) else abs(level_db - SPEECH_LEVEL_DB) <= SPEECH_LEVEL_TOLERANCE_DB
