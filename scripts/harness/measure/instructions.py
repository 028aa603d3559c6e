"""A CPU figure that does not move with the machine's load: `intercom bench-dsp` (the whole live
chain of a full-duplex peer on recordings, faster than real time: echo alignment, canceller
and preprocessor, both encoders, sealing, opening, jitter buffer and mixer, decoder, drift
resampler) counted in instructions by valgrind's callgrind, per second of audio, by stage as
bench-dsp times them and by library as callgrind counts them."""
import re
import subprocess
from pathlib import Path

import numpy as np

from . import signals
from .signals import RATE

ECHO_DELAY_MS = 40
ECHO_GAIN = 0.5


def recordings(workdir, utterances):
    """A far end (the utterances, one after another) and a microphone that hears it 40 ms
    later at half level, with the last utterance spoken into it meanwhile (double talk)."""
    workdir = Path(workdir)
    far = np.concatenate([u for _, u in utterances] + [np.zeros(RATE // 2)])
    microphone = np.zeros(len(far))
    delay = ECHO_DELAY_MS * RATE // 1000
    microphone[delay:] = ECHO_GAIN * far[:len(far) - delay]
    near = utterances[-1][1]
    start = max(0, len(far) - len(near) - RATE // 2)
    microphone[start:start + len(near)] += near[:len(far) - start]
    far_path, microphone_path = workdir / "instructions-far.wav", workdir / "instructions-mic.wav"
    signals.write_wav(far_path, far)
    signals.write_wav(microphone_path, np.clip(microphone, -1, 1))
    return microphone_path, far_path


def parse_stages(output):
    """bench-dsp's lines: (audio seconds, [(stage, ms of CPU per s of audio)])."""
    seconds = float(re.search(r"^audio\s+([0-9.]+) s", output, re.M).group(1))
    stages = [(name.strip(), float(ms)) for name, ms in
              re.findall(r"^  (\S.*?)\s+([0-9.]+) ms of CPU per s of audio", output, re.M)]
    return seconds, stages


def by_library(annotated):
    """callgrind_annotate's self counts per function, summed by the object each is in."""
    totals = {}
    for count, where in re.findall(r"^\s*([0-9,]+) \([ 0-9.]+%\)\s+(.*)$", annotated, re.M):
        if where.strip() == "PROGRAM TOTALS":
            continue
        found = re.search(r"\[([^\]]+)\]\s*$", where)
        obj = Path(found.group(1)).name if found else "intercom"
        library = re.sub(r"\.so(\.[0-9.]+)?$", "", obj) or obj
        totals[library] = totals.get(library, 0) + int(count.replace(",", ""))
    return totals


def measure(binary, workdir, utterances):
    """The chain's instructions per second of audio (reading the files and starting the
    program included: a fixed part that the run's length makes small), and its stages' CPU
    time from a run outside valgrind."""
    workdir = Path(workdir)
    microphone, far = recordings(workdir, utterances)
    arguments = ["bench-dsp", "--input-file", str(microphone), "--far-end-file", str(far)]
    native = subprocess.run([binary, *arguments], check=True, capture_output=True, text=True).stdout
    seconds, stages = parse_stages(native)
    # Debian 12's valgrind (3.19) gives up on the DWARF 5 the Swift compiler writes: a copy
    # without it keeps the symbols callgrind names functions by.
    counted_binary = workdir / "intercom"
    subprocess.run(["objcopy", "--strip-debug", binary, str(counted_binary)], check=True)
    out = workdir / "instructions.callgrind"
    counted = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", str(counted_binary), *arguments],
                             check=True, capture_output=True, text=True)
    total = re.search(r"Collected : ([0-9]+)", counted.stderr)
    annotated = subprocess.run(["callgrind_annotate", "--inclusive=no", "--threshold=100", "--auto=no", str(out)],
                               check=True, capture_output=True, text=True).stdout
    libraries = by_library(annotated)
    instructions = int(total.group(1)) if total else sum(libraries.values())
    return dict(audio_seconds=seconds, stages=stages, instructions=instructions,
                instructions_per_second=instructions / seconds,
                libraries=sorted(((name, count / seconds) for name, count in libraries.items()), key=lambda x: -x[1]))
