"""A batch over many repositories, as a library call: ``run``, ``scan`` and ``demo`` use it.

options + toolkit + repo list -> jobs -> the pool (one record per repository, streamed to the
spool as each ends, published as a PR when asked) -> the run record -> every report. Like
all-repos' ``fix()``: the command line only parses, calls :func:`run` and prints.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from tqdm import tqdm

from npu_codemod.orchestrator.batch.file_cache import cache_problem
from npu_codemod.orchestrator.batch.jobs import RepoJob
from npu_codemod.orchestrator.batch.options import BatchOptions, make_pool
from npu_codemod.orchestrator.batch.runner import run_jobs
from npu_codemod.orchestrator.batch.spool import ResultSpool
from npu_codemod.orchestrator.notify import Notifier, cannot_write, make_report_dir, write_reports
from npu_codemod.orchestrator.prs.publish import Publisher
from npu_codemod.orchestrator.redact import mask_record
from npu_codemod.orchestrator.repolist import RepoEntry
from npu_codemod.orchestrator.results import RepoResult, failed
from npu_codemod.orchestrator.run_record import build_run_record, now
from npu_codemod.orchestrator.summary_table import RepoLine
from npu_codemod.orchestrator.toolkit import Toolkit

#: The error of a repository an interrupted run did not finish.
INTERRUPTED = "interrupted before it finished: rerun, or rerun with --only-failed RUN_JSON"
#: Called with (index in the list, result) as each repository ends, after it is spooled.
OnResult = Callable[[int, RepoResult], None]


@dataclass
class BatchOutcome:
    """What a batch gave: one line per repository, the reports written, and the interrupt
    that ended it early (re-raised by the caller after the reports are out)."""

    lines: list[RepoLine]
    report_dir: Path
    written: list[Path] = field(default_factory=list)
    interrupted: Optional[KeyboardInterrupt] = None

    @property
    def failed(self) -> bool:
        return any(line.status == "failed" or line.pr_failed for line in self.lines)


def run(options: BatchOptions, toolkit: Toolkit, entries: Sequence[RepoEntry],
        on_result: Optional[OnResult] = None) -> BatchOutcome:
    """Process every entry, write every report; never raises for one repository's failure.

    Ctrl-C/SIGTERM: the repositories that did not finish are recorded as failed
    (:data:`INTERRUPTED`), the reports are written, and the outcome carries the interrupt."""
    started = now()
    jobs = make_jobs(options, entries)
    pool = make_pool(options)  # a scheduler that cannot be reached fails before any report dir
    report_dir = make_report_dir(options.report_dir)  # before the batch: records spool there
    lines: list[Optional[RepoLine]] = [None] * len(jobs)
    interrupted: Optional[KeyboardInterrupt] = None
    with _open_spool(report_dir, len(jobs)) as spool:
        finish = _Finisher(options, toolkit, entries, (report_dir, spool), lines, on_result)
        try:
            with pool:
                run_jobs(jobs, pool, finish, options.progress, options.repo_timeout)
        except KeyboardInterrupt as exc:  # reports of what finished, so --only-failed resumes
            interrupted = exc
            for index, line in enumerate(lines):
                if line is None:
                    finish(index, failed(entries[index], INTERRUPTED))
        record = build_run_record(options.command, _recorded_options(options, toolkit),
                                  toolkit.rules, spool, started, toolkit.plugins)
        written = write_reports(toolkit.plugins, record, report_dir)
    return BatchOutcome([line for line in lines if line is not None], report_dir, written,
                        interrupted)


def make_jobs(options: BatchOptions, entries: Sequence[RepoEntry]) -> list[RepoJob]:
    """One picklable job per entry."""
    cache = bool(entries) and _use_cache(options)
    return [RepoJob(entry=entry, mode=options.command, branch=options.branch,
                    dry_run=options.dry_run, workspace=str(options.workspace),
                    selection=options.selection, push=options.push, remote=options.remote,
                    force_push=options.force_push, split_by=options.split_by, cache=cache,
                    include_tests=options.include_tests)
            for entry in entries]


class _Finisher:
    """What happens as each repository ends: its PR, its record in the spool, its line, the
    plugins' result hooks, then the caller's ``on_result``."""

    def __init__(self, options: BatchOptions, toolkit: Toolkit, entries: Sequence[RepoEntry],
                 spooled: tuple[Path, ResultSpool], lines: list[Optional[RepoLine]],
                 on_result: Optional[OnResult]) -> None:
        self.options, self.toolkit, self.entries = options, toolkit, entries
        (self.report_dir, self.spool), self.lines, self.on_result = spooled, lines, on_result
        self.notify = Notifier(toolkit.plugins)
        self.publisher = _publisher(options, toolkit)

    def __call__(self, index: int, result: RepoResult) -> None:
        if self.publisher is not None:
            result = self.publisher.publish(self.entries[index], result)
        record = mask_record(result.to_dict())
        try:
            self.spool.add(index, record)
        except OSError as exc:
            raise cannot_write(self.report_dir, exc) from None
        self.lines[index] = RepoLine.of(result)
        plugins = self.toolkit.plugins
        if plugins.implements("npu_codemod_repo_result"):
            self.notify("npu_codemod_repo_result", result=record, options=self.options.namespace)
        if plugins.implements("npu_codemod_finding"):
            for finding in result.findings:
                self.notify("npu_codemod_finding", finding=finding)
        if self.on_result is not None:
            self.on_result(index, result)


def _publisher(options: BatchOptions, toolkit: Toolkit) -> Optional[Publisher]:
    """What proposes each repository's branch as it ends (``--open-prs``), or None."""
    if options.prs is None:
        return None
    rules = {r.id: {"name": r.name, "description": r.description, "guide_section": r.guide_section,
                    "guide_section_en": r.guide_section_en, "guide_url": r.guide_url}
             for r in toolkit.rules}
    return Publisher(options.prs, toolkit.plugins.pm.hook, rules, options.branch,
                     log=lambda line: tqdm.write(line, file=sys.stderr))


def _use_cache(options: BatchOptions) -> bool:
    """The workspace's result cache, unless ``--no-cache`` or Dask (SQLite's WAL needs every
    process on one host); one warning when it cannot be opened, and the run goes on without."""
    if not options.cache or options.executor != "local":
        return False
    problem = cache_problem(str(options.workspace))
    if problem:
        print(f"npu-codemod: warning: {problem}", file=sys.stderr)
    return not problem


def _open_spool(report_dir: Path, count: int) -> ResultSpool:
    try:
        return ResultSpool(report_dir, count)
    except OSError as exc:
        raise cannot_write(report_dir, exc) from None


def _recorded_options(options: BatchOptions, toolkit: Toolkit) -> dict[str, Any]:
    """The options run.json records."""
    return {"repos": options.repos, "branch": options.branch if options.command == "run" else None,
            "dry_run": options.dry_run, "include_tests": options.include_tests,
            "rules": [r.id for r in toolkit.rules]}
