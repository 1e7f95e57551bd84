"""``run.json``: the complete run record, enough to re-render every report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from npu_codemod.codemods.findings import FINDING_FIELDS

from .atomic import atomic_open
from .json_text import write_readable_json

RUN_JSON = "run.json"


def write_run_json(run: Mapping[str, Any], report_dir: Path) -> list[Path]:
    path = report_dir / RUN_JSON
    with atomic_open(path) as stream:
        write_readable_json(run, stream.write)
    return [path]


def read_run_json(path: Path) -> dict[str, Any]:
    """Load a run record; ValueError with a one-line reason when it is not one.

    Loaded whole (``report``, ``status`` and ``--only-failed`` read it), unlike the batch's
    own records: re-rendering a very large run takes memory in proportion to its run.json.
    """
    try:
        run = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not a run record (invalid JSON: {exc})") from None
    if not isinstance(run, dict) or not isinstance(run.get("repos"), list):
        raise ValueError(f"{path}: not a run record (no 'repos' list)")
    for number, repo in enumerate(run["repos"], start=1):
        problem = _repo_problem(repo)
        if problem:
            raise ValueError(f"{path}: not a run record (repos entry {number}: {problem})")
    return run


def _repo_problem(repo: Any) -> str:
    """What keeps one ``repos`` entry from being reported (every writer reads these keys), or ''."""
    if not isinstance(repo, dict):
        return "not an object"
    missing = [key for key in ("repo", "status", "findings") if key not in repo]
    if missing:
        return f"no {missing[0]!r}"
    if not isinstance(repo["findings"], list):
        return "'findings' is not a list"
    for finding in repo["findings"]:
        if not isinstance(finding, dict):
            return "a finding that is not an object"
        missing = [key for key in FINDING_FIELDS if key not in finding]
        if missing:
            return f"a finding without {missing[0]!r}"
    return ""
