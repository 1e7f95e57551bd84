"""The rules a run uses, built once per process from a picklable selection.

Workers cannot receive a plugin manager or compiled Bowler query (neither pickles), so they
receive a :class:`RuleSelection` and build the same :class:`LoadedRules` themselves.
"""

from __future__ import annotations

import copy
import gc
import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, FrozenSet, Iterable, Optional

from npu_codemod.codemods.built_models import model_facts
from npu_codemod.codemods.distribution import import_facts
from npu_codemod.codemods.engine import MAX_SOURCE_BYTES, Engine, collector_paused, size_problem
from npu_codemod.codemods.findings import Finding
from npu_codemod.codemods.names import IMPORTS_TF_TEXT
from npu_codemod.codemods.reexports import is_package_init, reexport_facts
from npu_codemod.codemods.rule import Rule
from npu_codemod.codemods.rule_settings import SettingsError, build_settings
from npu_codemod.codemods.source import UndecodableSource, decode_source
from npu_codemod.codemods.standalone_keras import keras_fact, may_use_keras
from npu_codemod.codemods.star_imports import may_star_import, star_import_facts
from npu_codemod.codemods.tf2_dataset_facts import dataset_use_facts, may_use_datasets
from npu_codemod.codemods.tf_aliases import alias_facts
from npu_codemod.codemods.tf_model_idioms import pending_fact, script_pending_fact
from npu_codemod.codemods.tf_programs import graph_fact
from npu_codemod.codemods.tf_scopes import file_fact
from npu_codemod.codemods.tf_versions import signals_of
from npu_codemod.codemods.tflearn_sessions import may_use_tflearn, tflearn_fact
from npu_codemod.codemods.training_calls import calls_fact
from npu_codemod.plugins.manager import Plugins, PluginSpec, load_plugins, select_rules


@dataclass(frozen=True)
class RuleSelection:
    """Which plugins to load and which of their rules to run."""

    plugins: PluginSpec = field(default_factory=PluginSpec)
    only: Optional[FrozenSet[str]] = None
    disabled: FrozenSet[str] = frozenset()
    #: (rule id, JSON of its settings section), from ``orchestrator/config.py``.
    settings: tuple[tuple[str, str], ...] = ()
    #: The config file the settings come from, for error messages.
    settings_source: str = ""
    #: How the engine parses a file: ``selective`` (only the statements a rule can act on) or
    #: ``full`` (everything); both give the same bytes and findings (``--engine``).
    engine: str = "selective"
    #: The TensorFlow major version the repositories run, ``"1"`` or ``"2"`` (``--tensorflow``,
    #: ``[tool.npu-codemod] tensorflow``); None: decided per repository (``tf_runtime``).
    tensorflow: Optional[str] = None


#: Files the repository analysis reads between two collections of young objects.
_COLLECT_EVERY = 64

#: Pseudo-rule of the error findings that a broken plugin leaves in every repo it missed.
PLUGIN_RULE_ID = "PLUGIN"


@dataclass(frozen=True)
class RepoAnalysis:
    """Repository-wide facts for the rules, and the plugin failures met while gathering them."""

    facts: FrozenSet[str]
    findings: tuple[Finding, ...] = ()

    @classmethod
    def joined(cls, parts: Iterable["RepoAnalysis"]) -> "RepoAnalysis":
        """The analyses of consecutive slices of a repository's files as one (findings in
        order: what one pass over all the files gives)."""
        parts = list(parts)
        return cls(frozenset().union(*(part.facts for part in parts)),
                   tuple(finding for part in parts for finding in part.findings))


@dataclass(frozen=True)
class FileFacts:
    """One file's part of the repository analysis: its facts, and the ``(plugin, reason)`` of
    each third-party analysis hook that raised on it."""

    facts: FrozenSet[str] = frozenset()
    errors: tuple[tuple[str, str], ...] = ()


#: What gives one file's :class:`FileFacts` from its path and bytes.
FileAnalysis = Callable[[str, bytes], FileFacts]


@dataclass
class LoadedRules:
    """The plugins, the selected and configured rules, and the engine that runs them."""

    plugins: Plugins
    rules: list[Rule]
    engine: Engine

    def repository_facts(self, files: Iterable[tuple[str, bytes]], repo: str = "",
                         analyse: Optional[FileAnalysis] = None) -> RepoAnalysis:
        """Facts from ``npu_codemod_analyze_file`` over the TensorFlow files of one repo.

        A plugin that is broken, or whose analysis raises on a file, costs an ``error``
        finding (rule ``PLUGIN``) and its own contribution only. A file the engine will not
        rewrite for its size (``MAX_SOURCE_BYTES``: generated or vendored code) is not
        analysed either: an ``ast`` of 50 MB of code takes gigabytes.
        """
        files_part = self.files_facts(files, repo, analyse)
        return RepoAnalysis(files_part.facts, self.broken_findings(repo) + files_part.findings)

    def broken_findings(self, repo: str) -> tuple[Finding, ...]:
        """The ``PLUGIN`` error of each broken plugin: the part of :meth:`repository_facts` that comes
        before any file's."""
        return tuple(_plugin_error(repo, "", broken.name, f"plugin is broken, its rules did not "
                                   f"run: {broken.reason}") for broken in self.plugins.broken)

    def files_facts(self, files: Iterable[tuple[str, bytes]], repo: str = "",
                    analyse: Optional[FileAnalysis] = None) -> RepoAnalysis:
        """:meth:`repository_facts` without the broken plugins' findings: the part of a slice of the
        repository's files, for a worker (:meth:`RepoAnalysis.joined` puts slices together).
        ``analyse``: what gives one file's part (default :meth:`file_facts`; the result cache's
        serves it from the cache, ``orchestrator/batch/analysis_cache.py``)."""
        analyse = analyse or self.file_facts
        facts: set[str] = set()
        findings: list[Finding] = []
        graph = self.engine.reads_programs  # NPU061: every Python file's imports
        # The collector is off over the analysis: a file's ``ast`` and index have no cycles and
        # go as soon as they are dropped, but the analyses keep the last files' (``module_ast``),
        # which a young collection after each file would scan (a sixth of the analysis). Young
        # objects are collected every few files instead, for what cyclic garbage there is.
        with collector_paused():
            for number, (path, data) in enumerate(files, 1):
                if number % _COLLECT_EVERY == 0:
                    gc.collect(0)
                wanted = graph or self.engine.wants(data) or may_give_file_facts(path, data)
                if not wanted or len(data) > MAX_SOURCE_BYTES:
                    continue  # a file too large to parse is one error finding of the engine's
                found = analyse(path, data)
                facts.update(found.facts)
                findings += [_plugin_error(repo, path, name, f"{reason}; facts from this plugin "
                                           "are missing") for name, reason in found.errors]
        return RepoAnalysis(frozenset(facts), tuple(findings))

    def file_facts(self, path: str, data: bytes) -> FileFacts:
        """One file's part of the analysis (a file the engine :meth:`~.Engine.wants`, or with NPU061
        on any Python file, for the import graph): its TensorFlow signals, its import-graph fact,
        its model facts and the training they may decide (``tf_model_idioms``), its star imports
        (``star_imports``), a package's re-exports (``reexports``), its training in a session no rule sees (``standalone_keras``,
        ``tflearn_sessions``), and every
        ``npu_codemod_analyze_file`` hook's facts; depends on nothing but ``path``,
        ``data`` and the plugins."""
        try:
            text = decode_source(data).text
        except UndecodableSource:
            return FileFacts()  # reported by the engine when the file is processed
        facts: set[str] = set()
        if IMPORTS_TF_TEXT.found(text) and size_problem(text) is None:  # else the engine's error
            signals = signals_of(text, path)
            self.engine.hand_over(path, text)  # while the file's ast is at hand (``module_ast``)
            facts.update(signals.facts())
            # what a training of another file may need for its E signal (``tf_model_idioms``),
            # whichever packs run (the distributed and keras packs' hooks ask the same, cached)
            facts.update(model_facts(path, text))
            facts.update(filter(None, [graph_fact(path, text, signals), pending_fact(path, signals),
                                       calls_fact(path, text, indexed=True)]))  # what it calls: ``training_calls``
            facts.add(file_fact(path, signals))
            facts.update(star_import_facts(path, text, imports_tf=True))
            facts.update(reexport_facts(path, text))  # a package's names, for its importers
            facts.update(alias_facts(path, text))  # ``tfv1 = tf.compat.v1``, for its importers
            # sessions no rule sees: standalone Keras's and tflearn's (findings at the end)
            facts.update(filter(None, [keras_fact(path, text, imports_tf=True), tflearn_fact(path, text)]))
            results, errors = self.plugins.call_each("npu_codemod_analyze_file", path=path, text=text)
            for _, result in results:
                facts.update(result or ())
            return FileFacts(frozenset(facts), tuple(errors))
        if size_problem(text) is None:  # imports no TF: an entry of NPU061's, or a link to one
            node = graph_fact(path, text, None)
            facts.update(filter(None, [node, script_pending_fact(path, text), node and calls_fact(path, text)]))
            facts.update(star_import_facts(path, text, imports_tf=False))  # TF through ``import *``?
            facts.update(reexport_facts(path, text))  # a package's names, for its importers
            facts.update(alias_facts(path, text))  # ``from .compat import tfv1``, re-exported
            facts.update(import_facts(path, text))  # ``from horovod.tensorflow import init``
            if may_use_datasets(data):  # a decoding script's loop over a library's dataset (NPU064)
                facts.update(dataset_use_facts(path, text))
            # or through standalone Keras, or tflearn?
            facts.update(filter(None, [keras_fact(path, text), tflearn_fact(path, text)]))
        return FileFacts(frozenset(facts))


def _plugin_error(repo: str, path: str, plugin: str, message: str) -> Finding:
    return Finding(repo, path, 0, 0, PLUGIN_RULE_ID, plugin, "error", message)


@lru_cache(maxsize=4)
def load_rules(selection: RuleSelection) -> LoadedRules:
    """Load plugins, apply the rule settings, select rules. SettingsError on a bad setting."""
    plugins = load_plugins(selection.plugins)
    rules = configure(plugins, selection)
    rules = select_rules(rules, set(selection.only) if selection.only else None,
                         set(selection.disabled))
    return LoadedRules(plugins, rules, Engine(rules, mode=selection.engine))


def configure(plugins: Plugins, selection: RuleSelection) -> list[Rule]:
    """Every rule with its settings: a copy, so the plugin's own instance stays untouched."""
    sections = {rule_id: json.loads(text) for rule_id, text in selection.settings}
    rules = plugins.rules()
    by_id = {rule.id: rule for rule in rules}
    unknown = sorted(set(sections) - set(by_id))
    if unknown and not plugins.broken:  # else the id may belong to the broken plugin
        raise SettingsError(f"{selection.settings_source}: [tool.npu-codemod.rules.{unknown[0]}]: "
                            "no such rule (see 'npu-codemod rules')")
    configured = []
    for rule in rules:
        if rule.id in sections:
            try:
                settings = build_settings(rule, sections[rule.id])
            except SettingsError as exc:
                raise SettingsError(f"{selection.settings_source}: {exc}") from None
            rule = copy.copy(rule)
            rule.settings = settings
        configured.append(rule)
    return configured


def may_give_file_facts(path: str, data: bytes) -> bool:
    """May a file no rule acts on (it imports no TensorFlow) still give the repository's
    analysis a fact: a star import, training with standalone Keras or through tflearn (its
    finding is NPU000's, not a pack's), a package's re-exports (what its importers build), a
    loop over a library's dataset (``tf2_dataset_facts``)?
    Such a file is read whatever rules run."""
    return may_star_import(data) or may_use_keras(data) or may_use_tflearn(data) or is_package_init(path) \
        or may_use_datasets(data)
