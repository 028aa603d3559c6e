"""The test and benchmark harness of intercom: scripts/bench and scripts/soak.

Layers, each importing only from the ones before it (scripts/harness/check.py enforces it):
  lab      controls the labs and the processes a call is made of: the audio lab, the LAN lab,
           relays, intercom, trx and GStreamer;
  measure  runs calls and measures them: signals, delays, drift, talk key timing, bytes on
           the wire, instructions, the soak's click probes;
  judge    holds measured figures against their promises and targets;
  report   writes the Markdown reports and their plots;
and on top, the two entry points that put them together in order: bench and soak
(run as `python scripts/harness bench|soak ...` by scripts/bench and scripts/soak)."""
from pathlib import Path

# The checkout this harness belongs to.
ROOT = Path(__file__).resolve().parent.parent.parent
