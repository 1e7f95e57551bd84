"""Dry-run output: one ``.patch`` per changed repo, appliable with ``git apply``."""

from __future__ import annotations

import re
from pathlib import Path

from npu_codemod.orchestrator.run_record import RunRecord

from .atomic import write_atomic
from .summary import Run

PATCH_DIR = "patches"


def write_patches(run: Run, report_dir: Path) -> list[Path]:
    written = []
    for index, repo in enumerate(RunRecord.of(run).repos, start=1):
        if not repo.patch:
            continue
        directory = report_dir / PATCH_DIR
        directory.mkdir(exist_ok=True)
        path = directory / f"{index:03d}-{_slug(repo.repo)}.patch"
        write_atomic(path, repo.patch, newline="")
        written.append(path)
    _remove_stale(report_dir / PATCH_DIR, written)
    return written


def _remove_stale(directory: Path, written: list[Path]) -> None:
    """An earlier run's patches are not this run's: a repository no longer changed, or listed
    at another place, must not leave its old patch to be applied by mistake."""
    for stale in set(directory.glob("*.patch")) - set(written) if directory.is_dir() else ():
        stale.unlink(missing_ok=True)


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name.rstrip("/").rsplit("/", 1)[-1] or "repo")[:60]
