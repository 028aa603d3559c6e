"""Helpers for scripts/bench: signals and measures, the calls it runs, and the report it writes."""
