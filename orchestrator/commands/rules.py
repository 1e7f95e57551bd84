"""``npu-codemod rules``: the available rules, their plugins, packs and settings."""

from __future__ import annotations

import argparse
import sys

from npu_codemod.orchestrator import arguments
from npu_codemod.orchestrator.commands.common import EXIT_OK
from npu_codemod.orchestrator.loaded_rules import load_rules


def add_to(commands: argparse._SubParsersAction) -> None:
    rules = commands.add_parser("rules")
    arguments.add_plugin_options(rules)
    arguments.add_config_option(rules, "none: built-in defaults")
    rules.add_argument("--format", choices=("table", "json", "markdown"), default="table",
                       help="a table for people, JSON for scripts, or the Markdown rule catalog "
                            "of docs/rules.md with every rule's example run (default: %(default)s)")
    rules.set_defaults(handler=rules_command)


def rules_command(args: argparse.Namespace) -> int:
    from npu_codemod.orchestrator.rules_listing import print_rules

    print_rules(load_rules(arguments.rule_selection(args)), args.format, sys.stdout)
    return EXIT_OK
