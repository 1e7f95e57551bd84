"""The rules a run uses, built once per process from a picklable selection.

Workers cannot receive a plugin manager or compiled Bowler query (neither pickles), so they
receive a :class:`RuleSelection` and build the same :class:`Toolkit` themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import FrozenSet, Iterable, Optional

from npu_codemod.codemods.engine import Engine
from npu_codemod.codemods.rule import Rule
from npu_codemod.codemods.source import UndecodableSource, decode_source
from npu_codemod.codemods.tfnames import IMPORTS_TF
from npu_codemod.plugins.manager import Plugins, PluginSpec, load_plugins, select_rules


@dataclass(frozen=True)
class RuleSelection:
    """Which plugins to load and which of their rules to run."""

    plugins: PluginSpec = field(default_factory=PluginSpec)
    only: Optional[FrozenSet[str]] = None
    disabled: FrozenSet[str] = frozenset()


@dataclass
class Toolkit:
    plugins: Plugins
    rules: list[Rule]
    engine: Engine

    def analyze(self, files: Iterable[tuple[str, bytes]]) -> FrozenSet[str]:
        """Repository-wide facts (``npu_codemod_analyze_file``) over the TensorFlow files."""
        facts: set[str] = set()
        hook = self.plugins.pm.hook.npu_codemod_analyze_file
        for path, data in files:
            if not self.engine.wants(data):
                continue
            try:
                text = decode_source(data).text
            except UndecodableSource:
                continue  # reported by the engine when the file is processed
            if IMPORTS_TF.search(text):
                for result in hook(path=path, text=text):
                    facts.update(result or ())
        return frozenset(facts)


@lru_cache(maxsize=4)
def build_toolkit(selection: RuleSelection) -> Toolkit:
    plugins = load_plugins(selection.plugins)
    rules = select_rules(plugins.rules(), set(selection.only) if selection.only else None,
                         set(selection.disabled))
    return Toolkit(plugins, rules, Engine(rules))
