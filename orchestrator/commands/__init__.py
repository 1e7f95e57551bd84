"""The subcommands, one module each; :func:`build_parser` puts them under one parser.

A command's module (its options, its handler, and what the handler imports) is imported only
once the command line names a command: ``--help`` and ``--version`` list the commands from
:data:`COMMANDS` alone, and import neither the engine, git nor any plugin."""

from __future__ import annotations

import argparse
import difflib
import importlib
import re
from typing import TYPE_CHECKING, Any, Callable, NoReturn, Optional, Sequence, cast

from npu_codemod import __version__

if TYPE_CHECKING:
    from npu_codemod.plugins.manager import Plugins

#: Each command, in the order ``--help`` lists them: the module that adds its options and
#: handler (``add_to``), and its line in ``--help``.
COMMANDS = {
    "run": ("run", "rewrite each repo on a branch and report"),
    "scan": ("run", "report what would be migrated; change nothing"),
    "verify": ("verify", "run each repo before and after its migration on CPU and compare (executes "
                         "the repos' code)"),
    "rules": ("rules", "list the available rules"),
    "report": ("report", "re-render the reports from a run.json"),
    "status": ("status", "show the state and checks of a run's pull requests, and the campaign"),
    "prs": ("prs", "close stale, merge or rebase a run's pull requests"),
    "check": ("check", "lint files/folders: print sites still needing migration, exit 1 if any (CI "
                       "gate, pre-commit hook)"),
    "demo": ("demo", "build sample TF 1.x and TF 2.x repos in a temp dir and migrate them"),
}
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


def build_parser(plugins: Optional[Callable[[], Plugins]] = None, *,
                 on_demand: bool = False) -> argparse.ArgumentParser:
    """Every subcommand's parser; each plugin may add options (``npu_codemod_add_options``).

    ``plugins`` loads the plugins, which then add their options to every command. With
    ``on_demand`` (the CLI), the commands' options and the plugins are added only once the
    command line names a command, before its options are parsed; otherwise at once."""
    parser = Parser(
        prog="npu-codemod",
        description="Migrate TensorFlow 1.x sess.run training repositories to Ascend NPUs.",
    )
    parser.add_argument("--version", action="version", version=f"npu-codemod {__version__}")
    commands = cast(_Commands, parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                                     action=_Commands))
    for name, (_, summary) in COMMANDS.items():
        commands.add_parser(name, help=summary)
    commands.before_parsing = lambda: _add_options(commands, plugins)
    if not on_demand:
        commands.ready()
    return parser


class _Commands(argparse._SubParsersAction):
    """The commands' parsers, made empty; :meth:`ready` adds their options, once, at the
    latest when a command is chosen. A command module's ``add_parser(name, ...)`` gets the
    parser already made for ``name`` (its ``description``, if given, set)."""

    before_parsing: Optional[Callable[[], None]] = None

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        made = self.choices.get(name)
        if made is None:
            return super().add_parser(name, **kwargs)
        if kwargs.get("description") is not None:
            made.description = kwargs["description"]
        return made

    def ready(self) -> None:
        if self.before_parsing is not None:
            ready, self.before_parsing = self.before_parsing, None
            ready()

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: Optional[str] = None) -> None:
        self.ready()
        super().__call__(parser, namespace, values, option_string)


def _add_options(commands: argparse._SubParsersAction, plugins: Optional[Callable[[], Plugins]]) -> None:
    """Each command's options and handler (from its module), its description, then each
    plugin's options on each command's parser (a plugin that raises is broken)."""
    for module in dict.fromkeys(module for module, _ in COMMANDS.values()):
        importlib.import_module(f"{__name__}.{module}").add_to(commands)
    for name, subparser in commands.choices.items():
        if subparser.description is None:
            subparser.description = DESCRIPTIONS.get(name)
    if plugins is not None:
        loaded = plugins()
        for name, subparser in commands.choices.items():
            for plugin, reason in loaded.call_each("npu_codemod_add_options", parser=subparser, command=name)[1]:
                loaded.mark_broken(plugin, reason)


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
