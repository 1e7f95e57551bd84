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
