"""``history.jsonl``: one line of totals per run, so the report can show coverage over time.

The file lives in the report dir and only grows. Re-rendering a run (``npu-codemod report``)
does not add it twice: a run is identified by its record's ``id`` (older records without one:
by their start and finish times). One point per state of the campaign: a run that was
interrupted adds none (its unfinished repositories would read as a drop); the run that
resumes it (``--only-failed``, whose record carries the finished repositories over) does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Optional

from npu_codemod.orchestrator.run_record import RunRecord

from .atomic import write_atomic
from .summary import Overview, Run

HISTORY_FILE = "history.jsonl"


def run_totals(run: Run, overview: Optional[Overview] = None) -> dict[str, Any]:
    """The numbers of one run that are worth tracking across runs (``overview``: the run's,
    when the caller has it, so the repos are not read again)."""
    record = RunRecord.of(run)
    overview = overview or Overview.of(record)
    return {
        "id": record.id,
        "started": record.started,
        "finished": record.finished,
        "command": record.command,
        "repos": overview.repo_counts,
        "findings": overview.totals,
        "coverage": overview.coverage,
        "api_readiness": overview.readiness,
        "sites": overview.sites.to_dict(),  # left: the one figure of what is left
        "verdicts": dict(overview.verdict_counts),
        "carried_over": record.option("carried_over", 0),
    }


def read_history(report_dir: Path) -> list[dict[str, Any]]:
    """Entries of the history file, oldest first; lines that are not entries are ignored."""
    try:
        lines = (report_dir / HISTORY_FILE).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    entries = []
    for line in lines:
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue  # a hand-edited or truncated line must not cost the report
        if isinstance(entry, dict) and "findings" in entry:
            entries.append(entry)
    return entries


def append_history(run: Run, report_dir: Path,
                   overview: Optional[Overview] = None) -> list[dict[str, Any]]:
    """Add this run's totals (once) and return the whole history, oldest first."""
    record = RunRecord.of(run)
    entries = read_history(report_dir)
    entry = run_totals(record, overview)
    if record.interrupted or any(_same_run(old, entry) for old in entries):
        return entries
    path = report_dir / HISTORY_FILE
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    if old and not old.endswith("\n"):
        old += "\n"
    write_atomic(path, old + json.dumps(entry, ensure_ascii=False, sort_keys=True) + "\n")
    return entries + [entry]


def _same_run(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    if old.get("id") or new.get("id"):
        return old.get("id") == new.get("id")
    return (old.get("started"), old.get("finished")) == (new.get("started"), new.get("finished"))
