"""``npu-codemod``: the command line, from which the whole data flow reads top-down.

cli (parse) -> commands/<command> -> batch.run (repo list -> jobs -> pool -> records) ->
engine and rules -> git -> PRs -> run record -> reports.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Optional, Sequence

from npu_codemod.orchestrator.commands import build_parser, parse_arguments
from npu_codemod.orchestrator.commands.common import EXIT_OK, EXIT_USAGE

if TYPE_CHECKING:
    from npu_codemod.plugins.manager import Plugins

__all__ = ["build_parser", "main"]


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    references = _plugin_references(argv)
    if references:
        from npu_codemod.plugins.discovery import missing_reference

        for reference in references:  # a typo on the command line is a usage error, not a warning
            problem = missing_reference(reference)
            if problem:
                print(f"npu-codemod: error: --plugin {reference}: {problem}", file=sys.stderr)
                return EXIT_USAGE
    # Plugins may add options to a command (npu_codemod_add_options): they load once the
    # command line names one, before its options are parsed; --help and --version need none.
    args = parse_arguments(build_parser(lambda: _load_plugins(references), on_demand=True), argv)
    return _run(args)


def _load_plugins(references: tuple[str, ...]) -> Plugins:
    """Built-ins, entry points and ``--plugin`` modules (imported only once a command is named)."""
    from npu_codemod.plugins.manager import PluginSpec, load_plugins

    return load_plugins(PluginSpec(extra=references))


def _run(args: argparse.Namespace) -> int:
    """The command's handler, its usage errors as one line (exit code 2)."""
    from npu_codemod.codemods.parser_canary import canary_problem, remembered_canary_problem
    from npu_codemod.codemods.rule_settings import SettingsError
    from npu_codemod.orchestrator.batch.batch_options import OptionError
    from npu_codemod.orchestrator.batch.interrupts import (
        Terminated,
        interrupt_exit_code,
        sigterm_as_interrupt,
    )
    from npu_codemod.orchestrator.config import ConfigError
    from npu_codemod.orchestrator.errors import UsageError
    from npu_codemod.orchestrator.user_cache import start_up_cache
    from npu_codemod.plugins.manager import PluginError

    checked = start_up_cache("parser-checked")  # the parser is proven on the pinned fissix only
    drift = remembered_canary_problem(checked) if checked is not None else canary_problem()
    if drift:
        print(f"npu-codemod: error: {drift}", file=sys.stderr)
        return EXIT_USAGE
    try:
        with sigterm_as_interrupt():
            return args.handler(args)
    except (UsageError, OptionError, PluginError, ConfigError, SettingsError) as exc:
        print(f"npu-codemod: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # `npu-codemod rules | head`: the reader left, not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except KeyboardInterrupt as exc:
        how = "terminated" if isinstance(exc, Terminated) else "interrupted"
        print(f"npu-codemod: {how}; rerun (or rerun with --only-failed RUN_JSON) to complete "
              "the remaining repositories", file=sys.stderr)
        return interrupt_exit_code(exc)


def _plugin_references(argv: Sequence[str]) -> tuple[str, ...]:
    """The ``--plugin`` values, read before the real parse (like pytest's ``-p``)."""
    early = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    early.add_argument("--plugin", action="append", default=[])
    return tuple(early.parse_known_args(argv)[0].plugin)
