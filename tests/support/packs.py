"""What the tests of the distributed and keras packs share: the pack's rule ids, and the
repository facts the pipeline gathers before it rewrites (``LoadedRules.repository_facts``), for files
given as text, so that a test sees a file exactly as ``npu-codemod run`` does."""

from __future__ import annotations

from typing import AbstractSet, Any, Mapping

from npu_codemod.codemods.findings import Finding
from npu_codemod.codemods.tf_programs import program_facts
from npu_codemod.codemods.tf_runtime import decide
from npu_codemod.codemods.tf_scopes import with_trained_models
from npu_codemod.orchestrator.loaded_rules import RuleSelection, load_rules
from npu_codemod.testing import assert_migrates

DISTRIBUTED = frozenset({"NPU021", "NPU022", "NPU023", "NPU024", "NPU025", "NPU026", "NPU027"})
KERAS = frozenset({"NPU041", "NPU042"})
#: The import the engine adds to every file a rule of the packs rewrote.
INIT = "from npu_bridge.npu_init import *\n"
HVD = "import tensorflow as tf\nimport horovod.tensorflow as hvd\n"
#: The facts of a Horovod repository and of a tf.distribute one.
HOROVOD_REPO = frozenset({"distributed:horovod"})
STRATEGY_REPO = frozenset({"distributed:strategy"})
BOTH_REPO = HOROVOD_REPO | STRATEGY_REPO
GUIDE = "https://github.com/npu-codemod/npu-codemod/blob/main/docs/rules.md"


def repository_facts(files: Mapping[str, str]) -> frozenset[str]:
    """The facts of a repository of ``files`` (path -> source), as a run gathers them."""
    loaded_rules = load_rules(RuleSelection())
    return loaded_rules.repository_facts([(path, text.encode("utf-8")) for path, text in files.items()]).facts


def tf2_entries(files: Mapping[str, str]) -> set[str]:
    """The entry scripts (NPU061) the repository's analysis finds in a TF 2.x repository of ``files``."""
    facts = with_trained_models(repository_facts(files))
    found, _ = program_facts(facts, decide("2", {}, facts).value)
    return {fact.partition(":")[2] for fact in found if fact.startswith("tf2-entry:")}


def message_of(findings: list, rule_id: str, line: int) -> str:
    """The message of the one finding of ``rule_id`` at ``line``."""
    (found,) = [f.message for f in findings if f.rule_id == rule_id and f.line == line]
    return found


def pack_migrates(rule_ids: AbstractSet[str], before: str, after: str, *, header: str = HVD,
                  facts: AbstractSet[str] = HOROVOD_REPO, **kwargs: Any) -> list[Finding]:
    """:func:`npu_codemod.testing.assert_migrates` on ``header + before`` in a repository of
    ``facts`` (a Horovod one by default); the rewrite adds :data:`INIT` above the header.
    ``kwargs`` go to ``assert_migrates`` (``findings=``, ``removed=``)."""
    return assert_migrates(rule_ids, header + before, INIT + header + after, facts=facts, **kwargs)
