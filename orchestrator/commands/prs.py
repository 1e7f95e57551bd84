"""``npu-codemod prs close-stale | merge | rebase RUN_JSON``: the pull requests of a campaign
after ``run --open-prs`` (:mod:`npu_codemod.orchestrator.batch.pr_lifecycle`)."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import Iterable

from npu_codemod.orchestrator import arguments
from npu_codemod.orchestrator.batch import pr_lifecycle as lifecycle
from npu_codemod.orchestrator.batch.pr_lifecycle import LifecycleSettings, PrOutcome
from npu_codemod.orchestrator.commands.common import EXIT_FAILED, EXIT_OK, loaded_rules_of, read_run
from npu_codemod.orchestrator.errors import UsageError
from npu_codemod.orchestrator.prs.forge import MERGE_METHODS, TOKEN_VARIABLES, find_token

_STEPS = {"close-stale": lifecycle.close_step, "merge": lifecycle.merge_step,
          "rebase": lifecycle.rebase_step}


def add_to(commands: argparse._SubParsersAction) -> None:
    prs = commands.add_parser(
        "prs",
        description="Act on the pull requests a run opened (its RUN_JSON), one at a time: a "
                    "failure is that PR's line and the others go on. --dry-run says what would "
                    "be done and changes nothing.")
    actions = prs.add_subparsers(dest="action", required=True, metavar="ACTION")
    close = _action(actions, "close-stale", "close PRs with nothing left to propose",
                    "Close, with a comment saying why, the open PRs whose branch no longer differs "
                    "from the base, or whose base was migrated by hand (a scan of it finds "
                    "nothing to rewrite).")
    close.add_argument("--delete-branch", action="store_true", help="also delete each closed PR's branch")
    merge = _action(actions, "merge", "merge the approved PRs whose checks passed",
                    "Merge the open PRs that are approved and whose checks all passed; the "
                    "others are listed with the reason they wait.")
    merge.add_argument("--merge-method", choices=MERGE_METHODS, default="merge",
                       help="how to merge (default: %(default)s; GitLab: merge or squash)")
    merge.add_argument("--approvals", type=int, default=1, metavar="N",
                       help="approvals a PR needs (default: %(default)s)")
    merge.add_argument("--label", default=None, metavar="LABEL", help="only PRs with this label")
    _action(actions, "rebase", "rebuild conflicting PRs on their moved base",
            "Rebuild the branch of each open PR that has conflicts with its base on that base, "
            "then force-push it with lease (a PR without conflicts is left alone: a rebuilt "
            "branch reruns CI). A branch with commits by others is left for a person.")


def _action(actions: argparse._SubParsersAction, name: str, summary: str,
            description: str) -> argparse.ArgumentParser:
    parser = actions.add_parser(name, help=summary, description=description)
    parser.add_argument("run_json", metavar="RUN_JSON")
    parser.add_argument("--dry-run", action="store_true", help="say what would be done; change nothing")
    parser.add_argument("--forge", default=None, metavar="NAME",
                        help="github or gitlab (default: as the run recorded it)")
    parser.add_argument("--forge-url", default=None, metavar="URL", help="API root override")
    arguments.add_workspace_option(parser)
    parser.add_argument("--rules", default=None, metavar="ID_OR_PACK,...",
                        help="rules or packs of the scan that tells a base migrated by hand "
                             "(default: every pack but distributed)")
    parser.add_argument("--disable-rule", action="append", default=[], metavar="ID_OR_PACK")
    arguments.add_plugin_options(parser)
    parser.set_defaults(handler=prs_command)
    return parser


def prs_command(args: argparse.Namespace) -> int:
    if getattr(args, "approvals", 1) < 0:
        raise UsageError("--approvals must be 0 or more")
    token = find_token()
    if token is None:
        raise UsageError(f"npu-codemod prs needs an API token: set {' or '.join(TOKEN_VARIABLES)}")
    selection = arguments.rule_selection(args)
    hook = loaded_rules_of(selection).plugins.pm.hook
    settings = LifecycleSettings(
        token=token, workspace=str(arguments.workspace(args)), forge=args.forge,
        forge_url=args.forge_url, dry_run=args.dry_run, selection=selection,
        merge_method=getattr(args, "merge_method", "merge"), approvals=getattr(args, "approvals", 1),
        label=getattr(args, "label", None), delete_branch=getattr(args, "delete_branch", False))
    run = read_run(args.run_json)
    if args.dry_run:
        print(f"npu-codemod prs {args.action}: dry run, nothing is changed", file=sys.stderr)
    outcomes = print_outcomes(lifecycle.each_pr(run, hook, settings, _STEPS[args.action]), sys.stdout)
    return EXIT_FAILED if any(outcome.failed for outcome in outcomes) else EXIT_OK


def print_outcomes(outcomes: Iterable[PrOutcome], stream) -> list[PrOutcome]:
    """One line per pull request as it is done, then the counts."""
    done = []
    for outcome in outcomes:
        done.append(outcome)
        print(f"{outcome.repo}  {outcome.branch}  #{outcome.number}  {outcome.action}"
              + (f": {outcome.detail}" if outcome.detail else ""), file=stream, flush=True)
    counts = Counter(outcome.action for outcome in done)
    summary = ", ".join(f"{count} {action}" for action, count in counts.items())
    print(f"{len(done)} pull request(s)" + (f": {summary}" if summary else " in this run"), file=stream)
    return done
