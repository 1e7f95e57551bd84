"""Building the plugin manager: built-ins, then entry points, then ``--plugin`` modules.

A third-party plugin that fails to import, to register (e.g. a hook without a spec) or to
contribute its rules is recorded as broken with its reason, and the others still load: one
bad package must not stop a migration of hundreds of repos. Hooks whose failure should cost
only the failing plugin are called through :meth:`Plugins.call_each`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Optional

import pluggy
from fissix.patcomp import PatternCompiler

from npu_codemod.codemods.rule import Rule
from npu_codemod.codemods.units import SCOPES

from . import hookspecs
from .discovery import (
    ENTRY_POINT_GROUP,
    Candidate,
    builtin_candidates,
    entry_point_candidates,
    reference_candidate,
)
from .packs import UnknownRuleName, default_rules, expand_rule_names

BUILTIN_PLUGINS = (
    "npu_codemod.plugins.rules.sess_run.npu001_init_import",
    "npu_codemod.plugins.rules.sess_run.npu002_drop_remainder",
    "npu_codemod.plugins.rules.sess_run.npu004_nn_dropout",
    "npu_codemod.plugins.rules.sess_run.npu007_session_config",
    "npu_codemod.plugins.rules.sess_run.npu008_soft_placement",
    "npu_codemod.plugins.rules.sess_run.npu009_rewrite_options_guard",
    "npu_codemod.reports.builtin",
    "npu_codemod.plugins.rules.sess_run.npu003_predict_last_batch",
    "npu_codemod.plugins.rules.sess_run.npu005_layers_dropout",
    "npu_codemod.plugins.rules.sess_run.npu006_gelu",
    "npu_codemod.plugins.rules.sess_run.npu010_session_close",
    "npu_codemod.plugins.rules.audit.npu100_api_support",
    "npu_codemod.plugins.rules.estimator.npu011_estimator_run_config",
    "npu_codemod.plugins.rules.estimator.npu012_tpu_estimator",
    "npu_codemod.plugins.rules.estimator.npu013_run_config_summary",
    "npu_codemod.plugins.rules.mixed_precision.npu031_loss_scale_optimizer",
    "npu_codemod.plugins.rules.mixed_precision.npu032_loss_scale_manager",
    "npu_codemod.plugins.rules.mixed_precision.npu033_auto_mixed_precision",
    "npu_codemod.plugins.rules.xla_gpu.npu051_xla_off",
    "npu_codemod.plugins.rules.xla_gpu.npu052_gpu_memory",
    "npu_codemod.plugins.rules.xla_gpu.npu053_nccl_collectives",
    "npu_codemod.plugins.rules.xla_gpu.npu054_custom_op_library",
    "npu_codemod.plugins.rules.xla_gpu.npu055_gpu_towers",
    "npu_codemod.plugins.rules.distributed.facts",
    "npu_codemod.plugins.rules.distributed.npu021_horovod_init",
    "npu_codemod.plugins.rules.distributed.npu022_horovod_topology",
    "npu_codemod.plugins.rules.distributed.npu023_horovod_optimizer",
    "npu_codemod.plugins.rules.distributed.npu024_horovod_broadcast",
    "npu_codemod.plugins.rules.distributed.npu025_horovod_other",
    "npu_codemod.plugins.rules.distributed.npu026_tf_distribute_strategy",
    "npu_codemod.plugins.rules.distributed.npu027_distributed_hooks",
    "npu_codemod.plugins.rules.keras.npu041_keras_session",
    "npu_codemod.plugins.rules.keras.npu042_keras_clear_session",
    "npu_codemod.plugins.rules.tf2.npu061_device_init",
    "npu_codemod.plugins.rules.tf2.npu062_compat_header",
    "npu_codemod.plugins.rules.tf2.npu063_tf_function",
    "npu_codemod.plugins.rules.tf2.npu064_drop_remainder",
    "npu_codemod.plugins.rules.tf2.npu065_loss_scale_optimizer",
    "npu_codemod.plugins.rules.tf2.npu066_loop_size",
    "npu_codemod.plugins.rules.tf2.npu071_api_support",
    "npu_codemod.plugins.rules.tf2_distributed.npu067_broadcast_variables",
    "npu_codemod.plugins.rules.tf2_distributed.npu068_gradient_allreduce",
    "npu_codemod.plugins.rules.tf2_distributed.npu069_dataset_shard",
    "npu_codemod.plugins.rules.tf2_distributed.npu070_strategy_horovod",
    "npu_codemod.plugins.forges.github",
    "npu_codemod.plugins.forges.gitlab",
)
INIT_IMPORT_RULE = "NPU001"
DISABLE_ENTRYPOINTS_ENV = "NPU_CODEMOD_DISABLE_ENTRYPOINTS"


class PluginError(Exception):
    """A configuration error in the plugin set (e.g. two plugins claim one rule id)."""


@dataclass(frozen=True)
class PluginSpec:
    """Which plugins to load: picklable, so every worker process builds the same set."""

    extra: tuple[str, ...] = ()


@dataclass(frozen=True)
class PluginInfo:
    """One plugin as ``npu-codemod rules`` and ``run.json`` show it."""

    name: str
    source: str
    distribution: str
    version: str
    status: str = "ok"  # "ok" or "broken"
    reason: str = ""

    @classmethod
    def of(cls, candidate: Candidate, reason: str = "") -> "PluginInfo":
        return cls(candidate.name, candidate.source, candidate.distribution, candidate.version,
                   "broken" if reason else "ok", reason)


@dataclass
class Plugins:
    """The loaded plugin manager, every plugin's info, and which plugin owns each rule."""

    pm: pluggy.PluginManager
    infos: dict[str, PluginInfo] = field(default_factory=dict)
    owners: dict[str, str] = field(default_factory=dict)  # rule id -> plugin name
    _rules: Optional[list[Rule]] = field(default=None, repr=False)

    @property
    def broken(self) -> list[PluginInfo]:
        self.rules()  # a plugin whose npu_codemod_rules raises is broken too
        return [info for info in self.infos.values() if info.status == "broken"]

    def mark_broken(self, name: str, reason: str) -> None:
        info = self.infos.get(name) or PluginInfo(name, "?", "?", "")
        self.infos[name] = replace(info, status="broken", reason=reason)

    def rules(self) -> list[Rule]:
        """All rules of all plugins, ids checked for uniqueness (collected once)."""
        if self._rules is None:
            self._rules = self._collect_rules()
        return list(self._rules)

    def _collect_rules(self) -> list[Rule]:
        rules: list[Rule] = []
        results, errors = self.call_each("npu_codemod_rules")
        for plugin_name, reason in errors:
            self.mark_broken(plugin_name, reason)
        for plugin_name, contributed in results:
            try:
                contributed = list(contributed or ())
                _check_rules(contributed)
            except Exception as exc:
                self.mark_broken(plugin_name, f"npu_codemod_rules returned {exc}")
                continue
            for rule in contributed:
                if rule.id in self.owners:
                    raise PluginError(f"rule id {rule.id} is defined by both "
                                      f"{self.owners[rule.id]} and {plugin_name}")
                self.owners[rule.id] = plugin_name
                rules.append(rule)
        return sorted(rules, key=lambda rule: rule.id)

    def plugin_of(self, rule: Rule) -> PluginInfo:
        """The plugin that contributed ``rule``."""
        self.rules()
        return self.infos[self.owners[rule.id]]

    def implements(self, hook: str) -> bool:
        """Whether any plugin implements ``hook``: callers skip building arguments nobody reads."""
        return bool(getattr(self.pm.hook, hook).get_hookimpls())

    def call_each(self, hook: str, **kwargs: Any) -> tuple[list[tuple[str, Any]], list[tuple[str, str]]]:
        """Call every implementation of ``hook``, isolating third-party ones from each other.

        Returns ``(plugin name, result)`` for each implementation that returned, in pluggy's
        call order (the last registered first; ``tryfirst``/``trylast`` respected), and
        ``(plugin name, reason)`` for each third-party one that raised or is a hook wrapper
        (refused: each implementation is called on its own). Built-in plugins are not
        isolated: their exceptions are bugs and propagate.
        """
        results, errors = [], []
        # pluggy's own call order: last registered first, tryfirst/trylast respected.
        for impl in reversed(getattr(self.pm.hook, hook).get_hookimpls()):
            name = impl.plugin_name or repr(impl.plugin)  # get_name() walks every plugin
            if impl.hookwrapper or getattr(impl, "wrapper", False):
                errors.append((name, f"{hook} is a hook wrapper: npu-codemod calls each "
                                     "implementation on its own, so wrappers are not supported"))
                continue
            try:
                result = impl.function(*(kwargs[arg] for arg in impl.argnames))
                if result is not None:  # as pluggy: None means "nothing to contribute"
                    results.append((name, result))
            except Exception as exc:
                if name in BUILTIN_PLUGINS:
                    raise
                errors.append((name, f"{hook} raised {type(exc).__name__}: {exc}"))
        return results, errors


def _check_rules(contributed: list[Any]) -> None:
    for rule in contributed:
        if not isinstance(rule, Rule):
            raise TypeError(f"{rule!r}, which is not a Rule instance")
        problem = rule_problem(rule)
        if problem:
            raise TypeError(f"{rule!r} {problem}")


#: Rule class attributes that must be tuples of strings.
_NAME_TUPLES = ("_tokens", "modules", "calls", "uses", "after", "_site_names")


def rule_problem(rule: Rule) -> str:
    """What makes ``rule`` unusable ("with a pattern that does not compile: ..."), or ''."""
    for attribute in ("id", "name", "description"):
        if not isinstance(getattr(rule, attribute, None), str):
            return f"without a string {attribute!r}"
    if not isinstance(rule.pack, str):
        return f"with pack = {rule.pack!r}: it must be a string"
    if not isinstance(rule.default_on, bool):
        return f"with default_on = {rule.default_on!r}: it must be True or False"
    for attribute in _NAME_TUPLES:
        value = getattr(rule, attribute, ())
        if not isinstance(value, tuple) or not all(isinstance(item, str) for item in value):
            return f"with {attribute} = {value!r}: it must be a tuple of strings"
    if not rule.modules:
        return "with modules = (): no file would be its business"
    if rule._scope not in SCOPES:
        return f"with _scope = {rule._scope!r}: it must be one of {', '.join(map(repr, SCOPES))}"
    try:
        names = tuple(rule._site_names_for(frozenset()))
    except Exception as exc:
        return f"whose _site_names_for(facts) raised {type(exc).__name__}: {exc}"
    if not all(isinstance(name, str) for name in names):
        return f"whose _site_names_for(facts) gave {names!r}: it must give strings"
    pattern = rule.pattern
    if pattern is not None:
        if not isinstance(pattern, str):
            return f"with pattern = {pattern!r}: it must be a string or None"
        try:
            PatternCompiler().compile_pattern(pattern)
        except Exception as exc:  # fissix raises PatternSyntaxError, and others on odd input
            return f"with a pattern that does not compile: {type(exc).__name__}: {exc}"
    return ""


def load_plugins(spec: PluginSpec = PluginSpec()) -> Plugins:
    """Built-ins, then entry points (unless ``NPU_CODEMOD_DISABLE_ENTRYPOINTS``), then ``spec``."""
    return _load_plugins(spec, not os.environ.get(DISABLE_ENTRYPOINTS_ENV))


@lru_cache(maxsize=8)  # the CLI needs plugins before parsing (options) and after (rules)
def _load_plugins(spec: PluginSpec, use_entry_points: bool) -> Plugins:
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    plugins = Plugins(pm)
    for candidate in builtin_candidates(BUILTIN_PLUGINS):
        pm.register(candidate.load(), name=candidate.name)
        plugins.infos[candidate.name] = PluginInfo.of(candidate)
    third_party = list(entry_point_candidates(ENTRY_POINT_GROUP)) if use_entry_points else []
    third_party += [reference_candidate(reference) for reference in spec.extra]
    for candidate in third_party:
        plugins.infos[candidate.name] = PluginInfo.of(candidate, _register(pm, candidate))
    pm.check_pending()
    return plugins


def _register(pm: pluggy.PluginManager, candidate: Candidate) -> str:
    """Import and register one third-party plugin; the reason it is broken, or ''."""
    try:
        plugin = candidate.load()
    except (Exception, SystemExit) as exc:  # a plugin's sys.exit() must not end the run
        return f"import failed: {type(exc).__name__}: {exc}"
    try:
        pm.register(plugin, name=candidate.name)
        pm.check_pending()  # rejects a hook implementation without a spec (a typo)
    except Exception as exc:
        if pm.is_registered(plugin):
            pm.unregister(plugin)
        return f"registration failed: {type(exc).__name__}: {exc}"
    return ""


def select_rules(rules: list[Rule], only: Optional[set[str]], disabled: set[str]) -> list[Rule]:
    """Apply ``--rules`` and ``--disable-rule``: rule ids or pack names (see ``packs``); with
    no ``--rules``, the rules of the packs that are on by default. Unknown names are a usage
    error."""
    try:
        chosen = {rule.id for rule in default_rules(rules)} if only is None \
            else expand_rule_names(only, rules)
        dropped = expand_rule_names(disabled, rules)
    except UnknownRuleName as exc:
        raise PluginError(str(exc)) from None
    if only is not None:
        # Code written by any rule relies on the NPU001 import; --disable-rule still wins.
        chosen |= {INIT_IMPORT_RULE} & {rule.id for rule in rules}
    return [rule for rule in rules if rule.id in chosen and rule.id not in dropped]
