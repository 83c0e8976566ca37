"""Horizontal bar charts for the statistics page: the geometry here, drawn by ``audit/_chart.html``.

No script and no library: the page is drawn on the server, works without
JavaScript, and prints. Every label and value is HTML text beside its bar (so
it stays at the page's font size at any width, and reads without colour); the
bars are SVG rects sized in percent, filled per series with a colour *and* a
pattern (``audit/_chart_patterns.html``). Numbers are formatted here, so the
template never localises a coordinate.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence


@dataclasses.dataclass(frozen=True)
class Series:
    name: str
    css: str


@dataclasses.dataclass(frozen=True)
class Segment:
    x: str  # percent of the bar's track, e.g. "12.5%"
    width: str
    css: str


@dataclasses.dataclass(frozen=True)
class Bar:
    segments: list[Segment]
    text: str  # what the bar shows, in words: "approve 60 % · reject 40 %", "median 3 min"


@dataclasses.dataclass(frozen=True)
class Row:
    label: str
    bars: list[Bar]


@dataclasses.dataclass(frozen=True)
class Chart:
    title: str
    series: list[Series]
    rows: list[Row]


def _percent_length(value: float) -> str:
    return f"{value:.1f}%"


def stacked(
    title: str, series: Sequence[Series], rows: Sequence[tuple[str, Sequence[float]]], fmt: Callable[[float], str]
) -> Chart:
    """One bar per row, split into the series' shares of the row's total (each row fills the width)."""
    drawn = []
    for label, values in rows:
        total = sum(values)
        segments, words, x = [], [], 0.0
        for one, value in zip(series, values, strict=True):
            width = 100 * value / total if total else 0
            if width > 0:
                segments.append(Segment(_percent_length(x), _percent_length(width), one.css))
                words.append(f"{one.name} {fmt(value / total)}")
            x += width
        drawn.append(Row(label, [Bar(segments, " · ".join(words) or "—")]))
    return Chart(title, list(series), drawn)


def grouped(
    title: str,
    series: Sequence[Series],
    rows: Sequence[tuple[str, Sequence[float | None]]],
    fmt: Callable[[float], str],
) -> Chart:
    """For each row, one bar per series, all on one scale (the largest value fills the width)."""
    largest = max((value for _, values in rows for value in values if value), default=0)
    drawn = []
    for label, values in rows:
        bars = []
        for one, value in zip(series, values, strict=True):
            width = 100 * value / largest if value and largest else 0
            segments = [Segment("0%", _percent_length(width), one.css)] if width else []
            bars.append(Bar(segments, f"{one.name} {fmt(value) if value is not None else '—'}"))
        drawn.append(Row(label, bars))
    return Chart(title, list(series), drawn)


ACTIONS = [Series("approve", "approve"), Series("approve with edits", "edit"), Series("reject", "reject")]
TIMES = [Series("median", "median"), Series("95th percentile", "p95")]
AMOUNTS = [Series("asked", "asked"), Series("approved", "approved")]


def for_rows(who: str, rows, humanize: Callable[[float], str]) -> list[Chart]:
    """The statistics page's three charts for one table (``rows`` are ``stats.Row``)."""
    actions = [(row.label, [row.approve, row.edit, row.reject]) for row in rows]
    times = [(row.label, [row.median_seconds, row.p95_seconds]) for row in rows]
    amounts = [(row.label, [float(row.asked), float(row.approved)]) for row in rows]
    return [
        stacked(f"Item actions per {who}", ACTIONS, actions, _percent),
        grouped(f"Time to decide per {who}", TIMES, times, humanize),
        grouped(f"Amounts asked and approved per {who}", AMOUNTS, amounts, _amount),
    ]


def _percent(share: float) -> str:
    return f"{share * 100:.0f} %"


def _amount(value: float) -> str:
    return f"{value:,.2f}"
