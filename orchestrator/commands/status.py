"""``npu-codemod status RUN_JSON``: the state and checks of a run's pull requests."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from npu_codemod.orchestrator import arguments
from npu_codemod.orchestrator.commands.common import loaded_rules_of, read_run


def add_to(commands: argparse._SubParsersAction) -> None:
    status = commands.add_parser(
        "status",
        description="Ask the forge where each pull request of RUN_JSON stands (state, checks), "
                    "then show the campaign: repositories merged / PR open / closed / failed / "
                    "waiting, counts per team, the PRs waiting longest for review. Adds a point to "
                    "the burndown (campaign.jsonl) and writes campaign.html next to RUN_JSON.")
    status.add_argument("run_json", metavar="RUN_JSON")
    status.add_argument("--forge-url", default=None, metavar="URL", help="API root override")
    arguments.add_plugin_options(status)
    status.set_defaults(handler=status_command)


def status_command(args: argparse.Namespace) -> int:
    from npu_codemod.orchestrator.prs.status import print_status

    hook = loaded_rules_of(arguments.rule_selection(args)).plugins.pm.hook
    return print_status(read_run(args.run_json), hook, sys.stdout, args.forge_url,
                        Path(args.run_json).resolve().parent)
