"""The result cache's fingerprint covers every module of a plugin's package, not only the one
that defines the rule class: editing a sibling module (its messages) must miss the cache."""

from __future__ import annotations

import sys
from pathlib import Path

from npu_codemod.orchestrator.batch.file_cache import cached_engine, fingerprint
from npu_codemod.orchestrator.loaded_rules import RuleSelection
from npu_codemod.plugins.manager import PluginSpec

RULES = '''
from npu_codemod.api import Rule, hookimpl
from acme_fp.messages import MESSAGE


class Report(Rule):
    id = "FPR001"
    name = "report-run-config"
    description = "Reports RunConfig."
    calls = ("tensorflow.estimator.RunConfig",)

    def visit_reference(self, reference, ctx):
        ctx.report(reference, "unmigrated", MESSAGE)


@hookimpl
def npu_codemod_rules():
    return [Report()]
'''


def test_editing_a_sibling_module_of_a_plugin_changes_the_fingerprint(tmp_path: Path, monkeypatch) -> None:
    package = tmp_path / "acme_fp"
    package.mkdir()
    (package / "__init__.py").write_text(RULES)
    (package / "messages.py").write_text('MESSAGE = "use NPURunConfig"\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    selection = RuleSelection(plugins=PluginSpec(extra=("acme_fp",)))
    before = fingerprint(selection)
    assert before is not None and "acme_fp" in sys.modules
    fingerprint.cache_clear()  # once per process in a run; here the same process edits
    assert fingerprint(selection) == before
    (package / "messages.py").write_text('MESSAGE = "use NPURunConfig(...) from npu_bridge"\n')
    fingerprint.cache_clear()
    assert fingerprint(selection) not in (None, before)


def test_the_engine_mode_is_part_of_the_fingerprint() -> None:
    """``--engine full`` is what a user reruns with to check a selective outcome: it must not
    be answered from the cache the selective run filled."""
    assert fingerprint(RuleSelection(engine="selective")) != fingerprint(RuleSelection(engine="full"))


def test_without_a_store_the_fingerprint_is_not_computed() -> None:
    """``--no-cache``: nothing is keyed, so the package's sources are not read and hashed
    (about 20 ms of every worker's start)."""
    fingerprint.cache_clear()
    engine = cached_engine(RuleSelection(), None)
    assert engine.store is None and engine.fingerprint is None
    assert fingerprint.cache_info().currsize == 0
