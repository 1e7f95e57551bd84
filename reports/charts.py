"""Geometry of the report's inline SVG charts (numbers only; the template draws and escapes).

Charts are computed here rather than drawn with a JavaScript library: the page must open from
disk with no network, and numbers are easy to test.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

from .summary import coverage

#: Width in px of a 100 % bar, and height of one bar row.
BAR_AREA, BAR_ROW = 300, 24
#: Plot area of the coverage-over-time chart, in px.
LINE_WIDTH, LINE_HEIGHT, LINE_MARGIN = 560, 160, 40


@dataclass(frozen=True)
class Bar:
    label: str
    coverage: Optional[float]  # None: nothing to migrate (n/a)
    migrated: int
    unmigrated: int
    error: int
    y: int
    width: float


@dataclass(frozen=True)
class BarChart:
    bars: tuple[Bar, ...]
    height: int


def bar_chart(totals: Mapping[str, Mapping[str, int]]) -> BarChart:
    """One horizontal bar per key (a rule or a repo), its length the coverage."""
    bars = []
    for index, (label, counts) in enumerate(totals.items()):
        value = coverage(counts)
        bars.append(Bar(label, value, counts["migrated"], counts["unmigrated"], counts["error"],
                        y=index * BAR_ROW, width=round((value or 0.0) * BAR_AREA, 1)))
    return BarChart(tuple(bars), height=max(1, len(bars)) * BAR_ROW)


@dataclass(frozen=True)
class Point:
    x: float
    y: float
    label: str
    coverage: float


@dataclass(frozen=True)
class LineChart:
    points: tuple[Point, ...]
    path: str  # SVG path data through the points
    width: int = LINE_WIDTH + 2 * LINE_MARGIN
    height: int = LINE_HEIGHT + 2 * LINE_MARGIN
    left: int = LINE_MARGIN
    top: int = LINE_MARGIN
    right: int = LINE_MARGIN + LINE_WIDTH
    bottom: int = LINE_MARGIN + LINE_HEIGHT


def line_chart(history: Sequence[Mapping[str, Any]]) -> LineChart:
    """Coverage of each run in the history, oldest left; runs with nothing to migrate skipped."""
    runs = [entry for entry in history if entry.get("coverage") is not None]
    step = LINE_WIDTH / (len(runs) - 1) if len(runs) > 1 else 0.0
    points = tuple(
        Point(x=round(LINE_MARGIN + (index * step if step else LINE_WIDTH / 2), 1),
              y=round(LINE_MARGIN + (1 - entry["coverage"]) * LINE_HEIGHT, 1),
              label=str(entry.get("finished") or entry.get("started") or ""),
              coverage=entry["coverage"])
        for index, entry in enumerate(runs)
    )
    path = " ".join(f"{'M' if i == 0 else 'L'}{p.x},{p.y}" for i, p in enumerate(points))
    return LineChart(points, path)
