"""Runs one of the harness's entry points: `python scripts/harness bench|soak|hot_functions|room_echo ARGS...`
(scripts/bench, scripts/soak, scripts/hot-functions and scripts/room-echo do)."""
import importlib
import sys
from pathlib import Path

ENTRY_POINTS = ("bench", "soak", "hot_functions", "room_echo")

if __name__ == "__main__":
    # Run as a directory, Python puts scripts/harness first on the path; the package is
    # imported from scripts/ instead, so that its parts are reached only as harness.lab etc.
    sys.path[0] = str(Path(__file__).resolve().parent.parent)
    if len(sys.argv) < 2 or sys.argv[1] not in ENTRY_POINTS:
        sys.exit(f"usage: python scripts/harness {{{'|'.join(ENTRY_POINTS)}}} [ARGS...]")
    importlib.import_module(f"harness.{sys.argv.pop(1)}").main()
