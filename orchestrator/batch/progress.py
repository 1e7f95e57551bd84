"""The one progress bar of a batch: a fixed width (nothing moves as names come and go), the
counts so far, the files done, and the repositories in flight, by name as the list gives
them (a long name is cut at its end, never its start).

tqdm is imported only when a bar is shown: ``--no-progress`` runs (CI, the bench) skip its
import and its ``importlib.metadata`` look-up of its own version (about 50 M instructions)."""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any, Sequence

#: Characters of the text after the bar: counts, files, the names in flight.
TEXT_WIDTH = 72
BAR_FORMAT = "repos {n_fmt}/{total_fmt} |{bar:20}| {desc}"
#: Whether this process has shown a bar: then lines go through tqdm, which keeps the bar whole.
_bar_shown = False


def write_line(line: str) -> None:
    """``line`` on stderr, above the progress bar if one is shown."""
    if _bar_shown:
        from tqdm import tqdm  # imported already by the bar

        tqdm.write(line, file=sys.stderr)
    else:
        print(line, file=sys.stderr)


def progress_text(counts: Counter[str], files: int, in_flight: Sequence[str], width: int = TEXT_WIDTH) -> str:
    """``changed 3 unchanged 1 failed 0 files 120 | alpha, beta (+2)``, exactly ``width`` long."""
    text = (f"changed {counts['changed']} unchanged {counts['unchanged']} failed {counts['failed']} "
            f"files {files}")
    room = width - len(text) - 3
    if in_flight and room > 4:
        shown = 1
        while shown < len(in_flight) and len(_names(in_flight, shown + 1)) <= room:
            shown += 1
        names = _names(in_flight, shown)
        if len(names) > room:  # one long name: cut at its end, keep the count of the others
            rest = names[len(in_flight[0]):]
            names = in_flight[0][:max(1, room - len(rest) - 1)] + "…" + rest
        text += " | " + names
    return text[:width - 1] + "…" if len(text) > width else text.ljust(width)


def _names(in_flight: Sequence[str], shown: int) -> str:
    more = len(in_flight) - shown
    return ", ".join(in_flight[:shown]) + (f" (+{more})" if more else "")


class ProgressBar:
    """What :func:`runner.run_jobs` shows as repositories start and end."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.counts: Counter[str] = Counter()
        self.files = 0
        self.in_flight: dict[int, str] = {}  # in the order they started
        self.bar = _shown_bar(total) if enabled else _NoBar()

    def started(self, index: int, name: str) -> None:
        self.in_flight[index] = name
        self._show()

    def add_files(self, count: int) -> None:
        self.files += count

    def ended(self, index: int, status: str) -> None:
        self.in_flight.pop(index, None)
        self.counts[status] += 1
        self._show()
        self.bar.update()

    def _show(self) -> None:
        self.bar.set_description_str(progress_text(self.counts, self.files, list(self.in_flight.values())))

    def __enter__(self) -> "ProgressBar":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.bar.close()


def _shown_bar(total: int) -> Any:
    """tqdm's bar on stderr; the first frame as wide as the rest."""
    global _bar_shown
    from tqdm import tqdm  # only a run that shows a bar pays tqdm's import

    # tqdm's monitor thread only tunes bars that stall; it would make every worker started
    # after the first bar a spawned one instead of a fork (see process_pool).
    tqdm.monitor_interval = 0
    _bar_shown = True
    return tqdm(total=total, file=sys.stderr, bar_format=BAR_FORMAT, desc=progress_text(Counter(), 0, ()))


class _NoBar:
    """What ``--no-progress`` shows: nothing."""

    def update(self) -> None:
        pass

    def set_description_str(self, text: str) -> None:
        pass

    def close(self) -> None:
        pass
