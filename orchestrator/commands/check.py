"""``npu-codemod check PATH...``: the CI gate and pre-commit hook (logic: orchestrator.ci_gate)."""

from __future__ import annotations

import argparse
import sys

from npu_codemod.orchestrator import arguments
from npu_codemod.orchestrator.ci_gate import CheckInputError, add_arguments, run_check
from npu_codemod.orchestrator.commands.common import EXIT_USAGE, loaded_rules_of, warn_of_partial_packs
from npu_codemod.orchestrator.errors import UsageError


def add_to(commands: argparse._SubParsersAction) -> None:
    check = commands.add_parser("check")
    add_arguments(check)
    arguments.add_include_tests_option(check)
    arguments.add_engine_option(check)
    arguments.add_tensorflow_option(check)
    arguments.add_plugin_options(check)
    arguments.add_config_option(check, "pyproject.toml in the current folder")
    check.set_defaults(handler=check_command)


def check_command(args: argparse.Namespace) -> int:
    selection = arguments.rule_selection(args)
    loaded_rules = loaded_rules_of(selection)
    warn_of_partial_packs(loaded_rules)
    try:
        code = run_check(args.paths, loaded_rules, sys.stdout, sys.stderr, args.debug,
                         include_tests=arguments.include_tests(args),
                         tensorflow=selection.tensorflow)
    except CheckInputError as exc:
        raise UsageError(str(exc)) from None
    # A CI gate must not pass when some of the rules it was asked to apply did not run.
    return EXIT_USAGE if loaded_rules.plugins.broken else code
