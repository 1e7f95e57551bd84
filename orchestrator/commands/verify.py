"""``npu-codemod verify``: run each repository before and after its migration, and judge."""

from __future__ import annotations

import argparse
import os

from npu_codemod.orchestrator import arguments
from npu_codemod.orchestrator.batch.batch_options import BatchOptions, add_executor_options
from npu_codemod.orchestrator.batch.jobs import DEFAULT_BRANCH
from npu_codemod.orchestrator.commands.common import loaded_rules_of
from npu_codemod.orchestrator.commands.run import read_entries, resumed, run_batch
from npu_codemod.orchestrator.verify.verify_options import SAFETY, add_verify_options

DESCRIPTION = (
    "For each repository of the list, export its base commit and its migration branch with git "
    "archive into two scratch folders, run the repository's verify command in each on CPU "
    "TensorFlow (TF 1.x behaviour, deterministic, with an emulation of the NPU bridge that "
    "records the NPU's constraints), compare what the training steps computed, and record a "
    "verdict: no-command, inconclusive, timeout, migrated-fails, diverged, violations or "
    "equivalent (run.json, verify.csv, report.html). Exit code 1 unless every repository is "
    "equivalent (--allow relaxes it for the verdicts that prove nothing). " + SAFETY)


def add_to(commands: argparse._SubParsersAction) -> None:
    verify = commands.add_parser("verify", description=DESCRIPTION)
    verify.add_argument("--repos", required=True, metavar="FILE",
                        help="repo list: one PATH_OR_URL [BASE_REF] [verify=\"COMMAND\"] a line; "
                             "'-' reads stdin")
    verify.add_argument("--branch", default=DEFAULT_BRANCH,
                        help="the migration branch to verify (default: %(default)s)")
    verify.add_argument("--report-dir", default="npu-codemod-report", metavar="DIR",
                        help="where the reports go (default: %(default)s)")
    verify.add_argument("--workspace", default=".npu-codemod",
                        help="clone cache and the runs' scratch folders (default: %(default)s)")
    verify.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1,
                        help="repositories verified side by side (default: CPU count)")
    verify.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_verify_options(verify, flag=False)
    add_executor_options(verify)
    arguments.add_plugin_options(verify)
    arguments.add_config_option(verify)
    verify.set_defaults(handler=verify_command)


def verify_command(args: argparse.Namespace) -> int:
    options = BatchOptions.from_args(args)  # every option checked before anything runs
    loaded_rules = loaded_rules_of(options.selection)  # the report formats of plugins too
    entries = read_entries(args.repos)
    carried = resumed(options, entries, args.only_failed) if args.only_failed else None
    return run_batch(options, loaded_rules, entries, carried)
