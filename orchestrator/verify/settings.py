"""What a verify run executes, and its limits: by one rule for every repository.

The command comes from ``--verify-command``, else the repo list's ``verify="..."`` key, else
the repository's own ``pyproject.toml`` (read from the exported base)::

    [tool.npu-codemod.verify]
    command = "python train.py --max_steps 20"
    steps = 10        # training steps compared, then the launcher stops the run
    timeout = 300     # seconds per run
    rtol = 1e-5       # relative tolerance of the fetched values
    memory = 8192     # MiB of address space per run
    env = ["DATA_DIR"]  # variables passed to the command (never one named like a credential)

``steps``, ``timeout``, ``rtol`` and ``memory`` from the command line win over the file's.
Without a command the verdict is ``no-command``: an entry point is never guessed.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.9/3.10
    import tomli as tomllib

DEFAULT_STEPS, DEFAULT_TIMEOUT, DEFAULT_RTOL, DEFAULT_MEMORY_MB = 10, 300.0, 1e-5, 8192
#: The number types of each key of ``[tool.npu-codemod.verify]`` besides ``command``.
_NUMBERS = {"steps": int, "timeout": float, "rtol": float, "memory": int}


@dataclass(frozen=True)
class VerifyOptions:
    """What the command line says (None: not given); picklable, it travels in each job."""

    command: Optional[str] = None
    steps: Optional[int] = None
    timeout: Optional[float] = None
    rtol: Optional[float] = None
    memory: Optional[int] = None
    allow: tuple[str, ...] = ()  # --allow: verdicts besides equivalent that exit 0
    requirements: bool = False  # --verify-requirements: install requirements.txt (requirements.py)


@dataclass(frozen=True)
class VerifySettings:
    """What one repository's verify runs: the command (None: ``no-command``) and its limits;
    ``source`` says where the command came from."""

    command: Optional[str] = None
    steps: int = DEFAULT_STEPS
    timeout: float = DEFAULT_TIMEOUT
    rtol: float = DEFAULT_RTOL
    memory: int = DEFAULT_MEMORY_MB
    source: str = ""
    env: tuple[str, ...] = ()  # names of variables passed to the command as they are
    requirements: bool = False  # run under a cached environment with the requirements.txt
    tensorflow: str = "1"  # the major version the repository runs ("2": TF 2.x code, npu_device)


def resolve(options: VerifyOptions, entry_command: Optional[str], checkout: Path) -> VerifySettings:
    """The settings of the repository exported at ``checkout``: the command line first, then
    the repo-list entry, then the repository's ``pyproject.toml``. ValueError names a bad
    value of the file."""
    table = read_table(checkout / "pyproject.toml")
    settings = VerifySettings(**{key: _number(key, table[key]) for key in _NUMBERS if key in table},
                              env=_names(table.get("env", [])))
    if options.command:
        settings = replace(settings, command=options.command, source="--verify-command")
    elif entry_command:
        settings = replace(settings, command=entry_command, source="repo list verify=")
    elif table.get("command"):
        settings = replace(settings, command=str(table["command"]),
                           source="pyproject.toml [tool.npu-codemod.verify]")
    given = {key: getattr(options, key) for key in _NUMBERS if getattr(options, key) is not None}
    return replace(settings, requirements=options.requirements, **given)


def read_table(path: Path) -> dict[str, Any]:
    """``[tool.npu-codemod.verify]`` of ``path``; empty when the file or table is missing.
    ValueError when the file is not TOML or the table has unknown keys."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"pyproject.toml: cannot read [tool.npu-codemod.verify]: {exc}") from None
    table = data.get("tool", {}).get("npu-codemod", {}).get("verify", {})
    if not isinstance(table, dict):
        raise ValueError("pyproject.toml: [tool.npu-codemod.verify] must be a table")
    unknown = sorted(set(table) - {"command", "env", *_NUMBERS})
    if unknown:
        raise ValueError(f"pyproject.toml: unknown key {unknown[0]!r} in [tool.npu-codemod.verify] "
                         f"(known: command, env, {', '.join(_NUMBERS)})")
    return table


def _number(key: str, value: Any) -> Any:
    kind = _NUMBERS[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0 or \
            (kind is int and not isinstance(value, int)):
        raise ValueError(f"pyproject.toml: [tool.npu-codemod.verify] {key} must be a positive "
                         f"{'whole ' if kind is int else ''}number, got {value!r}")
    return kind(value)


def _names(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(name, str) and name for name in value):
        raise ValueError("pyproject.toml: [tool.npu-codemod.verify] env must be a list of variable "
                         f"names, got {value!r}")
    return tuple(value)
