"""Options for running over many repositories, validated before anything happens: where the
jobs run, how long a repository may take, the branch, pushing, pull requests, rerunning only
what failed. :meth:`BatchOptions.from_args` is the one place they are checked."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from npu_codemod.orchestrator import arguments
from npu_codemod.orchestrator.batch.jobs import DEFAULT_BRANCH, Mode
from npu_codemod.orchestrator.batch.process_pool import ProcessPool
from npu_codemod.orchestrator.batch.runner import Key, Pool
from npu_codemod.orchestrator.git.repository import GitError, check_branch_name
from npu_codemod.orchestrator.loaded_rules import RuleSelection
from npu_codemod.orchestrator.prs.groups import SplitBy
from npu_codemod.orchestrator.prs.pr_options import pr_settings
from npu_codemod.orchestrator.prs.publish import PrSettings
from npu_codemod.orchestrator.verify.settings import VerifyOptions
from npu_codemod.orchestrator.verify.verify_options import tensorflow_problem, verify_options

#: Seconds one repository may take unless ``--repo-timeout`` says otherwise: a bound for
#: what no other deadline catches (a remote that trickles, a worker that hangs).
DEFAULT_REPO_TIMEOUT = 3600.0


class OptionError(Exception):
    """A bad option value: one line on stderr, exit code 2."""


def add_executor_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--executor", choices=("local", "dask"), default="local",
                        help="local worker processes (--jobs) or a Dask cluster (--scheduler)")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="Dask scheduler address for --executor dask, e.g. tcp://host:8786")
    parser.add_argument("--repo-timeout", type=float, metavar="SECONDS", default=DEFAULT_REPO_TIMEOUT,
                        help="a repository taking longer fails with this reason; the batch goes on "
                        "(default: %(default)g, so a remote that hangs never blocks the run; raise "
                        "it for larger repositories)")
    parser.add_argument("--only-failed", metavar="RUN_JSON",
                        help="process only the repos of the list that failed in that earlier run")


def add_push_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--push", action="store_true", help="push each migration branch")
    parser.add_argument("--remote", default="origin", help="remote to push to (default: %(default)s)")
    parser.add_argument("--force-push", action="store_true",
                        help="allow replacing a remote branch that was rebuilt on a new base")


@dataclass(frozen=True)
class BatchOptions:
    """Everything a batch (``run``, ``scan``, ``demo``) needs besides the repo list; valid by
    construction through :meth:`from_args`, or built directly by a library caller."""

    command: Mode = "run"
    repos: str = ""  # where the list came from, for run.json
    report_dir: Path = Path("npu-codemod-report")
    workspace: Path = field(default_factory=lambda: Path(arguments.default_workspace()))
    selection: RuleSelection = RuleSelection()
    branch: str = DEFAULT_BRANCH
    dry_run: bool = False
    push: bool = False
    remote: str = "origin"
    force_push: bool = False
    split_by: Optional[SplitBy] = None
    include_tests: bool = False
    jobs: int = os.cpu_count() or 1
    executor: str = "local"
    scheduler: Optional[str] = None
    repo_timeout: Optional[float] = DEFAULT_REPO_TIMEOUT
    progress: bool = True
    cache: bool = True
    debug: bool = False
    wait: bool = False  # --wait: for another run's report dir or branch, instead of refusing
    prs: Optional[PrSettings] = None
    verify: Optional[VerifyOptions] = None  # ``verify`` and ``run --verify``
    #: The parsed arguments, for plugin hooks that read their own options (None: a library run).
    namespace: Optional[argparse.Namespace] = None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> "BatchOptions":
        """The options of ``run``/``scan``, every value checked; OptionError (one line) before
        any file, folder or process exists."""
        _check_values(args)
        try:
            prs = pr_settings(args)
            verify = verify_options(args)
            if args.command in ("run", "verify"):
                args.branch = branch_name(args.branch)
                check_branch_name(args.branch)
        except (ValueError, GitError) as exc:
            raise OptionError(str(exc)) from None
        if verify is not None and tensorflow_problem():
            raise OptionError(tensorflow_problem())
        return cls(
            command=args.command, repos=args.repos, report_dir=Path(args.report_dir),
            workspace=arguments.workspace(args), selection=arguments.rule_selection(args),
            branch=getattr(args, "branch", DEFAULT_BRANCH), dry_run=getattr(args, "dry_run", False),
            push=getattr(args, "push", False), remote=getattr(args, "remote", "origin"),
            force_push=getattr(args, "force_push", False), split_by=getattr(args, "split_by", None),
            include_tests=arguments.include_tests(args), jobs=args.jobs, executor=args.executor,
            scheduler=args.scheduler, repo_timeout=args.repo_timeout,
            progress=not args.no_progress, cache=not getattr(args, "no_cache", False),
            debug=getattr(args, "debug", False), wait=getattr(args, "wait", False), prs=prs,
            verify=verify, namespace=args)


def branch_name(branch: str) -> str:
    """``--branch`` as a branch name: ``refs/heads/x`` is the branch ``x`` (git would make it
    ``refs/heads/refs/heads/x``)."""
    return branch[len("refs/heads/"):] if branch.startswith("refs/heads/") else branch


def _check_values(args: argparse.Namespace) -> None:
    if args.repo_timeout is not None and args.repo_timeout <= 0:
        raise OptionError("--repo-timeout must be a positive number of seconds")
    if getattr(args, "force_push", False) and not getattr(args, "push", False):
        raise OptionError("--force-push needs --push")
    if args.executor == "local" and args.jobs < 1:
        raise OptionError("--jobs must be at least 1")
    if args.executor == "dask" and not args.scheduler:
        raise OptionError("--executor dask needs --scheduler ADDRESS")


def make_pool(options: BatchOptions) -> Pool[Key]:
    """The pool the options ask for; OptionError when it cannot be had."""
    if options.executor == "local":
        return ProcessPool(options.jobs)
    try:
        from npu_codemod.orchestrator.batch.dask_pool import DaskPool
    except ImportError:
        raise OptionError("--executor dask needs the dask extra: pip install 'npu-codemod[dask]'") from None
    try:
        return DaskPool(options.scheduler or "")
    except (OSError, TimeoutError) as exc:
        raise OptionError(f"cannot reach the Dask scheduler at {options.scheduler}: {exc}") from None
