"""PulseAudio's simple API (libpulse-simple, in Debian's libpulse0) through ctypes: a
recording and a playback stream with the buffer sizes asked, and their latencies."""
import ctypes
import ctypes.util

SAMPLE_S16LE = 3
PLAYBACK, RECORD = 1, 2


class SampleSpec(ctypes.Structure):
    _fields_ = [("format", ctypes.c_int), ("rate", ctypes.c_uint32), ("channels", ctypes.c_uint8)]


class BufferAttr(ctypes.Structure):
    _fields_ = [("maxlength", ctypes.c_uint32), ("tlength", ctypes.c_uint32), ("prebuf", ctypes.c_uint32),
                ("minreq", ctypes.c_uint32), ("fragsize", ctypes.c_uint32)]


def _library():
    lib = ctypes.CDLL(ctypes.util.find_library("pulse-simple") or "libpulse-simple.so.0")
    lib.pa_simple_new.restype = ctypes.c_void_p
    lib.pa_simple_new.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p,
                                  ctypes.POINTER(SampleSpec), ctypes.c_void_p, ctypes.POINTER(BufferAttr),
                                  ctypes.POINTER(ctypes.c_int)]
    for name in ("pa_simple_read", "pa_simple_write"):
        getattr(lib, name).argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_int)]
    lib.pa_simple_get_latency.restype = ctypes.c_uint64
    lib.pa_simple_get_latency.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
    lib.pa_simple_free.argtypes = [ctypes.c_void_p]
    return lib


_lib = None
UNSET = 0xFFFFFFFF


class Stream:
    """One mono 16-bit stream. Recording: `fragment` bytes delivered at a time. Playback:
    `target` bytes kept buffered, playing starts once they are there."""

    def __init__(self, direction, device, rate, name, fragment=UNSET, target=UNSET, minimum=UNSET):
        global _lib
        _lib = _lib or _library()
        spec = SampleSpec(SAMPLE_S16LE, rate, 1)
        attr = BufferAttr(UNSET, target, target if direction == PLAYBACK else UNSET, minimum, fragment)
        error = ctypes.c_int(0)
        self.handle = _lib.pa_simple_new(None, b"acoustic-lab", direction, device.encode(), name.encode(),
                                         ctypes.byref(spec), None, ctypes.byref(attr), ctypes.byref(error))
        if not self.handle:
            raise OSError(f"PulseAudio: cannot open {device} (error {error.value})")

    def read(self, size):
        buffer = ctypes.create_string_buffer(size)
        error = ctypes.c_int(0)
        if _lib.pa_simple_read(self.handle, buffer, size, ctypes.byref(error)) < 0:
            raise OSError(f"PulseAudio read failed (error {error.value})")
        return buffer.raw

    def write(self, data):
        error = ctypes.c_int(0)
        if _lib.pa_simple_write(self.handle, data, len(data), ctypes.byref(error)) < 0:
            raise OSError(f"PulseAudio write failed (error {error.value})")

    def latency_us(self):
        error = ctypes.c_int(0)
        value = _lib.pa_simple_get_latency(self.handle, ctypes.byref(error))
        return None if value == 2 ** 64 - 1 else int(value)

    def close(self):
        if self.handle:
            _lib.pa_simple_free(self.handle)
            self.handle = None
