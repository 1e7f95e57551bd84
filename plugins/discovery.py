"""Where plugins come from: built-in modules, the ``npu_codemod`` entry-point group, ``--plugin``.

Each source yields :class:`Candidate` records (name, distribution, version and a loader that
imports the plugin), so the manager can register them all the same way and name the package
of a plugin that turns out to be broken.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Iterator

from npu_codemod import __version__

ENTRY_POINT_GROUP = "npu_codemod"
LOCAL = "(local)"


@dataclass(frozen=True)
class Candidate:
    """A plugin before it is imported."""

    name: str
    source: str  # "builtin", "entry point" or "--plugin"
    distribution: str
    version: str
    load: Callable[[], Any]


def builtin_candidates(modules: tuple[str, ...]) -> Iterator[Candidate]:
    for module in modules:
        yield Candidate(module, "builtin", "npu-codemod", __version__,
                        functools.partial(importlib.import_module, module))


def entry_point_candidates(group: str = ENTRY_POINT_GROUP) -> Iterator[Candidate]:
    """Entry points of installed packages, with the distribution that declares each one."""
    seen = set()  # a distribution found twice on sys.path is one plugin
    for dist in metadata.distributions():
        # The group first: a distribution's name comes from parsing its whole METADATA file
        # (50 ms of the CLI's start-up when read for each of 125 installed packages).
        for entry_point in (found for found in dist.entry_points if found.group == group):
            key = (dist.metadata["Name"], entry_point.name)
            if key not in seen:
                seen.add(key)
                yield Candidate(entry_point.name, "entry point", dist.metadata["Name"] or "?",
                                dist.version, entry_point.load)


def reference_candidate(reference: str) -> Candidate:
    """``--plugin pkg.module`` or ``--plugin path/to/plugin.py`` (no packaging needed)."""
    return Candidate(reference, "--plugin", LOCAL, "", lambda: import_reference(reference))


def missing_reference(reference: str) -> str:
    """Why ``--plugin reference`` names nothing (no such file, no such module), or ''.

    A plugin that exists but fails to import is not missing: it loads as broken."""
    if Path(reference).exists():
        return ""  # a file that is not a plugin loads as broken, with the reason
    if reference.endswith(".py") or "/" in reference or os.sep in reference:
        return "no such plugin file"
    try:
        found = importlib.util.find_spec(reference)
    except (ImportError, ValueError):  # a parent package that is not there
        found = None
    except Exception:  # a parent package that fails on import: it loads as broken
        return ""
    return "" if found is not None else "no such module (a typo? a package not installed?)"


def import_reference(reference: str) -> Any:
    """Import ``pkg.module`` or a ``.py`` file (under a private module name)."""
    path = Path(reference)
    if not (reference.endswith(".py") or path.exists()):
        return importlib.import_module(reference)
    if not path.is_file():
        raise FileNotFoundError(f"no such plugin file: {reference}")
    module_name = f"npu_codemod_local_plugin_{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"not a Python file: {reference}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses and pickling look modules up here
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return module
