"""Measurement: calls run and measured, signals analysed, figures taken."""
