"""The benchmark report's last section: how every figure is measured, with the anchors'
own settings as the run used them."""
from harness.lab import anchors, audio


def method_section(run):
    ctx, buffer_ms = run.ctx, run.buffer_ms
    paragraphs = [
        "**Input.** One WAV file per call (48 kHz mono): a click train, an utterance, a click train, … , a click train. "
        "A click is a 4 ms Hann-windowed chirp from 1 to 4 kHz; clicks come 180–420 ms apart at seeded random intervals, "
        "so that no click is mistaken for its neighbour. Utterances are spoken by espeak-ng (150 words/min) with the voices "
        + ", ".join(f"`{v}`" for v in ctx["voices"]) + ":",
        [f"- `{v}`: \"{t}\"" for v, t in ctx["utterance_texts"]],
        "**Links.** `intercom relay --network PRESET,seed=8` for each preset, the same seed for every sender, so the "
        "same packets are dropped at the same positions whoever sends (20 ms senders see every other draw, so not the "
        "same audio is lost). The relay runs in its own process between A and B on 127.0.0.1.",
        "**The audio lab and one clock.** `scripts/lab/audio-lab start --devices mic_a,spk_a,mic_b,spk_b --bus mic_a,spk_b` "
        "starts a private PulseAudio server whose null sinks are ALSA devices (`bench_mic_a`, … through ALSA's pulse plugin: "
        "playing into one plays into the sink, capturing from it records the sink's monitor). With `--bus`, A's microphone "
        "and B's speaker are not sinks of their own but one-channel remapped sinks (`module-remap-sink`) of one two-channel "
        "null sink, the bus: channel 0 carries what reaches A's microphone, channel 1 what B's speaker plays. The benchmark "
        "records the bus's monitor once (`parec --channel-map=aux0,aux1`) for the whole call, and plays the program into A's "
        "microphone with `paplay`. Delay of a click = (its position in channel 1 − its position in channel 0) / 48 kHz: the "
        "injecting and recording tools' buffering is common to both channels and cancels out, and the program is located in "
        "channel 0 (and every click checked there) rather than assumed. B's microphone and A's speaker are plain null sinks.",
        f"**Device path alone.** `arecord -D bench_mic_a | aplay -D bench_spk_b`, both with {audio.ALSA_PERIOD_MS} ms periods "
        f"and {buffer_ms} ms buffers (intercom's default `--audio-buffer-ms`), measured as a call: what a call cannot "
        "go below with these devices and buffers, before any network, codec or jitter buffer.",
        "**intercom through the devices.** Peer B: `intercom --no-discovery --frame-ms 10 --port PB --capture bench_mic_b "
        "--playback bench_spk_b --duration D --stats-json b.json`; relay as below; peer A: `intercom --no-discovery --frame-ms 10 "
        "--port PA --peer 127.0.0.1:RA --capture bench_mic_a --playback bench_spk_a --duration D --stats-json a.json`. "
        f"Everything else at its default: {buffer_ms} ms device buffers, Opus at {ctx['machine'].get('bitrate') or 'its default'} b/s with in-band FEC, DTX, echo cancellation, "
        "denoise and AGC on (they run on live devices), open mode (no terminal).",
        "**trx anchor.** Debian's `trx` (`trx-tx`/`trx-rx`): receiver `trx-rx -d bench_spk_b -h 127.0.0.1 -p PB -c 1 "
        f"-m {anchors.TRX_BUFFER_MS} -j {anchors.TRX_JITTER_MS}`, sender `trx-tx -d bench_mic_a -h 127.0.0.1 -p RA -c 1 "
        f"-m {anchors.TRX_BUFFER_MS} -f {anchors.TRX_FRAME} -b {anchors.TRX_KBPS}`: mono, 32 kb/s, 20 ms frames, as the issue's "
        "anchor, and trx's own 16 ms device buffer and 16 ms jitter buffer, which played without dropouts on the clean link "
        "in this lab (20 ms and 30 ms were tried and were no better). trx sends RTP with oRTP and conceals nothing beyond what "
        "Opus's decoder does for a missing frame.",
        f"**GStreamer anchor through the devices.** Sender `gst-launch-1.0 pulsesrc device=mic_a.monitor {anchors.GST_DEVICE} ! "
        f"audio/x-raw,rate=48000,channels=1 ! audioconvert ! {anchors.GST_OPUSENC} ! rtpopuspay pt=96 ! udpsink host=127.0.0.1 port=RA`; "
        f"receiver `gst-launch-1.0 udpsrc port=PB caps=\"{anchors.GST_CAPS}\" ! {anchors.GST_JITTER} ! rtpopusdepay ! {anchors.GST_OPUSDEC} ! "
        f"audioconvert ! audioresample ! pulsesink device=spk_b {anchors.GST_DEVICE} sync=false` (the same server and devices "
        "as the ALSA PCMs; `alsasrc` is not installed here). The sink is not clocked (`sync=false`), as the issue's anchor: "
        "with a clocked sink the delay was about 250 ms there.",
        "**File to file.** Peer B: `intercom --no-discovery --port PB --frame-ms F --output-file out.wav --duration D --stats-json b.json`; "
        "peer A: `intercom --no-discovery --port PA --frame-ms F --peer 127.0.0.1:RA --input-file program.wav --duration D --stats-json a.json`. "
        "Delay of a click = `output_start_ns` + (its position in out.wav)/48 kHz − (`input_start_ns` + its position in the input)/48 kHz, "
        "both CLOCK_REALTIME read by each process when its file clock starts. The GStreamer anchor file to file: "
        f"`fdsrc ! rawaudioparse ! audioconvert ! {anchors.GST_OPUSENC} ! rtpopuspay ! udpsink` fed 10 ms at a time when a "
        f"microphone would hand it over, and `udpsrc ! {anchors.GST_JITTER} ! rtpopusdepay ! {anchors.GST_OPUSDEC} ! fdsink sync=false`, "
        "each read stamped with CLOCK_REALTIME and played back to back as a sound card would.",
        "**A stream many devices hear.** N listeners `intercom --no-discovery --port PN --output-file outN.wav --duration D "
        "--stats-json N.json`, and one talker `intercom --no-discovery --port PA --peer 127.0.0.1:P1 … --peer 127.0.0.1:PN "
        "--input-file program.wav --duration D --stats-json a.json`, straight to each other on loopback; the bytes and "
        "datagrams are the talker's `bytes_sent` and `datagrams_sent`, split evenly among the listeners.",
        "**Drift.** See the drift section: the relay's `skew=±500` stretches or shrinks the sender's timeline by 500 ppm "
        "(a sender's sound card running slow or fast); the click's mouth time is stretched the same way, and the relay's "
        "fixed `delay=` (needed so that a fast sender's packets can arrive early) is taken out, so the figure is the delay "
        "the receiver adds, which should stay flat if its rate adjustment keeps up.",
        "**Finding clicks.** A matched filter (the click's own waveform) over the output, its Hilbert envelope, a coarse "
        "delay at 1 ms steps that lines up each click and its two neighbours on each side, then the envelope's peak within "
        "±85 ms of it. A click whose peak is below a quarter of the median peak, or below 1 % of a full-level click's, counts "
        "as not found (lost and concealed).",
        "**Speech quality.** Each utterance is cut from the output at the lag that best matches it (cross-correlation "
        "within ±150 ms of the click delay), both are resampled to 16 kHz, and scored with PESQ-WB (ITU-T P.862.2, PyPI "
        "`pesq`, mode `wb`) and STOI (PyPI `pystoi`).",
        "**Error bounds.** Device to device: the two channels of the bus are one sink's samples, so a click is located to "
        "the sample (±0.02 ms) plus whatever phase the codec gives it (under 0.5 ms). File to file: the two start times come "
        "from one clock (error below 0.1 ms). Each figure comes from one call per link (one seed); with ~"
        + str(ctx["n_clicks"]) + " clicks per call the median is firm and the p95 rests on the few slowest clicks. GStreamer's "
        "and trx's delays on lossy links depend on when their buffers stall, so they move by ±15 ms or more from run to run. "
        "CPU figures move with the machine's other load (see the load average at the top).",
    ]
    lines = ["## How it is measured", ""]
    for paragraph in paragraphs:  # a paragraph, or a list's items
        lines += (paragraph if isinstance(paragraph, list) else [paragraph]) + [""]
    return lines
