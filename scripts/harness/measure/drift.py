"""Delay over a long call with the peers' clocks apart by ±PPM, file to file.

The relay's `skew=PPM` stretches the sender's timeline as a sender's sound card running
PPM parts per million slow (positive) or fast (negative) would: the packet sent t seconds
into the call arrives t·PPM/10⁶ s later (or earlier) than on time. A fast sender's packets
can only arrive early if they were held back in the first place, so every skewed link also
has a fixed delay larger than the whole skew (`delay=`), subtracted again from the figures.
The mouth time of a click is its time on the skewed timeline (its input time stretched the
same way), so the delay shown is what the receiver adds: if its rate adjustment keeps up,
the delay stays flat; if not, it climbs or falls by PPM·t."""
import struct
import time
import wave
from pathlib import Path

import numpy as np
from scipy import signal as S

from . import signals
from harness.lab.processes import Proc
from harness.lab.relay import relay_counters, start_relay
from .signals import RATE


def write_click_file(path, seconds, seed):
    """Clicks 0.7–1.3 s apart (seeded, uneven), written block by block. Returns click starts."""
    rng = np.random.default_rng(seed)
    tpl = signals.click_template()
    total = int(seconds * RATE)
    starts = []
    pos = int(0.5 * RATE)
    while pos + len(tpl) < total - int(0.2 * RATE):
        starts.append(pos)
        pos += int(rng.uniform(0.7, 1.3) * RATE)
    block = 60 * RATE
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        for b0 in range(0, total, block):
            x = np.zeros(min(block, total - b0))
            for s in starts:
                if b0 <= s < b0 + len(x):
                    n = min(len(tpl), b0 + len(x) - s)
                    x[s - b0:s - b0 + n] += tpl[:n]
            w.writeframes(np.clip(np.round(x * 32767), -32768, 32767).astype("<i2").tobytes())
    return starts


def wav_samples(path):
    """A memory map of a 16-bit mono WAV file's samples (the data chunk found by walking
    the RIFF chunks), so a half-hour recording is not read into memory at once."""
    with open(path, "rb") as fh:
        head = fh.read(12)
        if head[:4] != b"RIFF" or head[8:12] != b"WAVE":
            raise ValueError(f"{path}: not a WAV file")
        pos = 12
        while True:
            fh.seek(pos)
            h = fh.read(8)
            if len(h) < 8:
                raise ValueError(f"{path}: no data chunk")
            cid, size = h[:4], struct.unpack("<I", h[4:])[0]
            if cid == b"data":
                avail = (Path(path).stat().st_size - pos - 8) // 2
                n = min(size // 2, avail) if size else avail
                return np.memmap(path, dtype="<i2", mode="r", offset=pos + 8, shape=(n,))
            pos += 8 + size + (size & 1)


def track_clicks(out, in_pos, out_offset_samples, first_guess_ms=(0.0, 1000.0), search_ms=40.0):
    """Each click's delay (ms), found near the previous one's: the delay moves slowly.
    in_pos: click positions on the output's timeline (samples, float) where delay 0 would put
    them; out: the output samples (memory map)."""
    tpl = signals.click_template()
    delays = np.full(len(in_pos), np.nan)
    peaks = np.zeros(len(in_pos))
    # The first delay from the first clicks together (each lined up with its neighbours,
    # so that no click is taken for the next), then each click near the one before.
    first = [p for p in in_pos[:12] if p - out_offset_samples >= 0]
    prev = None
    if first:
        a = max(0, int(first[0]) - out_offset_samples)
        b = min(len(out), int(first[-1] + first_guess_ms[1] * RATE / 1000) - out_offset_samples + RATE)
        seg = np.asarray(out[a:b], dtype=np.float64) / 32768.0
        times = (a + out_offset_samples + np.arange(len(seg))) * (1e9 / RATE)
        d0 = signals.find_clicks(seg, times, np.asarray(first) * (1e9 / RATE), max_delay_ms=first_guess_ms[1])
        if np.isfinite(d0).any():
            prev = float(np.nanmedian(d0))
    for i, p in enumerate(in_pos):
        if prev is None:
            lo, hi = first_guess_ms
        else:
            lo, hi = prev - search_ms, prev + search_ms
        a = int(p + lo * RATE / 1000) - out_offset_samples
        b = int(p + hi * RATE / 1000) - out_offset_samples + len(tpl)
        if a < 0 or b > len(out):
            continue
        x = np.asarray(out[a:b], dtype=np.float64) / 32768.0
        env = np.abs(S.hilbert(S.fftconvolve(x, tpl[::-1], mode="full")[len(tpl) - 1:]))
        k = int(np.argmax(env[: b - a - len(tpl)]))
        peaks[i] = env[k]
        d = (a + out_offset_samples + k - p) * 1000.0 / RATE
        if env[k] > 0.01 * float(np.sum(tpl ** 2)):
            delays[i] = d
            prev = d if prev is None else 0.5 * prev + 0.5 * d
    found = np.isfinite(delays)
    if found.any():
        level = np.median(peaks[found])
        delays[peaks < 0.25 * level] = np.nan
    return delays


def start(binary, workdir, seconds, ppm, ports, seed=8, frame_ms=10):
    """Starts one skewed call in the background; `finish` waits for it and measures."""
    workdir = Path(workdir)
    tag = f"drift{'+' if ppm >= 0 else '-'}{abs(ppm)}"
    inp = workdir / f"{tag}-in.wav"
    starts = write_click_file(inp, seconds, seed)
    hold_ms = int(np.ceil(abs(ppm) * 1e-6 * seconds * 1000)) + 20
    profile = f"delay={hold_ms}ms,skew={ppm},seed={seed}"
    pa, pb, ra, rb = ports.take(4)
    out = workdir / f"{tag}-out.wav"
    a_json, b_json = workdir / f"{tag}-a.json", workdir / f"{tag}-b.json"
    da = seconds + 0.3
    db = da + hold_ms / 1000 + 2.0
    common = ["--no-discovery", "--frame-ms", str(frame_ms)]
    b = Proc([binary, *common, "--port", str(pb), "--output-file", str(out), "--duration", f"{db:.2f}",
              "--stats-json", str(b_json)], workdir / f"{tag}-b.log")
    time.sleep(0.5)
    relay = start_relay(binary, ra, rb, pb, profile, db - 0.3, workdir / f"{tag}-relay.log")
    time.sleep(0.3)
    a = Proc([binary, *common, "--port", str(pa), "--peer", f"127.0.0.1:{ra}", "--input-file", str(inp),
              "--duration", f"{da:.2f}", "--stats-json", str(a_json)], workdir / f"{tag}-a.log")
    return dict(tag=tag, a=a, b=b, relay=relay, starts=starts, ppm=ppm, hold_ms=hold_ms, profile=profile,
                seconds=seconds, out=out, a_json=a_json, b_json=b_json, da=da, db=db, inp=inp, workdir=workdir,
                frame_ms=frame_ms)


def finish(run):
    import json
    run["a"].wait(timeout=run["da"] + 30)
    run["b"].wait(timeout=run["db"] + 30)
    run["relay"].wait(timeout=run["db"] + 30)
    tag, workdir = run["tag"], run["workdir"]
    if run["a"].popen.returncode != 0 or run["b"].popen.returncode != 0:
        raise RuntimeError(f"{tag}: intercom exited {run['a'].popen.returncode}/{run['b'].popen.returncode}; "
                           f"see {workdir}/{tag}-*.log")
    sa, sb = json.loads(run["a_json"].read_text()), json.loads(run["b_json"].read_text())
    out = wav_samples(run["out"])
    in0, out0 = float(sa["input_start_ns"]), float(sb["output_start_ns"])
    starts = np.asarray(run["starts"], dtype=np.float64)
    # A click's mouth time on the skewed timeline, as a position on B's output timeline.
    skew = 1 + run["ppm"] * 1e-6
    in_ns = in0 + starts * skew * (1e9 / RATE) + run["hold_ms"] * 1e6
    pos = (in_ns - out0) * RATE / 1e9
    delays = track_clicks(out, pos, 0)
    t = starts / RATE
    ok = np.isfinite(delays)
    res = dict(ppm=run["ppm"], seconds=run["seconds"], profile=run["profile"], hold_ms=run["hold_ms"],
               times=t, delays=delays, found=int(ok.sum()), total=len(starts), relay=relay_counters(workdir / f"{tag}-relay.log"),
               receiver={k: sb.get(k) for k in ("received", "lost", "concealed", "late", "target_delay_ms")})
    if ok.sum() >= 10:
        d, tt = delays[ok], t[ok]
        # Settled: after the first 10 s (the jitter buffer's start), the spread of the delay
        # and its change from the first minute after that to the last.
        settled = tt >= min(10.0, tt[len(tt) // 4])
        ds, ts = d[settled], tt[settled]
        win = min(60.0, (ts[-1] - ts[0]) / 4)
        first = np.median(ds[ts <= ts[0] + win])
        last = np.median(ds[ts >= ts[-1] - win])
        slope = np.polyfit(ts, ds, 1)[0] if len(ts) > 2 else float("nan")
        res.update(start_ms=float(first), end_ms=float(last), change_ms=float(last - first),
                   spread_ms=float(ds.max() - ds.min()), p5_ms=float(np.percentile(ds, 5)),
                   p95_ms=float(np.percentile(ds, 95)), slope_ms_per_min=float(slope * 60), window_s=float(win))
    for p in ((run["inp"], run["out"]) if not run.get("keep") else ()):
        Path(p).unlink(missing_ok=True)
    return res
