"""``--pr-rate N/min``: spacing writes to a forge so a batch never floods it."""

from __future__ import annotations

import re
import time
from typing import Callable, Optional

_RATE = re.compile(r"^\s*(?P<count>\d+(?:\.\d+)?)\s*(?:/\s*(?P<unit>s|sec|min|h|hour))?\s*$")
_SECONDS = {"s": 1, "sec": 1, "min": 60, "h": 3600, "hour": 3600}


def parse_rate(text: str) -> Optional[float]:
    """Seconds between two writes for ``N/min`` (also ``N/s``, ``N/h``; bare N is per minute);
    None for ``0`` (no pacing). ValueError with the reason otherwise."""
    match = _RATE.match(text)
    if not match:
        raise ValueError(f"--pr-rate {text!r}: expected N/min, N/s or N/h")
    count = float(match.group("count"))
    return _SECONDS[match.group("unit") or "min"] / count if count else None


class Pacer:
    """Waits before each write until ``interval`` seconds have passed since the previous one."""

    def __init__(self, interval: Optional[float], sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.interval, self._sleep, self._clock = interval, sleep, clock
        self._last: Optional[float] = None

    def wait(self) -> None:
        if self.interval and self._last is not None:
            self._sleep(max(0.0, self._last + self.interval - self._clock()))
        self._last = self._clock()


class PrBudget:
    """``--max-prs N`` and ``--prs-per-hour N``: how many pull requests one run opens, over the
    whole run (every repository's, one budget in the orchestrating process).

    :meth:`take` before each new pull request: False once ``max_prs`` are open (the rest wait
    for the next run), else it waits until fewer than ``per_hour`` were opened in the last hour.
    """

    HOUR = 3600.0

    def __init__(self, max_prs: Optional[int] = None, per_hour: Optional[int] = None,
                 sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic,
                 log: Callable[[str], None] = lambda line: None) -> None:
        self.max_prs, self.per_hour = max_prs, per_hour
        self._sleep, self._clock, self._log = sleep, clock, log
        self.opened: list[float] = []  # when each PR of this run was opened

    @property
    def spent(self) -> bool:
        return self.max_prs is not None and len(self.opened) >= self.max_prs

    def reason(self) -> str:
        return f"--max-prs {self.max_prs}: this run has opened its {self.max_prs} pull request(s)"

    def take(self) -> bool:
        if self.spent:
            return False
        if self.per_hour and len(self.opened) >= self.per_hour:
            wait = self.opened[-self.per_hour] + self.HOUR - self._clock()
            if wait > 0:
                self._log(f"npu-codemod: --prs-per-hour {self.per_hour}: {self.per_hour} pull "
                          f"request(s) opened in the last hour; waiting {wait / 60:.0f} min")
                self._sleep(wait)
        self.opened.append(self._clock())
        return True


def positive_count(option: str, value: Optional[int]) -> Optional[int]:
    """``value`` of a count option; ValueError naming ``option`` unless it is at least 1."""
    if value is not None and value < 1:
        raise ValueError(f"{option} must be at least 1")
    return value
