"""The benchmark's measurements, in the order it takes them: the device-to-device calls in
the audio lab, the file-to-file calls, one talker to several listeners, the drift calls in
the background, full duplex, the talk key; then, with the audio lab stopped, discovery in the
LAN lab, the codec alone, the live chain in instructions, the acoustic lab's offline
comparison, the drift calls' end, and echo in a room live (in labs of its own, the machine
otherwise quiet). Each step that fails is reported with its error and the run goes on."""
import time
import traceback

import numpy as np

from harness.lab.audio import AudioLab
from harness.measure import (codec, device_calls, discovery, drift, duplex, file_calls, instructions, listeners, rooms,
                             signals, talkkey)
from harness.measure.analysis import analyse
from harness.measure.signals import RATE

SEED = 8
DRIFT_PPM = (500, -500)
# (name, frame length (None: the default, which from a file is 10 ms), extra arguments); GStreamer is not ours.
FILE_CONFIGS = [("ours", None, ()), ("ours-10ms", 10, ()), ("ours-20ms", 20, ()),
                ("ours-unencrypted", None, ("--unencrypted",)), ("gstreamer", None, ())]
# The full-duplex calls: intercom as shipped, with parts of its chain off, and the anchors.
DUPLEX_VARIANTS = [("ours", ()), ("ours-no-aec-denoise", ("--no-aec", "--no-denoise")), ("ours-no-dtx", ("--no-dtx",)),
                   ("ours-unencrypted", ("--unencrypted",)), ("ours-pi", ("--profile", "pi")), ("gstreamer", ())]
# intercom's device-to-device calls: its arguments beyond the lab's, by name.
LAB_VARIANTS = {"ours": (), "ours-pi": ("--profile", "pi")}
# Echo in a room, live: (room, one core busy, the echo path's change or None, runs), in full,
# with --quick and with --smoke.
ROOM_CALLS = [("office-laptop", False, None, 3), ("office-laptop", True, None, 3), ("kitchen-pi", False, None, 3),
              ("kitchen-pi", True, None, 3), ("office-laptop", False, rooms.LID_CHANGE, 3)]
QUICK_ROOM_CALLS = [("office-laptop", False, None, 1), ("office-laptop", True, None, 1), ("kitchen-pi", False, None, 1),
                    ("office-laptop", False, rooms.LID_CHANGE, 1)]
SMOKE_ROOM_CALLS = [("office-laptop", False, None, 1)]


def failure(e):
    """An exception as the report shows it."""
    return f"{type(e).__name__}: {e}"


def attempted(measure):
    """measure(), or dict(error=...) if it raised: a benchmark reports what failed and goes on."""
    try:
        return measure()
    except Exception as e:
        traceback.print_exc()
        return dict(error=failure(e))


class Steps:
    """One benchmark run's measurements; the figures gather in lab_results, file_results and
    extras, as the report reads them (harness.measure.bench_figures.BenchRun)."""

    def __init__(self, args, binary, workdir, ports, ctx, utterances, started):
        """`started`: the monotonic time the run began, which every step's stamp counts from."""
        self.args, self.binary, self.workdir, self.ports, self.ctx = args, binary, workdir, ports, ctx
        self.utterances = utterances
        self.program, self.clicks, self.spans = signals.build_program(utterances, SEED)
        self.program_path = workdir / "program.wav"
        signals.write_wav(self.program_path, self.program)
        self.program_seconds = len(self.program) / RATE
        self.lab_results, self.file_results, self.extras = {}, {}, {}
        self.drift_runs = []
        self.started = started

    def stamp(self, what):
        print(f"bench: {what} ({time.monotonic() - self.started:.0f} s)", flush=True)

    def record(self, key, measure):
        """extras[key] = measure(), or, if it raised, its error as extras[key + "_error"]."""
        try:
            self.extras[key] = measure()
        except Exception as e:
            traceback.print_exc()
            self.extras[f"{key}_error"] = failure(e)

    def analysed(self, call, impl):
        return analyse(call, self.program, self.clicks, self.spans, impl)

    def run(self, lab_links, file_links, lab_impls, drift_seconds):
        """Every measurement: first those that need the audio lab, then the rest."""
        audio_lab = None
        try:
            self.stamp("starting the audio lab")
            audio_lab = AudioLab(self.workdir)
            self.in_the_audio_lab(audio_lab, lab_links, file_links, lab_impls, drift_seconds)
        finally:
            if audio_lab is not None:
                audio_lab.stop()
        try:
            self.outside_the_audio_lab()
        finally:
            for run in self.drift_runs:
                for p in (run["a"], run["b"], run["relay"]):
                    p.stop()  # only if still running (an error above); they end by themselves

    def in_the_audio_lab(self, audio_lab, lab_links, file_links, lab_impls, drift_seconds):
        self.device_path_alone(audio_lab)
        self.calls_device_to_device(audio_lab, lab_links, lab_impls)
        self.calls_file_to_file(file_links)
        self.many_listeners()
        # The drift calls run file to file in the background from here on, while the figures
        # that do not depend on timing are taken.
        self.start_drift(drift_seconds)
        self.full_duplex(audio_lab)
        self.talk_key()

    def outside_the_audio_lab(self):
        if not self.ctx["disc_unavailable"]:
            self.stamp("discovery in the LAN lab")
            rounds = 1 if self.args.smoke else 2 if self.args.quick else 5
            self.extras["discovery"] = attempted(lambda: discovery.run(self.binary, self.workdir, rounds))
        self.codec_alone()
        self.stamp("the live chain in instructions (callgrind)")
        self.record("instructions", lambda: instructions.measure(self.binary, self.workdir, self.utterances))
        self.rooms_offline()
        self.finish_drift()
        self.rooms_live()

    def device_path_alone(self, audio_lab):
        self.stamp("device path alone")
        self.extras["device_path"] = attempted(lambda: self.analysed(device_calls.run_device_path(
            audio_lab, self.workdir, "device-path", self.program_path, self.program), "device"))

    def calls_device_to_device(self, audio_lab, lab_links, lab_impls):
        for link in lab_links:
            for impl in lab_impls:
                tag = f"lab-{link}-{impl}"
                self.stamp(tag)
                self.lab_results[(link, impl)] = attempted(lambda: self.analysed(device_calls.run_call(
                    audio_lab, "ours" if impl in LAB_VARIANTS else impl, self.binary, self.workdir, tag, self.program_path,
                    self.program, f"{link},seed={SEED}", self.ports, ours_extra=LAB_VARIANTS.get(impl, ())), impl))

    def calls_file_to_file(self, file_links):
        for link in file_links:
            for impl, frame, extra in FILE_CONFIGS:
                tag = f"file-{link}-{impl}"
                self.stamp(tag)
                self.file_results[(link, impl)] = attempted(
                    lambda: self.analysed(self.file_to_file_call(impl, frame, extra, tag, link), impl))

    def file_to_file_call(self, impl, frame, extra, tag, link):
        if impl.startswith("ours"):
            return file_calls.run_ours(self.binary, self.workdir, tag, self.program_path, self.program_seconds,
                                       f"{link},seed={SEED}", frame, self.ports, extra=extra)
        return file_calls.run_gst(self.binary, self.workdir, tag, self.program, f"{link},seed={SEED}", self.ports)

    def many_listeners(self):
        """One talker to 1, 2 and 5 listeners, file to file on loopback: the bitrate and bytes a
        stream costs as the listeners grow (`ListenerBudget`), and what the first one hears."""
        results = []
        for count in listeners.LISTENER_COUNTS:
            self.stamp(f"a talker to {count} listener(s)")
            call = attempted(lambda: listeners.run(self.binary, self.workdir, count, self.program_path,
                                                   self.program_seconds, self.ports))
            if "error" in call:
                results.append(dict(listeners=count, error=call["error"]))
                continue
            heard = attempted(lambda: self.analysed(call, "ours"))
            results.append(dict(listeners.wire(call), pesq=heard.get("pesq"), stoi=heard.get("stoi"),
                                speech_delay_median=heard.get("speech_delay_median"), score_error=heard.get("error")))
        self.extras["listeners"] = results

    def start_drift(self, drift_seconds):
        self.stamp(f"drift: starting {drift_seconds / 60:g}-minute calls at {', '.join(f'{p:+d}' for p in DRIFT_PPM)} ppm")
        for ppm in DRIFT_PPM:
            try:
                self.drift_runs.append(drift.start(self.binary, self.workdir, drift_seconds, ppm, self.ports, seed=SEED))
            except Exception as e:
                traceback.print_exc()
                self.extras.setdefault("drift_errors", []).append(f"{ppm:+d} ppm: {failure(e)}")

    def full_duplex(self, audio_lab):
        talk_seconds, silent_seconds = (10.0, 4.0) if self.args.quick else (30.0, 10.0)
        if self.args.smoke:
            talk_seconds, silent_seconds = 3.0, 2.0
        speech = np.concatenate([np.concatenate([u, np.zeros(int(0.3 * RATE))]) for _, u in self.utterances])
        talk = np.tile(speech, int(np.ceil(talk_seconds * RATE / len(speech))))[: int(talk_seconds * RATE)]
        talk_path = self.workdir / "talk.wav"
        signals.write_wav(talk_path, talk)
        results = {}
        variants = DUPLEX_VARIANTS + ([] if "trx" in self.ctx["missing"] else [("trx", ())])
        for name, extra in (variants[:1] + variants[-1:] if self.args.smoke else variants):
            self.stamp(f"full duplex, CPU and bytes: {name}")
            results[name] = attempted(lambda: duplex.run_duplex(
                audio_lab, name.split("-")[0], self.binary, self.workdir, f"duplex-{name}", talk_path, talk_seconds,
                silent_seconds, self.ports, ours_extra=extra))
        self.extras["duplex"] = results
        self.extras["duplex_seconds"] = (talk_seconds, silent_seconds)

    def talk_key(self):
        # Talk key to ear: the first press of a call, and one after 5 minutes of silence (1 with
        # --quick, 10 s with --smoke); the drift calls go on meanwhile.
        key_silence = 10.0 if self.args.smoke else (60.0 if self.args.quick else 300.0)
        self.stamp(f"talk key to ear (a press, {key_silence:g} s of silence, a press)")
        unavailable = talkkey.available()
        self.extras["talkkey"] = attempted(
            lambda: dict(error=unavailable) if unavailable else talkkey.run(self.binary, self.workdir, self.ports,
                                                                              key_silence))

    def codec_alone(self):
        """The codec's ceiling, and intercom's encoders at each complexity and bitrate."""
        self.stamp("codec ceiling")
        self.record("ceiling", self.codec_ceiling)
        self.stamp("Opus complexity")
        self.record("complexity", lambda: [codec.codec_complexity(self.workdir, self.utterances, encoder, complexity)
                                           for encoder in codec.COMPLEXITY_ENCODERS
                                           for complexity in (0, 2, 4, 6, 8, 10)])
        self.stamp("Opus bitrate")
        self.record("bitrate", lambda: [codec.codec_bitrate(self.workdir, self.utterances, encoder, bitrate)
                                        for encoder in codec.COMPLEXITY_ENCODERS for bitrate in codec.BITRATES])

    def codec_ceiling(self):
        ceiling = []
        for frame in (10, 20):
            for fec in (True, False):
                scores = [signals.quality(u, codec.codec_ceiling(self.workdir, u, frame, fec))
                          for _, u in self.utterances]
                ceiling.append(dict(frame=frame, fec=fec, pesq=float(np.nanmean([p for p, _ in scores])),
                                    stoi=float(np.nanmean([q for _, q in scores]))))
        return ceiling

    def rooms_offline(self):
        """The acoustic lab's scenes through intercom's microphone chain and the anchors (with
        --smoke, intercom's alone on the quick scenes)."""
        self.stamp("the sound in rooms: the acoustic lab's scenes offline, with the anchors")
        self.record("rooms_offline", lambda: rooms.offline(self.binary, self.workdir, quick=self.args.quick or self.args.smoke,
                                                           anchors=not self.args.smoke, pulse=not self.args.smoke))

    def rooms_live(self):
        """Echo in a room, live, call after call: idle and with a core busy, and the lid moved."""
        plan = SMOKE_ROOM_CALLS if self.args.smoke else QUICK_ROOM_CALLS if self.args.quick else ROOM_CALLS
        speech = rooms.talker(self.workdir)
        results = []
        for room, busy, change, runs in plan:
            what = f"{room}, {'one core busy' if busy else 'idle'}" + (f", changing to {change[1]}" if change else "")
            self.stamp(f"echo in a room, live: {what}, {runs} run(s)")
            workdir = self.workdir / f"room-{room}-{'busy' if busy else 'idle'}{'-change' if change else ''}"
            try:
                results += rooms.live(self.binary, workdir, speech, room, runs, busy=busy, change=change, ports=self.ports,
                                      report=lambda line: print(f"bench:   {line}", flush=True))
            except Exception as e:
                traceback.print_exc()
                results.append(dict(room=room, busy=busy, change=change, error=failure(e)))
        self.extras["rooms_live"] = results

    def finish_drift(self):
        self.stamp("drift: waiting for the calls to end")
        self.extras["drift"] = []
        for run in self.drift_runs:
            try:
                self.extras["drift"].append(drift.finish(run))
            except Exception as e:
                traceback.print_exc()
                self.extras.setdefault("drift_errors", []).append(f"{run['ppm']:+d} ppm: {failure(e)}")
