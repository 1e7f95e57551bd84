"""The subcommands, one module each; :func:`build_parser` puts them under one parser."""

from __future__ import annotations

import argparse
import difflib
import re
from typing import NoReturn, Optional, Sequence

from npu_codemod import __version__
from npu_codemod.orchestrator.commands import check, demo, prs, report, rules, run, status, verify
from npu_codemod.plugins.manager import Plugins

#: In the order ``--help`` lists them.
COMMANDS = (run, verify, rules, report, status, prs, check, demo)
#: What each command's ``--help`` page says it does (a command module may give its own).
DESCRIPTIONS = {
    "run": "Migrate each repository of the list (--repos): rewrite its TensorFlow 1.x sess.run code "
           "for Ascend NPUs on a branch (one commit, your checkout untouched), optionally push it and "
           "open a pull request, and write the reports (HTML, CSV, SARIF, run.json) to --report-dir. "
           "--dry-run commits nothing and writes one .patch per repository instead.",
    "scan": "Analyse each repository of the list like run, change nothing anywhere, and report what "
            "run would migrate and what needs a person.",
    "rules": "List the available rules, the plugins they come from and their settings.",
    "report": "Re-render every report (HTML, CSV, SARIF, history) from a run's run.json.",
    "check": "Lint files and folders (no git): print each site that still needs migrating as "
             "path:line:col: NPU00X message, and exit 1 while there is any (a CI gate, a pre-commit hook).",
    "demo": "Build sample TensorFlow 1.x and 2.x repositories in a temporary folder and run the whole pipeline "
            "on them: a first look at what npu-codemod does.",
}


class Parser(argparse.ArgumentParser):
    """argparse with a usage error in one line, and ``did you mean --dry-run?`` for a misspelt
    option (instead of the whole usage)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}{self.did_you_mean(message)} "
                     f"(see {self.prog} --help)\n")

    def did_you_mean(self, message: str) -> str:
        choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if choice:  # a misspelt command or choice
            match = difflib.get_close_matches(choice.group(1), re.findall(r"'([^']*)'", choice.group(2)), n=1)
            return f": did you mean {match[0]}?" if match else ""
        options = [name for name in self._option_string_actions if name.startswith("--")]
        for word in re.findall(r"(?<![\w-])--[\w-]+", message):
            if word not in options:
                match = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
                if match:
                    return f": did you mean {match[0]}?"
        return ""


def build_parser(plugins: Optional[Plugins] = None) -> argparse.ArgumentParser:
    """Every subcommand's parser; each plugin may add options (``npu_codemod_add_options``)."""
    parser = Parser(
        prog="npu-codemod",
        description="Migrate TensorFlow 1.x sess.run training repositories to Ascend NPUs.",
    )
    parser.add_argument("--version", action="version", version=f"npu-codemod {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_to(commands)
    for name, subparser in commands.choices.items():
        if subparser.description is None:
            subparser.description = DESCRIPTIONS.get(name)
    if plugins is not None:
        for name, subparser in commands.choices.items():
            for plugin, reason in plugins.call_each("npu_codemod_add_options",
                                                    parser=subparser, command=name)[1]:
                plugins.mark_broken(plugin, reason)
    return parser


def parse_arguments(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace:
    """``parser.parse_args``, with an unknown option reported by the (sub)command it was given
    to, so that the did-you-mean looks among that command's options."""
    args, extras = parser.parse_known_args(argv)
    if extras:
        _innermost(parser, args).error(f"unrecognized arguments: {' '.join(extras)}")
    return args


def _innermost(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    current = parser
    while True:
        actions = [a for a in current._actions if isinstance(a, argparse._SubParsersAction)]
        chosen = getattr(args, actions[0].dest, None) if actions else None
        if not actions or chosen not in actions[0].choices:
            return current
        current = actions[0].choices[chosen]
