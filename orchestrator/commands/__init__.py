"""The subcommands, one module each; :func:`build_parser` puts them under one parser."""

from __future__ import annotations

import argparse
from typing import Optional

from npu_codemod import __version__
from npu_codemod.orchestrator.commands import check, demo, report, rules, run, status, verify
from npu_codemod.plugins.manager import Plugins

#: In the order ``--help`` lists them.
COMMANDS = (run, verify, rules, report, status, check, demo)


def build_parser(plugins: Optional[Plugins] = None) -> argparse.ArgumentParser:
    """Every subcommand's parser; each plugin may add options (``npu_codemod_add_options``)."""
    parser = argparse.ArgumentParser(
        prog="npu-codemod",
        description="Migrate TensorFlow 1.x sess.run training repositories to Ascend NPUs.",
    )
    parser.add_argument("--version", action="version", version=f"npu-codemod {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_to(commands)
    if plugins is not None:
        for name, subparser in commands.choices.items():
            for plugin, reason in plugins.call_each("npu_codemod_add_options",
                                                    parser=subparser, command=name)[1]:
                plugins.mark_broken(plugin, reason)
    return parser
