"""What the command-line options of every command mean: the rule selection and the config.

One place for the questions several commands ask of their arguments, so ``run``, ``scan``,
``check`` and ``rules`` read the rule settings and ``include_tests`` the same way.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Optional, Sequence

from npu_codemod.codemods.engine import DEFAULT_MODE, MODES
from npu_codemod.orchestrator.config import ToolConfig, find_config, freeze_rule_settings, read_config
from npu_codemod.orchestrator.loaded_rules import RuleSelection
from npu_codemod.orchestrator.user_cache import user_cache
from npu_codemod.plugins.manager import PluginSpec


def config_path(args: argparse.Namespace) -> Optional[Path]:
    """The TOML file with the ``[tool.npu-codemod]`` table, by one rule for every command:
    ``--config FILE``, else the ``pyproject.toml`` of the folder the command works from: the
    repo list's folder for ``run``/``scan`` (the current folder for ``--repos -``), the current
    folder for ``check`` (run at the top of the repository it checks) and ``rules``."""
    repos = getattr(args, "repos", None)
    return find_config(getattr(args, "config", None), repos if repos is not None else "-")


def rule_selection(args: argparse.Namespace) -> RuleSelection:
    """The rules, plugins and rule settings the arguments select (ConfigError, SettingsError):
    ``--rules`` (else the config's ``rules = [...]``) and ``--disable-rule`` (with the
    config's ``disable_rules``), rule ids or packs; the names are checked against the rules
    when the rules are loaded."""
    config = config_path(args)
    tool = read_config(config, bool(getattr(args, "config", None))) if config else ToolConfig()
    only = _names([args.rules]) if getattr(args, "rules", None) else None
    if only is None and tool.select is not None:
        only = frozenset(tool.select)
    return RuleSelection(
        plugins=PluginSpec(extra=tuple(getattr(args, "plugin", ()))),
        only=only,
        disabled=_names(getattr(args, "disable_rule", ())) | frozenset(tool.disabled),
        settings=freeze_rule_settings(config, tool.rules) if config else (),
        settings_source=str(config or ""),
        engine=getattr(args, "engine", None) or DEFAULT_MODE,
        tensorflow=getattr(args, "tensorflow", None) or tool.tensorflow,
    )


def _names(values: Sequence[str]) -> frozenset[str]:
    """The names of comma-separated lists (``--rules estimator,NPU004``)."""
    return frozenset(name.strip() for value in values for name in value.split(",") if name.strip())


def include_tests(args: argparse.Namespace) -> bool:
    """``--include-tests``/``--no-include-tests``, else the config's ``include_tests``."""
    if getattr(args, "include_tests", None) is not None:
        return args.include_tests
    config = config_path(args)
    return read_config(config, False).include_tests if config else False


def add_plugin_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--plugin", action="append", default=[], metavar="MODULE_OR_PATH",
                        help="load a rule plugin from a module or .py file (repeatable)")
    parser.add_argument("--debug", action="store_true",
                        help="print the traceback of each rule that crashes on stderr")


def add_config_option(parser: argparse.ArgumentParser,
                      default: str = "pyproject.toml next to the repo list") -> None:
    parser.add_argument("--config", metavar="FILE", default=None,
                        help=f"TOML file with a [tool.npu-codemod] table of rule settings "
                             f"(default: {default})")


def add_include_tests_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--include-tests", action=argparse.BooleanOptionalAction, default=None,
                        help="also migrate test files (test_*.py, *_test.py, conftest.py, files "
                             "under test/ or tests/), which are skipped by default (config: "
                             "include_tests = true)")


def add_engine_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--engine", choices=MODES, default=None,
                        help="selective (default): parse only the top-level statements a rule can "
                             "act on; full: parse every file whole. Both give the same files and "
                             "findings; full is the reference when a rule is suspected")


def add_tensorflow_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tensorflow", choices=("1", "2"), default=None,
                        help="the TensorFlow major version the code runs (config: tensorflow = "
                             "\"2\"); default: each repository's pins, else its code")


def default_workspace() -> str:
    """The clone cache and scratch space when ``--workspace`` is not given: one per user,
    ``$XDG_CACHE_HOME/npu-codemod`` (else ``~/.cache/npu-codemod``), wherever the command runs."""
    return str(user_cache())


def add_workspace_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workspace", default=None, metavar="DIR",
                        help="clone cache and scratch space (default: $XDG_CACHE_HOME/npu-codemod, "
                             "else ~/.cache/npu-codemod)")


def workspace(args: argparse.Namespace) -> Path:
    """``--workspace``, else :func:`default_workspace`, as an absolute path."""
    return Path(getattr(args, "workspace", None) or default_workspace()).resolve()
