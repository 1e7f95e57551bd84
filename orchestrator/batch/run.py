"""A batch over many repositories, as a library call: ``run``, ``scan`` and ``demo`` use it.

options + loaded_rules + repo list -> jobs -> the pool (one record per repository, streamed to the
spool as each ends, published as a PR when asked) -> the run record -> every report. Like
all-repos' ``fix()``: the command line only parses, calls :func:`run` and prints.
"""

from __future__ import annotations

import dataclasses
import errno
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Optional, Sequence

from npu_codemod.orchestrator.batch import locks
from npu_codemod.orchestrator.batch.batch_options import BatchOptions, make_pool
from npu_codemod.orchestrator.batch.file_cache import cache_problem
from npu_codemod.orchestrator.batch.jobs import RepoJob
from npu_codemod.orchestrator.batch.locks import LockOwner
from npu_codemod.orchestrator.batch.progress import write_line
from npu_codemod.orchestrator.batch.repo_locks import refresh_branch_lock
from npu_codemod.orchestrator.batch.runner import run_jobs
from npu_codemod.orchestrator.batch.spool import ResultSpool
from npu_codemod.orchestrator.errors import UsageError
from npu_codemod.orchestrator.loaded_rules import LoadedRules
from npu_codemod.orchestrator.plugin_hooks import HookCaller, cannot_write, make_report_dir, write_reports
from npu_codemod.orchestrator.prs.change_comment import previous_sites
from npu_codemod.orchestrator.prs.publish import Publisher
from npu_codemod.orchestrator.redact import mask_record
from npu_codemod.orchestrator.repolist import RepoEntry
from npu_codemod.orchestrator.results import RepoResult, failed
from npu_codemod.orchestrator.run_record import build_run_record, now, rule_record
from npu_codemod.orchestrator.summary_table import RepoLine
from npu_codemod.orchestrator.verify.records import FAILING
from npu_codemod.reports.json_report import RUN_JSON

#: The error of a repository an interrupted run did not finish.
INTERRUPTED = "interrupted before it finished: rerun, or rerun with --only-failed RUN_JSON"
#: The report dir's lock file (:mod:`.locks`): the run writing it.
REPORT_DIR_LOCK = ".npu-codemod.lock"
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
    carried: int = 0  # records taken from an earlier run (--only-failed), not processed
    #: Why the reports could not be written (a full disk): the repositories' work stands.
    report_error: Optional[str] = None
    branches: list[str] = field(default_factory=list)  # "repo (branch)" of each branch committed

    @property
    def failed(self) -> bool:
        return self.report_error is not None or any(
            line.status == "failed" or line.pr_failed or line.verdict in FAILING for line in self.lines)


def run(options: BatchOptions, loaded_rules: LoadedRules, entries: Sequence[RepoEntry],
        on_result: Optional[OnResult] = None,
        carried: Optional[Mapping[int, Mapping[str, Any]]] = None) -> BatchOutcome:
    """Process every entry, write every report; never raises for one repository's failure.
    ``carried``: records of an earlier run taken as they are, by entry index (``--only-failed``,
    :mod:`.resume`); those entries are not processed, and the reports cover all of ``entries``.

    Ctrl-C/SIGTERM: the repositories that did not finish are recorded as failed
    (:data:`INTERRUPTED`), the reports are written, and the outcome carries the interrupt."""
    started = now()
    owner = LockOwner.of_this_process()
    carried = carried or {}
    # Repositories start in wave= order, then list order (--max-prs spends on the first waves).
    todo = sorted((index for index in range(len(entries)) if index not in carried),
                  key=lambda index: (entries[index].wave, index))
    jobs = make_jobs(options, [entries[index] for index in todo], owner)
    pool = make_pool(options)  # a scheduler that cannot be reached fails before any report dir
    report_dir = make_report_dir(options.report_dir)  # before the batch: records spool there
    lines: list[Optional[RepoLine]] = [None] * len(jobs)
    interrupted: Optional[KeyboardInterrupt] = None
    with report_dir_locked(report_dir, owner, options.wait), _open_spool(report_dir, len(entries)) as spool:
        for index, record in carried.items():
            spool.add(index, record)
        finish = _ResultHandler(options, loaded_rules, (entries, todo), (report_dir, spool), lines, on_result)
        try:
            with pool:
                run_jobs(jobs, pool, finish, options.progress, options.repo_timeout, finish.deferral,
                         heartbeat=_heartbeat(jobs, report_dir / REPORT_DIR_LOCK, owner))
        except KeyboardInterrupt as exc:  # reports of what finished, so --only-failed resumes
            interrupted = exc
            for index, line in enumerate(lines):
                if line is None:
                    finish(index, failed(entries[todo[index]], INTERRUPTED))
        written: list[Path] = []
        report_error = finish.write_error
        if report_error is None:
            try:
                record = build_run_record(options.command, _recorded_options(options, loaded_rules, carried),
                                          loaded_rules.rules, spool, started, loaded_rules.plugins)
                record["interrupted"] = interrupted is not None  # its history point is no campaign state
                written = write_reports(loaded_rules.plugins, record, report_dir)
            except UsageError as exc:
                if not _disk_full(exc.__context__):  # a folder where a report goes: the user's to fix
                    raise
                report_error = str(exc)  # what the repositories got stands
    return BatchOutcome([line for line in lines if line is not None], report_dir, written,
                        interrupted, carried=len(carried), report_error=report_error,
                        branches=[branch for _, branch in sorted(finish.branches)])


def _heartbeat(jobs: Sequence[RepoJob], report_lock: Path, owner: LockOwner) -> Callable[[Sequence[int]], None]:
    """What the runner calls every :data:`locks.HEARTBEAT_SECONDS` with the repositories in
    flight: touch the report dir's lock and theirs, so no other host takes them over."""
    def beat(in_flight: Sequence[int]) -> None:
        locks.refresh(report_lock, owner)
        for index in in_flight:
            refresh_branch_lock(jobs[index])

    return beat


def make_jobs(options: BatchOptions, entries: Sequence[RepoEntry],
              owner: Optional[LockOwner] = None) -> list[RepoJob]:
    """One picklable job per entry; ``owner``: the run, which locks each branch it works on."""
    cache = bool(entries) and _use_cache(options)
    return [RepoJob(entry=entry, mode=options.command, branch=options.branch,
                    dry_run=options.dry_run, workspace=str(options.workspace),
                    selection=options.selection, push=options.push, remote=options.remote,
                    force_push=options.force_push, split_by=options.split_by, cache=cache,
                    include_tests=options.include_tests, lock_owner=owner, wait=options.wait,
                    verify=options.verify)
            for entry in entries]


@contextmanager
def report_dir_locked(report_dir: Path, owner: LockOwner, wait: bool) -> Iterator[None]:
    """One run at a time writes a report dir; another one waits (``--wait``) or is refused
    with one line naming the run that has it."""
    path = report_dir / REPORT_DIR_LOCK
    try:
        holder = locks.try_lock(path, owner)
        if holder is not None and wait:
            print(f"npu-codemod: waiting for the run that is writing {report_dir} "
                  f"({holder.describe()})", file=sys.stderr)
            locks.acquire(path, owner, wait=True)
    except OSError as exc:
        raise cannot_write(report_dir, exc) from None
    if holder is not None and not wait:
        raise UsageError(f"report dir {str(report_dir)!r} is in use by another npu-codemod run "
                         f"({holder.describe()}): wait for it with --wait, or use another --report-dir "
                         f"({locks.delete_hint(path)})")
    try:
        yield
    finally:
        locks.release(path, owner)


class _ResultHandler:
    """What happens as each repository ends: its PR, its record in the spool, its line, the
    plugins' result hooks, then the caller's ``on_result``."""

    def __init__(self, options: BatchOptions, loaded_rules: LoadedRules,
                 entries: tuple[Sequence[RepoEntry], Sequence[int]],
                 spooled: tuple[Path, ResultSpool], lines: list[Optional[RepoLine]],
                 on_result: Optional[OnResult]) -> None:
        # The jobs are the entries at ``positions`` (the others were carried over).
        self.options, self.loaded_rules, (self.entries, self.positions) = options, loaded_rules, entries
        (self.report_dir, self.spool), self.lines, self.on_result = spooled, lines, on_result
        self.call_hook = HookCaller(loaded_rules.plugins)
        self.publisher = _publisher(options, loaded_rules, self.report_dir)
        self.write_error: Optional[str] = None  # the first record that could not be spooled
        self.branches: list[tuple[int, str]] = []  # (list position, "repo (branch)")

    def deferral(self) -> Optional[str]:
        """Why the repositories not yet started wait for the next run (the PR budget is
        spent), or None."""
        budget = self.publisher.settings.budget if self.publisher is not None else None
        if budget is None or not budget.spent:
            return None
        return f"deferred to the next run: {budget.reason()}"

    def __call__(self, index: int, result: RepoResult) -> None:
        position = self.positions[index]
        if self.publisher is not None:
            result = self.publisher.publish(self.entries[position], result)
        record = mask_record(result.to_dict())
        self.branches.extend((position, branch) for branch in _branches(result))
        if self.write_error is None:  # after a failed write the spool's offsets are unsure
            try:
                self.spool.add(position, record)
            except OSError as exc:  # a full disk: the batch goes on, the reports are lost
                if not _disk_full(exc):
                    raise cannot_write(self.report_dir, exc) from None
                self.write_error = str(cannot_write(self.report_dir, exc))
        self.lines[index] = RepoLine.of(result)
        plugins = self.loaded_rules.plugins
        if plugins.implements("npu_codemod_repo_result"):
            self.call_hook("npu_codemod_repo_result", result=record, options=self.options.namespace)
        if plugins.implements("npu_codemod_finding"):
            for finding in result.findings:
                self.call_hook("npu_codemod_finding", finding=finding)
        if self.on_result is not None:
            self.on_result(position, result)


#: Errors of a disk that is full (or a quota, or a file-size limit): no fault of the options.
_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def _disk_full(error: Optional[BaseException]) -> bool:
    return isinstance(error, OSError) and error.errno in _FULL


def _branches(result: RepoResult) -> list[str]:
    """``repo (branch)`` of each branch this result committed (a split change: each group's)."""
    if result.groups:
        return [f"{result.repo} ({g.branch})" for g in result.groups if g.branch and g.commit]
    changed = result.status == "changed" and result.branch and result.commit and not result.patch
    return [f"{result.repo} ({result.branch})"] if changed else []


def _publisher(options: BatchOptions, loaded_rules: LoadedRules, report_dir: Path) -> Optional[Publisher]:
    """What proposes each repository's branch as it ends (``--open-prs``), or None; the
    report dir's run record (before this run replaces it) is the state its comments compare with."""
    if options.prs is None:
        return None
    previous = previous_sites(report_dir / RUN_JSON) if (report_dir / RUN_JSON).exists() else None
    rules = {rule.id: rule_record(rule) for rule in loaded_rules.rules}
    return Publisher(options.prs, loaded_rules.plugins.pm.hook, rules, options.branch,
                     log=write_line, previous=previous)


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


def _recorded_options(options: BatchOptions, loaded_rules: LoadedRules,
                      carried: Mapping[int, Mapping[str, Any]]) -> dict[str, Any]:
    """The options run.json records (``carried_over``: how many records an earlier run gave)."""
    return {"repos": options.repos, "branch": options.branch if options.command in ("run", "verify") else None,
            "dry_run": options.dry_run, "include_tests": options.include_tests,
            "rules": [r.id for r in loaded_rules.rules],
            "verify": dataclasses.asdict(options.verify) if options.verify is not None else None,
            "carried_over": len(carried)}
