"""The pull-request options of ``run`` and the settings they make, checked before any work."""

from __future__ import annotations

import argparse
import sys
from typing import Optional

from npu_codemod.orchestrator.prs.forge import TOKEN_VARIABLES, find_token
from npu_codemod.orchestrator.prs.groups import SPLIT_CHOICES
from npu_codemod.orchestrator.prs.pacing import Pacer, PrBudget, parse_rate, positive_count
from npu_codemod.orchestrator.prs.publish import PrSettings
from npu_codemod.orchestrator.prs.text import TemplateError, load_templates

DEFAULT_PR_RATE = "30/min"


def add_pr_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("pull requests (with --push)")
    group.add_argument("--open-prs", action="store_true",
                       help="open (or update) a pull request per pushed branch")
    group.add_argument("--forge", default=None, metavar="NAME",
                       help="github or gitlab (default: inferred from the remote URL)")
    group.add_argument("--forge-url", default=None, metavar="URL",
                       help="API root (GitHub Enterprise: https://HOST/api/v3; GitLab: https://HOST)")
    group.add_argument("--pr-title", default=None, metavar="TEMPLATE", help="Jinja2 title template")
    group.add_argument("--pr-body-file", default=None, metavar="FILE", help="Jinja2 body template")
    group.add_argument("--draft", action="store_true", help="open pull requests as drafts")
    group.add_argument("--label", action="append", default=[], metavar="LABEL", help="(repeatable)")
    group.add_argument("--reviewer", action="append", default=[], metavar="@USER|@ORG/TEAM",
                       help="request review (repeatable)")
    group.add_argument("--pr-rate", default=DEFAULT_PR_RATE, metavar="N/min",
                       help="at most N pull-request writes a minute; 0: unpaced (default: %(default)s)")
    group.add_argument("--max-prs", type=int, default=None, metavar="N",
                       help="open at most N new pull requests in this run; once they are open, the "
                            "repositories not yet started wait for the next run (in wave= order)")
    group.add_argument("--prs-per-hour", type=int, default=None, metavar="N",
                       help="open at most N new pull requests an hour, over the whole run")
    parser.add_argument("--split-by", choices=SPLIT_CHOICES, default=None,
                        help="one branch (and PR) per CODEOWNERS owner group or top-level directory")


def pr_settings(args: argparse.Namespace) -> Optional[PrSettings]:
    """Settings for ``--open-prs`` (None without it); ValueError names a bad option."""
    dry_run = getattr(args, "dry_run", False)
    if getattr(args, "split_by", None) and dry_run:
        raise ValueError("--split-by commits one branch per group: it cannot be used with --dry-run")
    if not getattr(args, "open_prs", False):
        given = [option for option, value in _pr_only_options(args) if value]
        if given:
            raise ValueError(f"{given[0]} needs --open-prs: it only applies to pull requests")
        return None
    if dry_run or not getattr(args, "push", False):
        raise ValueError("--open-prs needs --push (and no --dry-run): a pull request proposes a pushed branch")
    token = find_token()
    if token is None:
        raise ValueError(f"--open-prs needs an API token: set {' or '.join(TOKEN_VARIABLES)}")
    try:
        templates = load_templates(args.pr_title, args.pr_body_file)
    except TemplateError as exc:
        raise ValueError(str(exc)) from None
    budget = PrBudget(positive_count("--max-prs", args.max_prs),
                      positive_count("--prs-per-hour", args.prs_per_hour),
                      log=lambda line: print(line, file=sys.stderr))
    return PrSettings(templates=templates, token=token, pacer=Pacer(parse_rate(args.pr_rate)),
                      forge=args.forge, forge_url=args.forge_url, draft=args.draft,
                      labels=tuple(args.label), reviewers=tuple(args.reviewer),
                      remote=getattr(args, "remote", "origin"), budget=budget)


def _pr_only_options(args: argparse.Namespace) -> list[tuple[str, object]]:
    """The options that mean nothing without ``--open-prs``, with whether each was given
    (``scan`` has none of them)."""
    values = {name: getattr(args, name, None) for name in
              ("forge", "forge_url", "pr_title", "pr_body_file", "draft", "label", "reviewer",
               "max_prs", "prs_per_hour")}
    return [(f"--{name.replace('_', '-')}", value) for name, value in values.items()] + \
        [("--pr-rate", getattr(args, "pr_rate", DEFAULT_PR_RATE) != DEFAULT_PR_RATE)]
