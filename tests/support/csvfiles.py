"""Reading the CSV files a run writes (``findings.csv``, ``summary.csv``, ``repos.csv``...)."""

from __future__ import annotations

import csv
from pathlib import Path


def read_csv(path: Path) -> list[dict[str, str]]:
    """The rows of ``path`` as dicts keyed by its header, in file order."""
    with path.open(encoding="utf-8", newline="") as stream:
        return list(csv.DictReader(stream))
