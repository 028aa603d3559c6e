"""WAV files of mono 48 kHz audio as float arrays in [-1, 1], with numpy only: 16-bit PCM
and 32-bit IEEE float (format 3), which Python's own `wave` module cannot read."""
import struct

import numpy as np

from . import RATE


def read(path):
    """(samples as float64, rate) of a 16-bit PCM or 32-bit float WAV file; channels averaged."""
    with open(path, "rb") as file:
        data = file.read()
    if data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise ValueError(f"{path}: not a WAV file")
    pos, fmt, body = 12, None, None
    while pos + 8 <= len(data):
        tag, size = data[pos:pos + 4], struct.unpack("<I", data[pos + 4:pos + 8])[0]
        chunk = data[pos + 8:pos + 8 + size]
        if tag == b"fmt ":
            fmt = struct.unpack("<HHIIHH", chunk[:16])
        elif tag == b"data":
            body = chunk
        pos += 8 + size + (size & 1)
    if fmt is None or body is None:
        raise ValueError(f"{path}: no fmt or data chunk")
    code, channels, rate, _, _, bits = fmt
    if code == 0xFFFE:  # WAVE_FORMAT_EXTENSIBLE: the sub-format's first two bytes
        code = 3 if bits == 32 else 1
    if code == 1 and bits == 16:
        x = np.frombuffer(body[:len(body) // 2 * 2], dtype="<i2").astype(np.float64) / 32768.0
    elif code == 3 and bits == 32:
        x = np.frombuffer(body[:len(body) // 4 * 4], dtype="<f4").astype(np.float64)
    else:
        raise ValueError(f"{path}: format {code} with {bits}-bit samples; 16-bit PCM or 32-bit float expected")
    if channels > 1:
        x = x[:len(x) // channels * channels].reshape(-1, channels).mean(axis=1)
    return x, rate


def read_mono48(path):
    x, rate = read(path)
    if rate != RATE:
        raise ValueError(f"{path}: {rate} Hz, {RATE} expected")
    return x


def pcm16(x):
    """Little-endian 16-bit samples, rounded and clipped."""
    return np.clip(np.round(np.asarray(x) * 32767.0), -32768, 32767).astype("<i2")


def write(path, x, rate=RATE, float32=False):
    """A mono WAV file: 16-bit PCM (clipped to [-1, 1]) or 32-bit float."""
    if float32:
        body, code, bits = np.asarray(x, dtype="<f4").tobytes(), 3, 32
    else:
        body, code, bits = pcm16(x).tobytes(), 1, 16
    block = bits // 8
    header = b"RIFF" + struct.pack("<I", 36 + len(body)) + b"WAVE"
    header += b"fmt " + struct.pack("<IHHIIHH", 16, code, 1, rate, rate * block, block, bits)
    header += b"data" + struct.pack("<I", len(body))
    with open(path, "wb") as f:
        f.write(header + body)
