"""The committed room responses (rooms/, made by make-rooms): loading them by setup name."""
import json
from pathlib import Path

from . import wavio

FOLDER = Path(__file__).resolve().parent / "rooms"


def manifest():
    return json.loads((FOLDER / "rooms.json").read_text())


def names():
    """The setups: ROOM-DEVICE, and office-laptop-lid for an echo path change."""
    return sorted(manifest()["setups"])


def echo_response(setup):
    """Loudspeaker to microphone of `setup` (float64 samples at 48 kHz)."""
    return _load(setup, "echo")


def talker_response(setup):
    """The near-end talker's mouth to the microphone of `setup`."""
    return _load(setup, "talker")


def _load(setup, kind):
    path = FOLDER / f"{setup}.{kind}.wav"
    if not path.exists():
        raise ValueError(f"no room setup '{setup}' (known: {', '.join(names())})")
    return wavio.read_mono48(path)
