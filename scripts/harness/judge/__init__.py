"""Judging: measured figures held against their promises and targets."""
