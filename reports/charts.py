"""Geometry of the report's inline SVG charts (numbers only; the template draws and escapes).

Charts are computed here rather than drawn with a JavaScript library: the page must open from
disk with no network, and numbers are easy to test.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import AbstractSet, Any, Mapping, Optional, Sequence

from .summary import coverage

#: Width in px of a 100 % bar, and height of one bar row.
BAR_AREA, BAR_ROW = 300, 24
#: Where the bars start, and how many characters of a label fit before them (the labels are
#: 12px monospace, about 7.2px a character: 30 of them end well before the bar).
BAR_LEFT, LABEL_CHARS = 240, 30
#: At most this many dated ticks under the coverage-over-time chart (each is ~100px wide).
MAX_TICKS = 5
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
    report_only: bool = False  # a rule that rewrites nothing: its coverage says nothing

    @property
    def short_label(self) -> str:
        """The label as it fits before the bar: long ones keep their start and end."""
        return short_label(self.label, LABEL_CHARS)


def short_label(label: str, chars: int) -> str:
    """``label`` in at most ``chars`` characters, the middle elided (``github.com/o…/model``)."""
    if len(label) <= chars:
        return label
    head = (chars - 1) // 2
    return label[:head] + "\u2026" + label[len(label) - (chars - 1 - head):]


@dataclass(frozen=True)
class BarChart:
    bars: tuple[Bar, ...]
    height: int


def bar_chart(totals: Mapping[str, Mapping[str, int]],
              report_only: AbstractSet[str] = frozenset()) -> BarChart:
    """One horizontal bar per key (a rule or a repo), its length the coverage; keys in
    ``report_only`` (rules that rewrite nothing) get no bar, and "report only" for a value."""
    bars = []
    for index, (label, counts) in enumerate(totals.items()):
        only = label in report_only
        value = None if only else coverage(counts)
        bars.append(Bar(label, value, counts["migrated"], counts["unmigrated"], counts["error"],
                        y=index * BAR_ROW, width=round((value or 0.0) * BAR_AREA, 1),
                        report_only=only))
    return BarChart(tuple(bars), height=max(1, len(bars)) * BAR_ROW)


@dataclass(frozen=True)
class Point:
    x: float
    y: float
    label: str
    coverage: float


@dataclass(frozen=True)
class Tick:
    x: float
    label: str  # the run's date and time, ``2026-01-31 14:05``
    anchor: str = "middle"  # SVG text-anchor: the first and last stay inside the chart


@dataclass(frozen=True)
class LineChart:
    """Rules coverage (``points``, ``path``) and API readiness (``readiness_points``,
    ``readiness_path``: runs that counted it) of each run, with dated ticks under the x axis.
    ``runs`` is how many runs had something to migrate; with one, the page states its figures
    rather than drawing a line of one dot."""

    points: tuple[Point, ...]
    path: str  # SVG path data through the points
    readiness_points: tuple[Point, ...] = ()
    readiness_path: str = ""
    ticks: tuple[Tick, ...] = ()
    width: int = LINE_WIDTH + 2 * LINE_MARGIN
    height: int = LINE_HEIGHT + 2 * LINE_MARGIN
    left: int = LINE_MARGIN
    top: int = LINE_MARGIN
    right: int = LINE_MARGIN + LINE_WIDTH
    bottom: int = LINE_MARGIN + LINE_HEIGHT
    middle: int = LINE_MARGIN + LINE_HEIGHT // 2

    @property
    def runs(self) -> int:
        return len(self.points)


def line_chart(history: Sequence[Mapping[str, Any]]) -> LineChart:
    """Coverage of each run in the history, oldest left; runs with nothing to migrate skipped."""
    runs = [entry for entry in history if entry.get("coverage") is not None]
    step = LINE_WIDTH / (len(runs) - 1) if len(runs) > 1 else 0.0
    xs = [round(LINE_MARGIN + (index * step if step else LINE_WIDTH / 2), 1)
          for index in range(len(runs))]
    points = _series(runs, xs, "coverage")
    readiness = _series(runs, xs, "api_readiness")
    chosen = sorted({round(i * (len(runs) - 1) / (MAX_TICKS - 1)) for i in range(MAX_TICKS)}) \
        if len(runs) > 1 else [0] * len(runs)
    ticks = tuple(Tick(xs[index], run_time(runs[index]),
                       "start" if index == 0 else "end" if index == len(runs) - 1 else "middle")
                  for index in chosen)
    return LineChart(points, _path(points), readiness, _path(readiness), ticks)


def _series(runs: Sequence[Mapping[str, Any]], xs: Sequence[float], key: str) -> tuple[Point, ...]:
    return tuple(Point(x=x, y=round(LINE_MARGIN + (1 - entry[key]) * LINE_HEIGHT, 1),
                       label=str(entry.get("finished") or entry.get("started") or ""),
                       coverage=entry[key])
                 for x, entry in zip(xs, runs) if entry.get(key) is not None)


def _path(points: Sequence[Point]) -> str:
    return " ".join(f"{'M' if i == 0 else 'L'}{p.x},{p.y}" for i, p in enumerate(points))


def run_time(entry: Mapping[str, Any]) -> str:
    """When a run finished, as the chart labels it: ``2026-01-31 14:05`` (the record's own
    time zone, UTC for npu-codemod's records)."""
    stamp = str(entry.get("finished") or entry.get("started") or "")
    return stamp[:16].replace("T", " ")
