"""The ``[tool.npu-codemod]`` table of a pyproject.toml or ``--config``: which files, which
rules, and per-rule settings.

::

    [tool.npu-codemod]
    include_tests = true          # migrate test files too (as --include-tests)
    disable_rules = ["NPU010"]    # as --disable-rule: rule ids or packs
    tensorflow = "2"              # as --tensorflow: the code runs TF 2.x (default: pins, code)

    [tool.npu-codemod.rules.NPU007]
    precision_mode = "allow_mix_precision"
    style = "helper"

``rules = ["default", "distributed"]`` (a list: rule ids or packs) selects the rules as
``--rules`` does; TOML then has no room for ``[tool.npu-codemod.rules.<ID>]`` tables, so with a
list the settings go in ``[tool.npu-codemod.settings.<ID>]`` (either table, not both, for an id).

Only the shape is checked here (lists of names, tables of tables); names are checked against
the rules when they are loaded, and each section against its rule's typed ``Settings``
(see ``codemods/rule_settings.py``).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.9/3.10
    import tomli as tomllib

TABLE = "npu-codemod"
KEYS = ("include_tests", "rules", "disable_rules", "settings", "verify", "tensorflow")  # verify: read by verify/settings.py


class ConfigError(ValueError):
    """The config file cannot be read or has the wrong shape: one line, exit code 2."""


def find_config(explicit: Optional[str], repo_list: Optional[str]) -> Optional[Path]:
    """``--config FILE``, else a ``pyproject.toml`` next to the repo list (cwd for stdin)."""
    if explicit:
        return Path(explicit)
    if repo_list is None:
        return None
    folder = Path.cwd() if repo_list == "-" else Path(repo_list).parent
    candidate = folder / "pyproject.toml"
    return candidate if candidate.is_file() else None


@dataclass(frozen=True)
class ToolConfig:
    """What a ``[tool.npu-codemod]`` table says."""

    rules: dict[str, dict[str, Any]] = field(default_factory=dict)  # settings, by rule id
    include_tests: bool = False
    #: ``rules = [...]``: the rule ids and packs to run (None: not given, the default rules).
    select: Optional[tuple[str, ...]] = None
    #: ``disable_rules = [...]``: rule ids and packs not to run.
    disabled: tuple[str, ...] = ()
    #: ``tensorflow = "1" | "2"``: the TensorFlow major version (None: each repository's).
    tensorflow: Optional[str] = None


def read_config(path: Path, required: bool) -> ToolConfig:
    """The table of the file at ``path``. ``required``: the file must have the table."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read config {str(path)!r}: {exc.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    table = data.get("tool", {}).get(TABLE)
    if table is None:
        if required:
            raise ConfigError(f"{path}: no [tool.{TABLE}] table")
        return ToolConfig()
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise ConfigError(f"{path}: unknown key [tool.{TABLE}.{unknown[0]}] "
                          f"(known: {', '.join(KEYS)}; rule settings go in "
                          f"[tool.{TABLE}.rules.<RULE_ID>])")
    select = _names(path, table, "rules") if isinstance(table.get("rules"), list) else None
    settings = _settings(path, table, select is not None)
    include_tests = table.get("include_tests", False)
    if not isinstance(include_tests, bool):
        raise ConfigError(f"{path}: [tool.{TABLE}] include_tests must be true or false, "
                          f"got {include_tests!r}")
    tensorflow = table.get("tensorflow")
    if tensorflow is not None and tensorflow not in ("1", "2"):
        raise ConfigError(f"{path}: [tool.{TABLE}] tensorflow must be \"1\" or \"2\", "
                          f"got {tensorflow!r}")
    return ToolConfig(settings, include_tests, select, _names(path, table, "disable_rules") or (),
                      tensorflow)


def _names(path: Path, table: dict[str, Any], key: str) -> Optional[tuple[str, ...]]:
    """The list of rule ids and packs under ``key``, or None when it is not given."""
    names = table.get(key)
    if names is None:
        return None
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise ConfigError(f"{path}: [tool.{TABLE}] {key} must be a list of rule ids or packs, "
                          f"got {names!r}")
    return tuple(names)


def _settings(path: Path, table: dict[str, Any], listed: bool) -> dict[str, dict[str, Any]]:
    """The settings tables by rule id: ``[tool.npu-codemod.settings.<ID>]``, and
    ``[tool.npu-codemod.rules.<ID>]`` unless ``rules`` is the list of rules to run."""
    sections = {} if listed else table.get("rules", {})
    extra = table.get("settings", {})
    for key, found in (("rules", sections), ("settings", extra)):
        if not isinstance(found, dict):
            shape = "a list of rule ids or packs, or " if key == "rules" else ""
            raise ConfigError(f"{path}: [tool.{TABLE}] {key} must be {shape}a table of settings "
                              f"tables, got {found!r}")
        for rule_id, section in found.items():
            if not isinstance(section, dict):
                raise ConfigError(f"{path}: [tool.{TABLE}.{key}] {rule_id} must be a table of settings")
    twice = sorted(set(sections) & set(extra))
    if twice:
        raise ConfigError(f"{path}: settings of {twice[0]} given both in [tool.{TABLE}.rules."
                          f"{twice[0]}] and [tool.{TABLE}.settings.{twice[0]}]: keep one")
    return {**sections, **extra}


def freeze_rule_settings(path: Path, rules: dict[str, dict[str, Any]]) -> tuple[tuple[str, str], ...]:
    """Rule settings as hashable, picklable JSON text: workers get them in ``RuleSelection``."""
    try:
        return tuple((rule_id, json.dumps(section, sort_keys=True))
                     for rule_id, section in sorted(rules.items()))
    except TypeError as exc:  # TOML dates and times have no JSON form
        raise ConfigError(f"{path}: unsupported setting value ({exc})") from None
