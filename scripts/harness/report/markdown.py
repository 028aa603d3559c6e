"""Figures as Markdown text: numbers, ratios and table headers; a dash for what was not measured."""
from harness.measure.bench_figures import is_number


def number(x, pattern="{:.1f}"):
    """A figure as text, or a dash when it was not measured."""
    return pattern.format(x) if is_number(x) else "–"


def ratio(a, b):
    """a / b to two decimals, or a dash when either is missing or b is zero."""
    if not is_number(a) or not is_number(b) or b == 0:
        return "–"
    return f"{a / b:.2f}"


def table_header(*columns):
    """A Markdown table's header row and the separator row under it."""
    return ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
