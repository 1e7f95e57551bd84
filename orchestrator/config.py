"""The ``[tool.npu-codemod]`` table of a pyproject.toml or ``--config``: which files, and
per-rule settings.

::

    [tool.npu-codemod]
    include_tests = true          # migrate test files too (as --include-tests)

    [tool.npu-codemod.rules.NPU007]
    precision_mode = "allow_mix_precision"
    style = "helper"

Only the shape is checked here (tables of tables); each section is validated against its
rule's typed ``Settings`` when the toolkit is built (see ``codemods/rule_settings.py``).
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
KEYS = ("include_tests", "rules", "verify")  # verify: read by verify/settings.py


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
    rules = table.get("rules", {})
    for rule_id, section in rules.items():
        if not isinstance(section, dict):
            raise ConfigError(f"{path}: [tool.{TABLE}.rules] {rule_id} must be a table of settings")
    include_tests = table.get("include_tests", False)
    if not isinstance(include_tests, bool):
        raise ConfigError(f"{path}: [tool.{TABLE}] include_tests must be true or false, "
                          f"got {include_tests!r}")
    return ToolConfig(rules, include_tests)


def freeze_rule_settings(path: Path, rules: dict[str, dict[str, Any]]) -> tuple[tuple[str, str], ...]:
    """Rule settings as hashable, picklable JSON text: workers get them in ``RuleSelection``."""
    try:
        return tuple((rule_id, json.dumps(section, sort_keys=True))
                     for rule_id, section in sorted(rules.items()))
    except TypeError as exc:  # TOML dates and times have no JSON form
        raise ConfigError(f"{path}: unsupported setting value ({exc})") from None
