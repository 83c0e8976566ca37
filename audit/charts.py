"""Horizontal bar charts as plain geometry, drawn as SVG by ``audit/_chart.html``.

No script and no library: the page is drawn on the server, works without
JavaScript, and prints. Labels stay text for the template to escape; every
number is formatted here, so the template never localises a coordinate.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

LABEL_WIDTH = 170
PLOT_WIDTH = 440
VALUE_WIDTH = 110
ROW_GAP = 10
BAR_HEIGHT = 14
TOP = 6
WIDTH = LABEL_WIDTH + PLOT_WIDTH + VALUE_WIDTH


@dataclasses.dataclass(frozen=True)
class Series:
    name: str
    css: str


@dataclasses.dataclass(frozen=True)
class Rect:
    x: str
    y: str
    width: str
    height: str
    css: str
    title: str


@dataclasses.dataclass(frozen=True)
class Text:
    x: str
    y: str
    text: str
    anchor: str


@dataclasses.dataclass(frozen=True)
class Chart:
    title: str
    width: int
    height: int
    series: list[Series]
    rects: list[Rect]
    texts: list[Text]


def _n(value: float) -> str:
    return f"{value:.1f}"


def stacked(title: str, series: Sequence[Series], rows: Sequence[tuple[str, Sequence[float]]],
            fmt: Callable[[float], str]) -> Chart:
    """One bar per row, split into the series' shares of the row's total (each row fills the width)."""
    rects, texts = [], []
    for index, (label, values) in enumerate(rows):
        y = TOP + index * (BAR_HEIGHT + ROW_GAP)
        texts.append(Text(_n(LABEL_WIDTH - 8), _n(y + BAR_HEIGHT - 3), label, "end"))
        total = sum(values)
        x = float(LABEL_WIDTH)
        for one, value in zip(series, values, strict=True):
            width = PLOT_WIDTH * value / total if total else 0
            if width > 0:
                title_text = f"{label}: {one.name} {fmt(value / total)}"
                rects.append(Rect(_n(x), _n(y), _n(width), _n(BAR_HEIGHT), one.css, title_text))
            x += width
    return Chart(title, WIDTH, _height(len(rows), 1), list(series), rects, texts)


def grouped(title: str, series: Sequence[Series], rows: Sequence[tuple[str, Sequence[float | None]]],
            fmt: Callable[[float], str]) -> Chart:
    """For each row, one thin bar per series, all on one scale (the largest value fills the width)."""
    largest = max((value for _, values in rows for value in values if value), default=0)
    rects, texts = [], []
    row_height = len(series) * BAR_HEIGHT
    for index, (label, values) in enumerate(rows):
        y = TOP + index * (row_height + ROW_GAP)
        texts.append(Text(_n(LABEL_WIDTH - 8), _n(y + row_height / 2 + 4), label, "end"))
        for offset, (one, value) in enumerate(zip(series, values, strict=True)):
            bar_y = y + offset * BAR_HEIGHT
            width = PLOT_WIDTH * value / largest if value and largest else 0
            shown = fmt(value) if value is not None else "—"
            title_text = f"{label}: {one.name} {shown}"
            rects.append(Rect(_n(LABEL_WIDTH), _n(bar_y + 1), _n(width), _n(BAR_HEIGHT - 2), one.css, title_text))
            texts.append(Text(_n(LABEL_WIDTH + width + 4), _n(bar_y + BAR_HEIGHT - 3), shown, "start"))
    return Chart(title, WIDTH, _height(len(rows), len(series)), list(series), rects, texts)


def _height(rows: int, bars_per_row: int) -> int:
    return TOP * 2 + rows * (bars_per_row * BAR_HEIGHT + ROW_GAP)


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
