"""Click probes for a long call: each peer's microphone gets a click every PERIOD seconds,
each peer in its own frequency band and time slot, and one recording of the audio lab's
bus (every microphone and every speaker on one clock, sample-aligned; see harness.lab.audio)
tells, click by click, which receiver heard which sender and with what delay.

The recording is analysed as it comes (a few seconds behind), so a run of hours keeps only
its results, never its audio."""
import subprocess
import threading
import time

import numpy as np
from scipy import signal as S

from .signals import RATE

PERIOD = 0.6  # s between two clicks of one sender
CLICK_MS = 10
# One band per sender (up, down, up), far apart, so that a receiver's mixed speaker tells
# the senders apart by matched filter; and one slot per sender within the period.
BANDS = {"A": (600.0, 1800.0), "B": (3600.0, 2200.0), "C": (4200.0, 6500.0)}
SLOTS = {"A": 0.0, "B": 0.2, "C": 0.4}
MAX_DELAY = PERIOD - 0.02  # a click is looked for this long after it entered
MIN_DELAY = 0.003
LEVEL = 0.5


def template(peer):
    n = int(CLICK_MS / 1000 * RATE)
    t = np.arange(n) / RATE
    f0, f1 = BANDS[peer]
    return LEVEL * S.chirp(t, f0=f0, t1=t[-1], f1=f1) * np.hanning(n)


def envelope(x, tpl):
    mf = S.fftconvolve(x, tpl[::-1], mode="full")[len(tpl) - 1:len(tpl) - 1 + len(x)]
    return np.abs(S.hilbert(mf))


class Injector:
    """Plays one sender's click train into its microphone device through pacat, paced by
    the monotonic clock from a common start, so the three senders keep their slots."""

    def __init__(self, lab, peer, device, t0, log):
        self.peer, self.t0 = peer, t0
        self.proc = lab.proc(["pacat", "--playback", "-d", device, "--raw", "--rate=48000", "--channels=1",
                              "--format=s16le", "--latency-msec=20"], log, stdin=subprocess.PIPE)
        self.tpl = (template(peer) * 32767).astype("<i2")
        self.stopped = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        chunk = RATE // 100  # 10 ms
        period = int(PERIOD * RATE)
        offset = int(SLOTS[self.peer] * RATE)
        k = 0
        try:
            while not self.stopped:
                due = self.t0 + k * 0.01 - 0.04  # keep 40 ms queued
                wait = due - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                n0 = k * chunk
                block = np.zeros(chunk, dtype="<i2")
                # Clicks overlapping this block.
                first = (n0 - offset - len(self.tpl)) // period + 1
                for c in range(max(0, first), (n0 + chunk - offset) // period + 1):
                    s = c * period + offset
                    a, b = max(s, n0), min(s + len(self.tpl), n0 + chunk)
                    if a < b:
                        block[a - n0:b - n0] = self.tpl[a - s:b - s]
                self.proc.popen.stdin.write(block.tobytes())
                k += 1
        except (BrokenPipeError, ValueError, OSError):
            pass

    def stop(self):
        self.stopped = True
        self.thread.join(timeout=2)
        try:
            self.proc.popen.stdin.close()
        except OSError:
            pass
        self.proc.interrupt()
        self.proc.wait(timeout=3)


class Listener:
    """Records the bus (channels in `channels` order: mic_X and spk_X devices) and finds
    every click: in the sender's microphone channel first (when it really entered), then
    in each other peer's speaker channel. `events` holds one dict per (click, receiver):
    t (monotonic s of entry), sender, receiver, heard, delay_ms, snr; a heard click also has
    peak (its match's strength, 1.0 at full level) and rival (the strongest other sender's
    match at that moment, relative to peak)."""

    def __init__(self, lab, channels, peers, log):
        self.channels = list(channels)
        self.peers = list(peers)
        self.n = len(self.channels)
        self.proc = lab.proc(["parec", "--latency-msec=20", "-d", "bus.monitor", "--raw", "--rate=48000",
                              f"--channels={self.n}", "--channel-map=" + ",".join(f"aux{i}" for i in range(self.n)),
                              "--format=s16le"], log, stdout=subprocess.PIPE)
        self.tpls = {p: template(p) for p in self.peers}
        self.lock = threading.Lock()
        self.chunks = []
        self.total = 0  # samples per channel received so far
        self.t_first = None  # monotonic time at which sample 0 was recorded
        # The recording's clock against the monotonic one the faults are timed by: (time, samples
        # received by then), one pair a second. The audio lab's clock runs a few hundred ppm
        # apart, seconds over hours, so samples are dated by a line through these pairs.
        self.clock = []
        self.clock_line = None  # (monotonic time of sample 0, seconds per sample)
        self.buf = np.zeros((0, self.n))
        self.buf_start = 0  # absolute sample index of buf[0]
        self.done = 0  # clicks entering before this sample are analysed
        self.events = []
        self.levels = []  # (t, receiver, rms) each analysis block
        self.stopped = False
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.worker = threading.Thread(target=self._work, daemon=True)
        self.worker.start()

    def t_of(self, sample):
        if self.clock_line:
            start, per_sample = self.clock_line
            return start + sample * per_sample
        return self.t_first + sample / RATE

    def sample_of(self, t):
        if self.clock_line:
            start, per_sample = self.clock_line
            return int((t - start) / per_sample)
        return int((t - self.t_first) * RATE)

    @property
    def drift_ppm(self):
        """How much faster (positive) the recording's clock ran than the monotonic clock."""
        return (1 / (self.clock_line[1] * RATE) - 1) * 1e6 if self.clock_line else 0.0

    def _fit_clock(self):
        """A least-squares line through the clock pairs, once there are a minute of them."""
        with self.lock:
            pairs = list(self.clock)
        if len(pairs) < 60:
            return
        t = np.array([p[0] for p in pairs])
        n = np.array([p[1] for p in pairs], dtype=float)
        per_sample, start = np.polyfit(n, t, 1)
        self.clock_line = (float(start), float(per_sample))

    def _read(self):
        fd = self.proc.popen.stdout
        frame = 2 * self.n
        rest = b""
        while not self.stopped:
            data = fd.read1(65536) if hasattr(fd, "read1") else fd.read(65536)
            if not data:
                break
            now = time.monotonic()
            data = rest + data
            cut = len(data) // frame * frame
            rest = data[cut:]
            x = np.frombuffer(data[:cut], dtype="<i2").reshape(-1, self.n)
            with self.lock:
                if self.t_first is None:
                    # parec hands samples over about its latency after they were made.
                    self.t_first = now - len(x) / RATE - 0.02
                self.chunks.append(x)
                self.total += len(x)
                if not self.clock or now - self.clock[-1][0] >= 1.0:
                    self.clock.append((now - 0.02, self.total))

    def _work(self):
        while not self.stopped:
            time.sleep(1.0)
            self.analyse()

    def analyse(self, final=False):
        self._fit_clock()
        with self.lock:
            chunks, self.chunks = self.chunks, []
        if not chunks:
            return
        new = np.concatenate(chunks).astype(np.float64) / 32768.0
        self.buf = np.concatenate([self.buf, new]) if len(self.buf) else new
        end = self.buf_start + len(self.buf)
        margin = int((MAX_DELAY + 0.05) * RATE)
        limit = end if final else end - margin  # clicks entering before this can be judged now
        if limit <= self.done:
            return
        lo = max(self.buf_start, self.done - int(0.05 * RATE))
        seg = self.buf[lo - self.buf_start:]
        env = {}
        for p in self.peers:
            tpl = self.tpls[p]
            env[(p, "mic")] = envelope(seg[:, self.channels.index(f"mic_{p.lower()}")], tpl)
            for r in self.peers:
                if r != p:
                    env[(p, r)] = envelope(seg[:, self.channels.index(f"spk_{r.lower()}")], tpl)
        for r in self.peers:
            x = seg[self.done - lo if self.done > lo else 0:limit - lo, self.channels.index(f"spk_{r.lower()}")]
            if len(x):
                self.levels.append((self.t_of((self.done + limit) / 2), r, float(np.sqrt(np.mean(x ** 2)))))
        ref_energy = {p: float(np.sum(self.tpls[p] ** 2)) for p in self.peers}
        for p in self.peers:
            e = env[(p, "mic")]
            # Clicks in the microphone: peaks above half the template's own energy.
            thr = 0.5 * ref_energy[p]
            a, b = max(0, self.done - lo), limit - lo
            if b <= a:
                continue
            peaks, _ = S.find_peaks(e[a:b], height=thr, distance=int(0.3 * RATE))
            for k in peaks:
                k += a
                t_in = self.t_of(lo + k)
                for r in self.peers:
                    if r == p:
                        continue
                    er = env[(p, r)]
                    w0, w1 = k + int(MIN_DELAY * RATE), min(len(er), k + int(MAX_DELAY * RATE))
                    if w1 - w0 < 100:
                        continue
                    w = er[w0:w1]
                    j = int(np.argmax(w))
                    floor = float(np.median(w)) + 1e-9
                    snr = float(w[j] / floor)
                    heard = w[j] > 0.003 * ref_energy[p] and snr > 12.0
                    event = dict(t=t_in, sender=p, receiver=r, heard=bool(heard),
                                 delay_ms=(w0 + j - k) * 1000.0 / RATE if heard else float("nan"), snr=snr)
                    if heard:
                        # How strong the match is (1.0: the click at full level), and how strong the
                        # best match of another sender's click is at the same moment, relative to
                        # it: a click of another band that leaks into this filter shows as a rival
                        # above 1.
                        peak = float(w[j] / ref_energy[p])
                        at, near = w0 + j, int(0.005 * RATE)
                        rivals = [float(np.max(env[(q, r)][max(0, at - near):at + near]) / ref_energy[q])
                                  for q in self.peers if q not in (p, r)]
                        event.update(peak=peak, rival=max(rivals, default=0.0) / peak)
                    self.events.append(event)
        self.done = limit
        keep_from = self.done - int(0.1 * RATE)
        if keep_from > self.buf_start:
            self.buf = self.buf[keep_from - self.buf_start:]
            self.buf_start = keep_from

    def stop(self):
        self.stopped = True
        self.worker.join(timeout=30)
        self.proc.interrupt()
        self.proc.wait(timeout=3)
        self.reader.join(timeout=3)
        self.analyse(final=True)
