"""Opus alone, no network: speech through GStreamer's opusenc and opusdec, for the codec's
ceiling, and for the quality and CPU of intercom's encoders at each complexity and bitrate."""
import resource
import subprocess
from pathlib import Path

import numpy as np

from . import signals
from .signals import RATE


def codec_ceiling(workdir, x, frame_ms, fec):
    """Opus alone, no network: x through GStreamer's opusenc (32 kb/s, VOIP audio type as
    intercom uses) and opusdec. Returns the decoded samples, aligned to x."""
    workdir = Path(workdir)
    src = workdir / "ceiling-in.wav"
    dst = workdir / f"ceiling-{frame_ms}-{'fec' if fec else 'nofec'}.wav"
    signals.write_wav(src, x)
    enc = ["opusenc", "bitrate=32000", f"frame-size={frame_ms}", "audio-type=voice"]
    if fec:
        enc += ["inband-fec=true", "packet-loss-percentage=10"]
    subprocess.run(["gst-launch-1.0", "-q", "filesrc", f"location={src}", "!", "wavparse", "!", "audioconvert", "!",
                    *enc, "!", "opusdec", "!", "audioconvert", "!", "audio/x-raw,format=S16LE,rate=48000,channels=1",
                    "!", "wavenc", "!", "filesink", f"location={dst}"], check=True, capture_output=True)
    y, _ = signals.read_wav(dst)
    from scipy import signal as S
    c = S.fftconvolve(y[:len(x) + 4800], x[::-1], mode="valid")
    k = int(np.argmax(c))
    return y[k:k + len(x)]


# The two encoders of intercom's adaptive codec, at its default bitrate (OpusEncoderConfiguration),
# and the one of `--profile pi` (AudioProfile).
COMPLEXITY_ENCODERS = {
    "robust": ["bitrate=96000", "frame-size=10", "audio-type=voice", "inband-fec=true", "packet-loss-percentage=2"],
    "low-delay": ["bitrate=96000", "frame-size=5", "audio-type=restricted-lowdelay"],
    "pi": ["bitrate=48000", "frame-size=20", "audio-type=voice", "inband-fec=true", "packet-loss-percentage=2"],
}


BITRATES = (24_000, 32_000, 48_000, 64_000, 96_000)


def opus_scores(workdir, utterances, settings, tag):
    """(PESQ-WB, STOI) of each utterance through GStreamer's opusenc with `settings` and
    opusdec, the decoded speech found again by cross-correlation."""
    from scipy import signal as S
    workdir = Path(workdir)
    scores = []
    for index, (_, utterance) in enumerate(utterances):
        one = workdir / f"{tag}-{index}.wav"
        out = workdir / f"{tag}-{index}-out.wav"
        signals.write_wav(one, utterance)
        subprocess.run(["gst-launch-1.0", "-q", "filesrc", f"location={one}", "!", "wavparse", "!", "audioconvert", "!",
                        "opusenc", *settings, "!", "opusdec", "!", "audioconvert", "!",
                        "audio/x-raw,format=S16LE,rate=48000,channels=1", "!", "wavenc", "!", "filesink",
                        f"location={out}"], check=True, capture_output=True)
        y, _ = signals.read_wav(out)
        c = S.fftconvolve(y[:len(utterance) + 4800], utterance[::-1], mode="valid")
        k = int(np.argmax(c))
        scores.append(signals.quality(utterance, y[k:k + len(utterance)]))
    return scores


def codec_bitrate(workdir, utterances, encoder, bitrate):
    """One of intercom's encoders (its settings but the bitrate, at complexity 8) through
    GStreamer's opusenc and opusdec at `bitrate`: mean PESQ-WB and STOI of the utterances."""
    settings = [f"bitrate={bitrate}" if s.startswith("bitrate=") else s for s in COMPLEXITY_ENCODERS[encoder]] + ["complexity=8"]
    scores = opus_scores(workdir, utterances, settings, f"bitrate-{encoder}-{bitrate}")
    return dict(encoder=encoder, bitrate=bitrate, pesq=float(np.nanmean([p for p, _ in scores])),
                stoi=float(np.nanmean([q for _, q in scores])))


def codec_complexity(workdir, utterances, encoder, complexity, repeat=6):
    """One of intercom's encoders through GStreamer's opusenc at `complexity`: PESQ-WB of the
    utterances through it and opusdec, and the encoder's CPU per second of audio (the CPU of
    encoding the utterances `repeat` times over, less that of the same pipeline without it)."""
    workdir = Path(workdir)
    src = workdir / "complexity-in.wav"
    long_src = workdir / "complexity-long.wav"
    speech = np.concatenate([u for _, u in utterances])
    signals.write_wav(src, speech)
    signals.write_wav(long_src, np.tile(speech, repeat))
    settings = [*COMPLEXITY_ENCODERS[encoder], f"complexity={complexity}"]

    def cpu_seconds(*elements):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(["gst-launch-1.0", "-q", "filesrc", f"location={long_src}", "!", "wavparse", "!", "audioconvert",
                        "!", *elements, "fakesink"], check=True, capture_output=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)

    encoding = cpu_seconds("opusenc", *settings, "!") - cpu_seconds()
    scores = [pesq for pesq, _ in opus_scores(workdir, utterances, settings, f"complexity-{encoder}-{complexity}")]
    seconds = repeat * len(speech) / RATE
    return dict(encoder=encoder, complexity=complexity, pesq=float(np.nanmean(scores)),
                cpu_per_second=max(0.0, encoding) / seconds)
