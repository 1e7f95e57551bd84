"""Options for running over many repositories: where the jobs run, how long a repository may
take, pushing the branches, and rerunning only what failed."""

from __future__ import annotations

import argparse
from typing import Sequence

from npu_codemod.orchestrator.batch.process_pool import ProcessPool
from npu_codemod.orchestrator.redact import mask_secrets
from npu_codemod.orchestrator.repolist import RepoEntry
from npu_codemod.orchestrator.batch.runner import Pool


class OptionError(Exception):
    """A bad option value: one line on stderr, exit code 2."""


def add_executor_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--executor", choices=("local", "dask"), default="local",
                        help="local worker processes (--jobs) or a Dask cluster (--scheduler)")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="Dask scheduler address for --executor dask, e.g. tcp://host:8786")
    parser.add_argument("--repo-timeout", type=float, metavar="SECONDS",
                        help="a repository taking longer fails with this reason; the batch goes on")
    parser.add_argument("--only-failed", metavar="RUN_JSON",
                        help="process only the repos of the list that failed in that earlier run")


def add_push_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--push", action="store_true", help="push each migration branch")
    parser.add_argument("--remote", default="origin", help="remote to push to (default: %(default)s)")
    parser.add_argument("--force-push", action="store_true",
                        help="allow replacing a remote branch that was rebuilt on a new base")


def make_pool(args: argparse.Namespace) -> Pool:
    """The pool the options ask for; OptionError when it cannot be had."""
    if args.repo_timeout is not None and args.repo_timeout <= 0:
        raise OptionError("--repo-timeout must be a positive number of seconds")
    if getattr(args, "force_push", False) and not args.push:
        raise OptionError("--force-push needs --push")
    if args.executor == "local":
        if args.jobs < 1:
            raise OptionError("--jobs must be at least 1")
        return ProcessPool(args.jobs)
    if not args.scheduler:
        raise OptionError("--executor dask needs --scheduler ADDRESS")
    try:
        from npu_codemod.orchestrator.batch.dask_pool import DaskPool
    except ImportError:
        raise OptionError("--executor dask needs the dask extra: pip install 'npu-codemod[dask]'") from None
    try:
        return DaskPool(args.scheduler)
    except (OSError, TimeoutError) as exc:
        raise OptionError(f"cannot reach the Dask scheduler at {args.scheduler}: {exc}") from None


def only_failed(entries: Sequence[RepoEntry], run: dict) -> list[RepoEntry]:
    """The entries whose repo failed in the run record ``run``."""
    # Name and location: a malformed line is named by its first field, like a good entry.
    failed = {(repo.get("repo"), repo.get("location")) for repo in run["repos"]
              if repo.get("status") == "failed"}
    return [entry for entry in entries
            if (entry.name, mask_secrets(entry.location)) in failed or (entry.name, None) in failed]
