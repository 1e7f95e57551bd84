"""What a user sees first: every subcommand's --help documents every option it takes."""

from __future__ import annotations

import argparse

from npu_codemod.orchestrator.cli import build_parser


def test_every_option_of_every_subcommand_has_help() -> None:
    parser = build_parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    undocumented = [
        f"{name} {action.option_strings[0] if action.option_strings else action.dest}"
        for name, command in commands.choices.items()
        for action in command._actions
        if not isinstance(action, argparse._HelpAction) and action.option_strings and not action.help
    ]
    assert undocumented == []
