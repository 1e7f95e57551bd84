"""``run.json``: the complete run record, enough to re-render every report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from .atomic import write_atomic
from .json_text import readable_json

RUN_JSON = "run.json"


def write_run_json(run: Mapping[str, Any], report_dir: Path) -> list[Path]:
    path = report_dir / RUN_JSON
    write_atomic(path, readable_json(run))
    return [path]


def read_run_json(path: Path) -> dict[str, Any]:
    """Load a run record; ValueError with a one-line reason when it is not one."""
    try:
        run = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not a run record (invalid JSON: {exc})") from None
    if not isinstance(run, dict) or not isinstance(run.get("repos"), list):
        raise ValueError(f"{path}: not a run record (no 'repos' list)")
    return run
