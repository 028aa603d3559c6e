"""The anchors intercom is measured against, as the benchmark runs them: trx (its tx and
rx) and GStreamer RTP/Opus pipelines, with their settings."""
import shutil

GST_CAPS = "application/x-rtp,media=(string)audio,clock-rate=(int)48000,encoding-name=(string)OPUS,payload=(int)96"
GST_OPUSENC = "opusenc bitrate=32000 frame-size=20 inband-fec=true packet-loss-percentage=10"
GST_JITTER = "rtpjitterbuffer latency=60 do-lost=true"
GST_OPUSDEC = "opusdec plc=true use-inband-fec=true"


def gst_sender_args(port):
    return ["gst-launch-1.0", "-q", "fdsrc", "fd=0", "!", "rawaudioparse", "use-sink-caps=false", "format=pcm",
            "pcm-format=s16le", "sample-rate=48000", "num-channels=1", "!", "audioconvert", "!",
            *GST_OPUSENC.split(), "!", "rtpopuspay", "pt=96", "!", "udpsink", "host=127.0.0.1", f"port={port}",
            "sync=false"]


def gst_receiver_args(port):
    return ["gst-launch-1.0", "-q", "udpsrc", f"port={port}", f"caps={GST_CAPS}", "!", *GST_JITTER.split(), "!",
            "rtpopusdepay", "!", *GST_OPUSDEC.split(), "!", "audioconvert", "!", "audioresample", "!",
            "audio/x-raw,format=S16LE,rate=48000,channels=1", "!", "fdsink", "fd=1", "sync=false"]


# trx: what its own documentation suggests for a LAN (20 ms frames, 16 ms ALSA buffer, 16 ms
# jitter buffer) would underrun through PulseAudio at once; the smallest settings that play
# without dropouts in this lab, found by trying, are used instead (see TRX_*).
TRX_BUFFER_MS = 16
TRX_JITTER_MS = 16
TRX_FRAME = 960  # 20 ms at 48 kHz
TRX_KBPS = 32


# GStreamer: 10 ms device periods, 40 ms device buffers, the same 60 ms jitter buffer as
# file to file, the sink not clocked (sync=false).
GST_DEVICE = "buffer-time=40000 latency-time=10000"


def trx_tools():
    """The trx transmitter and receiver: Debian installs them as trx-tx and trx-rx."""
    for tx, rx in (("trx-tx", "trx-rx"), ("tx", "rx")):
        if shutil.which(tx) and shutil.which(rx):
            return shutil.which(tx), shutil.which(rx)
    return None
