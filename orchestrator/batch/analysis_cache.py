"""The repository analysis, kept in the result cache: a rerun does not analyse an unchanged file.

Before its files are rewritten, a repository is analysed file by file
(:meth:`LoadedRules.file_facts`: each file's TensorFlow signals, its import-graph fact, every
plugin's ``npu_codemod_analyze_file`` hook), a third of a scan's CPU. A file's part depends on
its path, its bytes and the code that analyses it, nothing else (a hook receives the path and
the text only), so it is kept in the result cache's store (``file_cache.ResultStore``, the
same SQLite file, evicted with the outcomes) under a key of its own:

- **key**: sha256 over ``"analysis"``, the file's path, the sha256 of its bytes and the
  analysis fingerprint;
- **analysis fingerprint**: the result cache's rule-set fingerprint (versions, every file of
  the engine, its helpers and the built-in rules, each enabled rule's source and settings), and
  each analysis hook's plugin name and a hash of its package's sources (a plugin may analyse
  without any enabled rule), and a hash of ``orchestrator/loaded_rules.py``, which runs the
  analysis. A hook whose source cannot be read turns this cache off;
- **value**: the file's facts. A file on which a hook raised is not kept: it is analysed again
  next time, and reports its error again.

The repository's facts are the union of its files' (``LoadedRules.files_facts``), so a file
served from here gives the same facts, findings and outcomes as one analysed again
(``tests/test_analysis_cache.py``); ``--no-cache`` bypasses it with the result cache.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from functools import lru_cache
from typing import Optional

from npu_codemod.orchestrator.batch.file_cache import ResultStore, fingerprint, module_source_hash, open_store
from npu_codemod.orchestrator.loaded_rules import FileFacts, LoadedRules, RuleSelection, load_rules


class CachedAnalysis:
    """:meth:`LoadedRules.file_facts` behind the store: a hit is served without reading the
    file, and counted."""

    def __init__(self, selection: RuleSelection, store: Optional[ResultStore]) -> None:
        self.loaded_rules: LoadedRules = load_rules(selection)
        self.fingerprint = analysis_fingerprint(selection) if store is not None else None
        self.store = store
        self.hits = 0

    def __call__(self, path: str, data: bytes) -> FileFacts:
        if self.store is None or self.fingerprint is None:
            return self.loaded_rules.file_facts(path, data)
        key = analysis_key(self.fingerprint, path, data)
        kept = _restored(self.store.get(key))
        if kept is not None:
            self.hits += 1
            return kept
        found = self.loaded_rules.file_facts(path, data)
        if not found.errors:
            self.store.put(key, zlib.compress(json.dumps(sorted(found.facts)).encode()), None)
        return found


def cached_analysis(selection: RuleSelection, workspace: Optional[str]) -> CachedAnalysis:
    """The analysis for a job: behind the workspace's store, or none (``--no-cache``: None)."""
    return CachedAnalysis(selection, open_store(workspace) if workspace else None)


def analysis_key(analysis_fingerprint: str, path: str, data: bytes) -> bytes:
    parts = ["analysis", analysis_fingerprint, path, hashlib.sha256(data).hexdigest()]
    return hashlib.sha256(json.dumps(parts).encode()).digest()


@lru_cache(maxsize=4)
def analysis_fingerprint(selection: RuleSelection) -> Optional[str]:
    """What a file's analysis depends on besides the file, hashed; None when the rule set's
    or an analysis hook's source cannot be read (its changes could not be seen)."""
    rule_set = fingerprint(selection)
    if rule_set is None:
        return None
    plugins = load_rules(selection).plugins
    hooks = []
    for impl in plugins.pm.hook.npu_codemod_analyze_file.get_hookimpls():
        source = module_source_hash(impl.function.__module__)
        if source is None:
            return None
        hooks.append([plugins.pm.get_name(impl.plugin) or "", impl.function.__qualname__, source])
    # The code that runs the analysis itself (``LoadedRules.file_facts``: which files are read,
    # which of the engine's analyses each gets) lives outside the hashed packages.
    analysis = module_source_hash(LoadedRules.__module__)
    if analysis is None:
        return None
    return hashlib.sha256(json.dumps([rule_set, hooks, analysis]).encode()).hexdigest()


def _restored(stored: Optional[tuple[bytes, Optional[bytes]]]) -> Optional[FileFacts]:
    """The facts of a stored entry; None for none, or a damaged one (a miss)."""
    if stored is None:
        return None
    try:
        facts = json.loads(zlib.decompress(stored[0]))
    except (zlib.error, ValueError):
        return None
    if not isinstance(facts, list) or not all(isinstance(fact, str) for fact in facts):
        return None
    return FileFacts(frozenset(facts))
