"""``npu-codemod run`` and ``scan``: parse, validate, run the batch, print the summary."""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from typing import Optional, Sequence

from npu_codemod.orchestrator import arguments
from npu_codemod.orchestrator.batch import run as batch
from npu_codemod.orchestrator.batch.batch_options import (
    BatchOptions,
    add_executor_options,
    add_push_options,
)
from npu_codemod.orchestrator.batch.jobs import DEFAULT_BRANCH
from npu_codemod.orchestrator.batch.progress import write_line
from npu_codemod.orchestrator.batch.resume import carried_records
from npu_codemod.orchestrator.commands.common import (
    EXIT_FAILED,
    EXIT_OK,
    loaded_rules_of,
    read_run,
    warn_of_partial_packs,
)
from npu_codemod.orchestrator.errors import UsageError
from npu_codemod.orchestrator.prs.pr_options import add_pr_options
from npu_codemod.orchestrator.redact import mask_secrets
from npu_codemod.orchestrator.repolist import RepoEntry, read_repo_list
from npu_codemod.orchestrator.results import RepoResult
from npu_codemod.orchestrator.summary_table import RepoLine, print_summary
from npu_codemod.orchestrator.verify.records import ALLOWABLE, unproven
from npu_codemod.orchestrator.verify.settings import VerifyOptions
from npu_codemod.orchestrator.verify.verify_options import add_verify_options


def add_to(commands: argparse._SubParsersAction) -> None:
    run = commands.add_parser("run")
    add_batch_options(run)
    run.add_argument("--branch", default=DEFAULT_BRANCH,
                     help="branch to commit to (default: %(default)s)")
    run.add_argument("--dry-run", action="store_true",
                     help="commit nothing; write one .patch per repo into the report dir")
    add_push_options(run)
    add_pr_options(run)
    add_verify_options(run, flag=True)
    run.set_defaults(handler=batch_command)
    scan = commands.add_parser("scan")
    add_batch_options(scan)
    scan.set_defaults(handler=batch_command)


def add_batch_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repos", required=True, metavar="FILE",
                        help="repo list: one PATH_OR_URL [BASE_REF] a line; '-' reads stdin")
    parser.add_argument("--report-dir", default="npu-codemod-report", metavar="DIR",
                        help="where the reports go (default: %(default)s)")
    arguments.add_workspace_option(parser)
    parser.add_argument("--rules", default=None, metavar="ID_OR_PACK,...",
                        help="run only these rules or packs (default: every pack but distributed)")
    parser.add_argument("--disable-rule", action="append", default=[], metavar="ID_OR_PACK",
                        help="do not run this rule or pack (repeatable)")
    parser.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1,
                        help="parallel worker processes (default: CPU count)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--wait", action="store_true",
                        help="wait for another run that has the report dir or a repository's "
                             "branch (default: refuse, naming that run)")
    parser.add_argument("--no-cache", action="store_true",
                        help="parse every file; do not read or write the workspace's result cache")
    arguments.add_include_tests_option(parser)
    arguments.add_engine_option(parser)
    arguments.add_tensorflow_option(parser)
    add_executor_options(parser)
    arguments.add_plugin_options(parser)
    arguments.add_config_option(parser)


def batch_command(args: argparse.Namespace) -> int:
    options = BatchOptions.from_args(args)  # every option checked before anything happens
    loaded_rules = loaded_rules_of(options.selection)  # plugins and rule ids too
    warn_of_partial_packs(loaded_rules)
    entries = read_entries(args.repos)
    carried = resumed(options, entries, args.only_failed) if args.only_failed else None
    return run_batch(options, loaded_rules, entries, carried)


def resumed(options: BatchOptions, entries: Sequence[RepoEntry], run_json: str) -> dict:
    """The records ``--only-failed RUN_JSON`` carries over (:mod:`batch.resume`); a UsageError
    when that run did something else (another command, or a dry run against a real one)."""
    earlier = read_run(run_json)
    done = (earlier.get("command", options.command),
            bool(earlier.get("options", {}).get("dry_run", options.dry_run)))
    if done != (options.command, options.dry_run):
        did = f"{done[0]}{' --dry-run' if done[1] else ''}"
        raise UsageError(f"--only-failed {run_json}: that run was a {did}: resume it with the same command")
    return carried_records(entries, earlier)


def run_batch(options: BatchOptions, loaded_rules, entries: Sequence[RepoEntry],
              carried: Optional[dict] = None) -> int:
    """The batch, with each failure on stderr as it happens and the summary at the end; the
    exit code (an interrupt is re-raised once the reports are written)."""
    def on_result(index: int, result: RepoResult) -> None:
        if result.status == "failed" and result.error != batch.INTERRUPTED:  # in the summary
            write_line(mask_secrets(f"npu-codemod: {result.repo}: {result.error}"))
        for note in result.notes:
            if note.startswith("warning: "):  # a branch others committed to: files unexplained
                write_line(mask_secrets(f"npu-codemod: {result.repo}: {note}"))
        if result.verify is not None:
            write_line(mask_secrets(f"npu-codemod: {result.repo}: verify {result.verify.verdict}: "
                                    f"{result.verify.reason}"))
        if options.debug:
            for finding in result.findings:
                if finding.trace:
                    write_line(mask_secrets(f"npu-codemod: {result.repo}: {finding.path}:"
                                            f"{finding.line}: {finding.rule_id} crashed:\n"
                                            f"{finding.trace}"))

    outcome = batch.run(options, loaded_rules, entries, on_result, carried)
    print_summary(outcome.lines, sys.stderr, scan=options.command == "scan",
                  verify=options.command == "verify")
    deferred = sum(1 for line in outcome.lines if line.status == "deferred")
    if deferred:
        print(f"npu-codemod: {deferred} deferred: not started, the PR budget of this run is spent "
              "(--max-prs); the next run continues with them", file=sys.stderr)
    if outcome.carried:
        print(f"npu-codemod: {outcome.carried} finished repositories carried over from the earlier "
              "run (--only-failed): the reports cover every repository of the list", file=sys.stderr)
    if outcome.report_error is not None:
        made = ", ".join(outcome.branches) or "none"
        print(f"npu-codemod: {outcome.report_error}; the repositories' work stands, branches "
              f"committed by this run: {made}; free space and rerun to write the reports",
              file=sys.stderr)
    else:
        names = ", ".join(path.name for path in outcome.written[:4])
        print(f"npu-codemod: reports in {outcome.report_dir} ({names}, ...)", file=sys.stderr)
    if outcome.interrupted is not None:
        raise outcome.interrupted
    unverified = unproven_verdicts(outcome.lines, options.verify)
    return EXIT_FAILED if outcome.failed or unverified else EXIT_OK


def unproven_verdicts(lines: Sequence[RepoLine], verify: Optional[VerifyOptions]) -> list[str]:
    """``verify``, ``run --verify``: the verdicts neither equivalent nor allowed (``--allow``),
    said on stderr: each makes the exit code 1."""
    if verify is None:
        return []
    found = unproven((line.verdict for line in lines), verify.allow)
    if found:
        counts = ", ".join(f"{count} {verdict}" for verdict, count in sorted(Counter(found).items()))
        allowable = ",".join(verdict for verdict in ALLOWABLE if verdict in found)
        hint = f"; --allow {allowable} accepts what proves nothing" if allowable else ""
        print(f"npu-codemod: verify: not every repository is proven equivalent ({counts}): exit "
              f"code 1{hint}", file=sys.stderr)
    return found


def read_entries(repos: str) -> list[RepoEntry]:
    """The repo list at ``repos`` (``-``: stdin); a UsageError when it cannot be read."""
    try:
        return read_repo_list(repos, sys.stdin.read() if repos == "-" else None)
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        raise UsageError(f"cannot read repo list {repos!r}: {reason}") from None
