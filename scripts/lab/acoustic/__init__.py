"""The acoustic lab: rooms, noises and a loudspeaker between a lab device's speaker and its
microphone, in real time (realtime.py, Debian's numpy only) and offline (scenes.py), and
the scoring of echo cancellers, noise suppressors and voice detectors on the same signals.

Layers, each importing only those above it:
  wavio, levels            WAV files and speech levels (numpy)
  rooms, noises, path      room responses, noise sources, the acoustic path's DSP (numpy)
  realtime                 the path between two lab sinks (parec/pacat)
  scenes                   far end, near end, noise and room made into microphone files
  processors               what is scored: anchors, a pass-through, any command
  scores                   ERLE, PESQ-WB, STOI, voice activation (pesq, pystoi: the venv)
  compare                  runs the comparison and prints the table
"""
RATE = 48_000
