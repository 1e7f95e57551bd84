"""Building the plugin manager: built-ins, then entry points, then ``--plugin`` modules.

A plugin that fails to import or register is recorded as broken with its reason, and the
others still load: one bad package must not stop a migration of hundreds of repos.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType
from typing import Optional

import pluggy

from npu_codemod.codemods.rule import Rule

from . import hookspecs

BUILTIN_PLUGINS = (
    "npu_codemod.plugins.rules.npu001_init_import",
    "npu_codemod.plugins.rules.npu002_drop_remainder",
    "npu_codemod.plugins.rules.npu004_nn_dropout",
    "npu_codemod.plugins.rules.npu007_session_config",
    "npu_codemod.plugins.rules.npu008_soft_placement",
    "npu_codemod.plugins.rules.npu009_rewrite_options_guard",
    "npu_codemod.reports.builtin",
    "npu_codemod.plugins.rules.npu003_predict_last_batch",
    "npu_codemod.plugins.rules.npu005_layers_dropout",
    "npu_codemod.plugins.rules.npu006_gelu",
    "npu_codemod.plugins.rules.npu010_session_close",
)
INIT_IMPORT_RULE = "NPU001"
ENTRY_POINT_GROUP = "npu_codemod"
DISABLE_ENTRYPOINTS_ENV = "NPU_CODEMOD_DISABLE_ENTRYPOINTS"


class PluginError(Exception):
    """A configuration error in the plugin set (e.g. two plugins claim one rule id)."""


@dataclass(frozen=True)
class PluginSpec:
    """Which plugins to load: picklable, so every worker process builds the same set."""

    extra: tuple[str, ...] = ()


@dataclass(frozen=True)
class BrokenPlugin:
    name: str
    reason: str


@dataclass
class Plugins:
    """The loaded plugin manager plus what could not be loaded."""

    pm: pluggy.PluginManager
    broken: list[BrokenPlugin] = field(default_factory=list)
    _rules: Optional[list[Rule]] = field(default=None, repr=False)

    def rules(self) -> list[Rule]:
        """All rules of all plugins, ids checked for uniqueness (collected once)."""
        if self._rules is None:
            self._rules = self._collect_rules()
        return list(self._rules)

    def _collect_rules(self) -> list[Rule]:
        owners: dict[str, str] = {}
        rules: list[Rule] = []
        for impl in self.pm.hook.npu_codemod_rules.get_hookimpls():
            plugin_name = self.pm.get_name(impl.plugin) or repr(impl.plugin)
            try:
                contributed = list(impl.function() or ())
            except Exception as exc:
                self.broken.append(BrokenPlugin(plugin_name, f"npu_codemod_rules raised {exc!r}"))
                continue
            for rule in contributed:
                if rule.id in owners:
                    raise PluginError(
                        f"rule id {rule.id} is defined by both {owners[rule.id]} and {plugin_name}"
                    )
                owners[rule.id] = plugin_name
                rules.append(rule)
        return sorted(rules, key=lambda rule: rule.id)

    def plugin_of(self, rule: Rule) -> str:
        """Name of the plugin a rule comes from (its module for built-ins)."""
        return type(rule).__module__


def load_plugins(spec: PluginSpec = PluginSpec()) -> Plugins:
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    plugins = Plugins(pm)
    for name in BUILTIN_PLUGINS:
        pm.register(importlib.import_module(name), name=name)
    if not os.environ.get(DISABLE_ENTRYPOINTS_ENV):
        for entry_point in entry_points(group=ENTRY_POINT_GROUP):
            _register(plugins, entry_point.name, entry_point.load)
    for reference in spec.extra:
        _register(plugins, reference, lambda ref=reference: _import_reference(ref))
    pm.check_pending()
    return plugins


def _register(plugins: Plugins, name: str, load) -> None:
    try:
        plugin = load()
        plugins.pm.register(plugin, name=name)
    except Exception as exc:  # a broken third-party plugin must not stop the run
        plugins.broken.append(BrokenPlugin(name, f"{type(exc).__name__}: {exc}"))


def _import_reference(reference: str) -> ModuleType:
    """Import ``pkg.module`` or a ``path/to/plugin.py`` file."""
    path = Path(reference)
    if reference.endswith(".py") or path.exists():
        if not path.is_file():
            raise FileNotFoundError(f"no such plugin file: {reference}")
        module_name = f"npu_codemod_local_plugin_{path.stem}"
        module_spec = importlib.util.spec_from_file_location(module_name, path)
        assert module_spec is not None and module_spec.loader is not None
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[module_name] = module
        module_spec.loader.exec_module(module)
        return module
    return importlib.import_module(reference)


def select_rules(rules: list[Rule], only: Optional[set[str]], disabled: set[str]) -> list[Rule]:
    """Apply ``--rules`` and ``--disable-rule``; unknown ids are a usage error."""
    known = {rule.id for rule in rules}
    if only is not None:
        # Code written by any rule relies on the NPU001 import; --disable-rule still wins.
        only = only | ({INIT_IMPORT_RULE} & known)
    unknown = sorted(((only or set()) | disabled) - known)
    if unknown:
        raise PluginError(f"unknown rule id(s): {', '.join(unknown)} (see 'npu-codemod rules')")
    return [r for r in rules if (only is None or r.id in only) and r.id not in disabled]
