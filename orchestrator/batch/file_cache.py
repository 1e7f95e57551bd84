"""What the rules made of a file, kept across runs: an unchanged file is not parsed again.

Parsing is nearly all of a run's cost, and most of a rerun's files are unchanged; forks and
copied training scripts make many files identical across repositories too. So the outcome of
:meth:`Engine.process` is stored under a key that holds everything it depends on:

- **key**: sha256 over the file's bytes (their own sha256), its path, the repository's sorted
  facts (``NPU008`` acts on "uses ``tf.device``" anywhere in the repository) and the rule-set
  fingerprint. Not the repository's name: rules report what a file says, whoever holds it, so
  a file copied into another repository is a hit (a rule must not read ``ctx.repo`` for more
  than stamping its findings, which the engine does).
- **fingerprint** (once per process and rule selection): npu-codemod's version, Python's,
  fissix's and Bowler's; a hash of every file of ``npu_codemod.codemods`` (engine and
  helpers) and ``npu_codemod.plugins`` (the built-in rules and their data, such as the audit's
  API support list); and each enabled rule in engine order: id, settings, class, plugin
  distribution and version, and a hash of the source file of the rule class's module; and the
  engine mode (``--engine``). A rule whose source cannot be found turns the cache off.
- **value**: the findings without repository and path (stamped again on a hit; snippets are
  cut again from the bytes), the rules that changed the file, the API use sites the audit
  counted, and the new bytes (zlib-compressed) or nothing. An outcome with an ``error``
  finding is never stored: it may be transient (memory, a rule's crash), so the file is
  processed again next time.

The store is one SQLite file, ``<workspace>/cache/results.sqlite3`` (WAL, busy timeout),
opened once per worker process; workers read and write it concurrently, each write its own
short transaction. It holds at most :data:`MAX_ENTRIES` outcomes: past that the oldest
written go first (a hit does not refresh an entry: that would make every read a write). Delete ``<workspace>/cache/`` to clear it; ``--no-cache``
bypasses it. A cache that cannot be opened, read or written (read-only or full disk, a
corrupt file) never fails a repository: that process goes on without it, and the command
warns once when it cannot open it at the start.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import sys
import threading
import zlib
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import FrozenSet, Optional

import npu_codemod
from npu_codemod import __version__, codemods, plugins
from npu_codemod.codemods.api_sites import ApiSites
from npu_codemod.codemods.engine import FileOutcome
from npu_codemod.codemods.findings import Finding
from npu_codemod.orchestrator.loaded_rules import RuleSelection, load_rules

CACHE_DIR = "cache"
DB_NAME = "results.sqlite3"
#: Outcomes kept: about 4 KB each on disk for TF 1.x training scripts, so 200 MB at most.
MAX_ENTRIES = 50_000
#: Seconds a worker waits for another's write before it gives the cache up.
BUSY_TIMEOUT = 10.0
#: Bumped whenever the table or the value layout changes: an older table is dropped.
SCHEMA_VERSION = 2
#: Writes between two evictions of the oldest entries (also done once on opening).
EVICT_EVERY = 256

_SCHEMA = ("CREATE TABLE results (id INTEGER PRIMARY KEY, key BLOB NOT NULL UNIQUE, "
           "outcome BLOB NOT NULL, new_data BLOB)")


def cache_path(workspace: str) -> Path:
    return Path(workspace) / CACHE_DIR / DB_NAME


class ResultStore:
    """The SQLite file. Never raises: on the first failure it records why and turns itself off."""

    def __init__(self, path: Path, max_entries: int = MAX_ENTRIES,
                 busy_timeout: float = BUSY_TIMEOUT) -> None:
        self.path = path
        self.max_entries = max_entries
        self.problem = ""
        self._writes = 0
        self._db: Optional[sqlite3.Connection] = None
        try:
            self._db = self._open(busy_timeout)
            self._evict()
        except (sqlite3.Error, OSError) as exc:
            self._fail(exc)

    def _open(self, busy_timeout: float) -> sqlite3.Connection:
        folder = self.path.parent
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        ignore = folder / ".gitignore"  # a workspace inside a checkout stays out of `git status`
        if not ignore.exists():
            ignore.write_text("# created by npu-codemod\n*\n")
        db = sqlite3.connect(self.path, timeout=busy_timeout, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")  # a crash may lose the last writes, no more
            if db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                db.execute("BEGIN IMMEDIATE")  # one process migrates; the others then see it done
                if db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                    db.execute("DROP TABLE IF EXISTS results")
                    db.execute(_SCHEMA)
                    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                db.execute("COMMIT")
        except BaseException:
            db.close()
            raise
        return db

    def get(self, key: bytes) -> Optional[tuple[bytes, Optional[bytes]]]:
        """The stored (outcome, new bytes), both compressed, or None."""
        if self._db is None:
            return None
        try:
            row: Optional[tuple[bytes, Optional[bytes]]] = self._db.execute(
                "SELECT outcome, new_data FROM results WHERE key = ?", (key,)).fetchone()
            return row
        except sqlite3.Error as exc:
            self._fail(exc)
            return None

    def put(self, key: bytes, outcome: bytes, new_data: Optional[bytes]) -> None:
        if self._db is None:
            return
        try:
            self._db.execute("INSERT OR REPLACE INTO results (key, outcome, new_data) "
                             "VALUES (?, ?, ?)", (key, outcome, new_data))
            self._writes += 1
            if self._writes % EVICT_EVERY == 0:
                self._evict()
        except sqlite3.Error as exc:
            self._fail(exc)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def _evict(self) -> None:
        assert self._db is not None
        self._db.execute("DELETE FROM results WHERE id <= (SELECT id FROM results "
                         "ORDER BY id DESC LIMIT 1 OFFSET ?)", (self.max_entries,))

    def _fail(self, exc: BaseException) -> None:
        reason = getattr(exc, "strerror", None) or str(exc)
        where = getattr(exc, "filename", None) or self.path
        self.problem = f"result cache {where}: {reason}"
        self.close()


class CachedEngine:
    """The loaded rules' engine behind the store: a hit is served without parsing, and counted."""

    def __init__(self, selection: RuleSelection, store: Optional[ResultStore]) -> None:
        self.engine = load_rules(selection).engine
        # Only a store is keyed by it: ``--no-cache`` reads none of the package's files.
        self.fingerprint = fingerprint(selection) if store is not None else None
        self.store = store
        self.hits = 0

    def process(self, data: bytes, path: str, repo: str = "",
                facts: FrozenSet[str] = frozenset()) -> FileOutcome:
        """:meth:`Engine.process`, from the store when it holds this file's outcome."""
        if self.store is None or self.fingerprint is None:
            return self.engine.process(data, path, repo=repo, facts=facts)
        key = cache_key(self.fingerprint, path, facts, data)
        restored = _restored(self.store.get(key), path, repo)
        if restored is not None:
            self.hits += 1
            return restored
        outcome = self.engine.process(data, path, repo=repo, facts=facts)
        if not any(finding.status == "error" for finding in outcome.findings):
            self.store.put(key, *_stored(outcome))
        return outcome


def cached_engine(selection: RuleSelection, workspace: Optional[str]) -> CachedEngine:
    """The engine for a job: behind the workspace's store, or none (``--no-cache``: None)."""
    return CachedEngine(selection, open_store(workspace) if workspace else None)


def open_store(workspace: str) -> ResultStore:
    """This process's (and thread's) store of ``workspace``, opened on first use."""
    return _store(str(cache_path(workspace)), os.getpid(), threading.get_ident())


@lru_cache(maxsize=8)
def _store(path: str, pid: int, thread: int) -> ResultStore:
    # pid and thread: a connection must not cross a fork or be shared by threads.
    return ResultStore(Path(path))


def cache_problem(workspace: str) -> str:
    """Why the workspace's cache cannot be used ('' when it can): the command warns once."""
    path = cache_path(workspace)
    store = ResultStore(path)
    store.close()
    if not store.problem:
        return ""
    hint = f" (delete {path.parent} to start a new cache)" if path.is_file() else ""
    return f"{store.problem}: files are parsed again{hint}"


def cache_key(fingerprint: str, path: str, facts: FrozenSet[str], data: bytes) -> bytes:
    parts = [fingerprint, path, sorted(facts), hashlib.sha256(data).hexdigest()]
    return hashlib.sha256(json.dumps(parts).encode()).digest()


def _stored(outcome: FileOutcome) -> tuple[bytes, Optional[bytes]]:
    rows = [(f.line, f.column, f.rule_id, f.rule_name, f.status, f.message, f.level)
            for f in outcome.findings]
    sites = [(row.api, row.status, row.covered, row.sites, row.owned) for row in outcome.api_sites]
    value = zlib.compress(json.dumps([rows, outcome.rule_ids, sites, outcome.kind]).encode())
    return value, None if outcome.new_data is None else zlib.compress(outcome.new_data)


def _restored(stored: Optional[tuple[bytes, Optional[bytes]]], path: str,
              repo: str) -> Optional[FileOutcome]:
    """The outcome of a stored entry for ``repo``; None for none, or a damaged one (a miss)."""
    if stored is None:
        return None
    value, new_data = stored
    try:
        rows, rule_ids, sites, *kind = json.loads(zlib.decompress(value))
        findings = tuple(Finding(repo, path, line, column, rule_id, name, status, message, level=level)
                         for line, column, rule_id, name, status, message, level in rows)
        return FileOutcome(path, findings, None if new_data is None else zlib.decompress(new_data),
                           tuple(rule_ids), tuple(ApiSites(*row) for row in sites),
                           kind[0] if kind else "")
    except (zlib.error, ValueError, TypeError, IndexError):
        return None


@lru_cache(maxsize=4)
def fingerprint(selection: RuleSelection) -> Optional[str]:
    """What the outcomes of ``selection``'s rules depend on besides the file, hashed; None
    when a rule's source file cannot be read (its changes could not be seen)."""
    loaded_rules = load_rules(selection)
    rules = []
    for rule in loaded_rules.engine.rules:
        source = module_source_hash(type(rule).__module__)
        if source is None:
            return None
        plugin = loaded_rules.plugins.plugin_of(rule)
        rules.append([rule.id, repr(rule.settings), type(rule).__qualname__,
                      plugin.distribution, plugin.version, source])
    # The engine mode too: both give the same outcome, but ``--engine full`` is the reference
    # a user reruns with when a selective outcome is in doubt, so it must not hit that one.
    parts = [SCHEMA_VERSION, __version__, sys.version, _version("fissix"), _version("bowler"),
             _package_sources(), rules, selection.engine]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


@lru_cache(maxsize=1)
def _package_sources() -> str:
    """One hash of the engine, its helpers and the built-in rules with their data files: any
    edit is a new rule set."""
    digest = hashlib.sha256()
    for package in (npu_codemod, codemods, plugins):  # npu_codemod: api/, testing.py
        root = Path(package.__path__[0])
        for path in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix != ".pyc"):
            digest.update(f"{package.__name__}/{path.relative_to(root)}\0".encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def module_source_hash(module_name: str) -> Optional[str]:
    """A hash of the code a rule's outcomes may depend on: every ``.py`` file of the top-level
    package its module belongs to (a plugin's messages or helpers may live in a sibling
    module), or the module's own file when it is not in a package (a ``--plugin`` file)."""
    top = module_name.split(".")[0]
    roots = getattr(sys.modules.get(top), "__path__", None) if top != "npu_codemod" else None
    if roots:
        files = sorted(path for root in roots for path in Path(root).rglob("*.py"))
    else:  # a single-file plugin; built-in rules: their package is in _package_sources
        filename = getattr(sys.modules.get(module_name), "__file__", None)
        files = [Path(filename)] if filename else []
    if not files:
        return None
    digest = hashlib.sha256()
    try:
        for path in files:
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    except OSError:
        return None
    return digest.hexdigest()


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return ""
