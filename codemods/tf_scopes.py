"""The TensorFlow runtime of each part of a repository: a folder with its own TensorFlow pins.

Real repositories keep TF 2.x code beside TF 1.x code: google-research/simclr pins
``tensorflow==1.15.4`` in its top ``requirements.txt`` and keeps a ``tf2/`` folder with its own
``requirements.txt`` (``tensorflow``) and TF 2.x code. One runtime for the whole repository
makes the ``tf2/`` files conflicts (TF 2.x API in a repository pinned to TF 1.x) and leaves its
entry script without the device init.

A *scope* is a folder, other than the top, that holds a manifest with a TensorFlow requirement
(or its own ``[tool.npu-codemod] tensorflow`` setting) and Python code under it: TensorFlow
files, or any other Python file (google/tpu's ``tools/ray_tpu/src/tune/requirements.txt`` pins
``tensorflow-cpu==2.9.3`` for a JAX script beside it; it is that tool's pin, not the
repository's, whose TF 1.x code it made conflicts). Each TensorFlow file and each manifest
belongs to the deepest scope that holds it, else to the repository's top scope: a
``requirements/gpu.txt`` or ``docker/requirements.txt`` beside no code still pins the whole
repository, as before. Each scope's runtime is decided as ``tf_runtime``
decides a repository's, from its own manifests and its own files' code, and its TF 2.x programs
(``tf_programs``) from its own files. The top scope's runtime is the fact ``tf-runtime:<v>``;
another scope's is ``tf-runtime@<folder>/:<v>`` (``tf_versions.runtime_of`` picks a file's).
A repository without scopes is decided exactly as one runtime. A module no pin decides that
programs of scopes import runs their runtime (``tf_shared_modules``: ``tf-runtime@<path>:<v>``).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from pathlib import PurePosixPath
from typing import Iterable, Mapping, Optional

from .tf_model_idioms import KERAS_SCRIPT_FACT, PENDING_FACT, trained_files
from .tf_programs import (
    GRAPH_FACT,
    NEUTRAL_TF1_FACT,
    RepositoryMessage,
    graph_nodes,
    library_facts,
    program_facts,
    with_programs,
)
from .tf_runtime import UNDETERMINED, Runtime, decide, own_setting, pins_of, with_runtime
from .tf_shared_modules import Shared, shared_runtimes
from .tf_versions import CODE_E_ONLY, RUNTIME_TF2, RUNTIME_UNKNOWN, SCOPE_FACT, WHY_FACT, Signals
from .training_calls import CALLS_FACT

#: One fact per TensorFlow file: ``tf-file@<codes>|<path>`` (its ``tf-code:`` facts, comma
#: separated), read and dropped when the runtimes are decided.
FILE_FACT = "tf-file@"


def file_fact(path: str, signals: Signals) -> str:
    """The :data:`FILE_FACT` of one TensorFlow file."""
    return f"{FILE_FACT}{','.join(sorted(signals.facts()))}|{path}"


def _folder(path: str) -> str:
    parent = str(PurePosixPath(path).parent)
    return "" if parent == "." else parent + "/"


def _inside(path: str, folder: str) -> bool:
    return path.startswith(folder)


def _deepest(path: str, folders: Iterable[str]) -> str:
    return max((folder for folder in folders if _inside(path, folder)), key=len, default="")


def pinning_folders(manifests: Mapping[str, str]) -> set[str]:
    """The folders (``a/b/``, ``""`` for the top) of the manifests that pin TensorFlow or set
    ``[tool.npu-codemod] tensorflow``."""
    return {_folder(path) for path, text in manifests.items()
            if pins_of(path, text, manifests)
            or (PurePosixPath(path).name == "pyproject.toml" and own_setting(text) is not None)}


def code_folders(manifests: Mapping[str, str], python_files: Iterable[str]) -> tuple[str, ...]:
    """The folders of :func:`pinning_folders` other than the top that hold a Python file
    (``python_files``: every ``.py`` path of the repository), for :func:`decided_facts`: a
    listing's paths are not kept for a repository's whole run, these few folders are."""
    folders = pinning_folders(manifests) - {""}
    if not folders:
        return ()
    holding = {str(parent) + "/" for path in python_files for parent in PurePosixPath(path).parents}
    return tuple(sorted(folders & holding))


def scope_folders(manifests: Mapping[str, str], tf_files: Iterable[str], tops: Iterable[str] = (),
                  code: Iterable[str] = ()) -> list[str]:
    """The folders (``a/b/``) that are scopes: not the top, nor one of ``tops`` (the folders
    ``check`` was given, each the top of a repository); ``code``: the pinning folders that hold
    Python code (:func:`code_folders`), a scope even where none of it imports TensorFlow."""
    files = list(tf_files)
    held = set(code)
    return sorted(folder for folder in pinning_folders(manifests) - {""} - set(tops)
                  if folder in held or any(_inside(path, folder) for path in files))


def decided_facts(configured: Optional[str], manifests: Mapping[str, str], facts: frozenset[str],
                  tops: Iterable[str] = (), code: Iterable[str] = ()
                  ) -> tuple[frozenset[str], tuple[RepositoryMessage, ...]]:
    """``facts`` with each scope's runtime and TF 2.x programs in place of the per-file facts
    they were decided from (and the library code no program reaches, over every scope:
    ``tf_programs.library_facts``), and the messages to report (``tops``, ``code``: see
    :func:`scope_folders`)."""
    facts = with_trained_models(facts)
    files = {fact[len(FILE_FACT):].partition("|")[2]: fact[len(FILE_FACT):].partition("|")[0]
             for fact in facts if fact.startswith(FILE_FACT)}
    folders = scope_folders(manifests, files, tops, code)
    kept = frozenset(fact for fact in facts if not fact.startswith(FILE_FACT))
    every_graph = [fact for fact in kept if fact.startswith(GRAPH_FACT)]
    if not folders:
        decided, found = _decided(configured, manifests, kept, "")
        return decided | library_facts(every_graph, decided), found
    codes: dict[str, set[str]] = defaultdict(set)
    for path, listed in files.items():
        codes[_deepest(path, folders)].update(filter(None, listed.split(",")))
    graph: dict[str, set[str]] = defaultdict(set)
    for fact in kept:
        if fact.startswith(GRAPH_FACT):
            graph[_deepest(fact[len(GRAPH_FACT):], folders)].add(fact)
        elif fact.startswith(CALLS_FACT):  # read with the graph, by its file's scope
            graph[_deepest(fact[len(CALLS_FACT):], folders)].add(fact)
    others = frozenset(fact for fact in kept if not fact.startswith(GRAPH_FACT) and not fact.startswith(CALLS_FACT))
    result, messages = frozenset(others), ()  # type: frozenset[str], tuple[RepositoryMessage, ...]
    owns = {folder: {path: text for path, text in manifests.items() if _deepest(path, folders) == folder}
            for folder in [""] + folders}
    runtimes = {folder: _runtime(configured, own, frozenset(graph[folder]) | codes[folder], folder, manifests)
                for folder, own in owns.items()}
    shared = shared_runtimes(graph_nodes(fact for facts in graph.values() for fact in facts),
                             lambda path: _deepest(path, folders),
                             {folder: runtime.value for folder, runtime in runtimes.items()},
                             frozenset(folder for folder, runtime in runtimes.items() if runtime.pinned))
    tf2 = any(runtime.value == RUNTIME_TF2 for runtime in runtimes.values()) \
        or any(item.runtime == RUNTIME_TF2 for item in shared.values())
    for folder, own in owns.items():
        decided, found = _decided(configured, own, frozenset(graph[folder]) | codes[folder], folder, manifests,
                                  runtimes[folder], [item for path, item in shared.items()
                                                     if _deepest(path, folders) == folder], tf2)
        result |= decided
        messages += found
    return result | library_facts(every_graph, result), messages


def _tf2_code(facts: frozenset[str]) -> bool:
    """Has a file of the scope (its :data:`GRAPH_FACT` among ``facts``) TF 2.x signs?"""
    return any(fact.startswith(GRAPH_FACT) and "2" in fact[len(GRAPH_FACT):].rsplit("|", 2)[1] for fact in facts)


def _with_shared(programs: frozenset[str], messages: tuple[RepositoryMessage, ...], shared: Iterable[Shared]
                 ) -> tuple[frozenset[str], tuple[RepositoryMessage, ...]]:
    """A scope's program facts and messages with its shared modules' runtimes: each one's
    :data:`SCOPE_FACT` (a file's path: ``tf_versions.runtime_of``) and why, none of them a
    TF 1.x-side neutral file of the scope (their importers decide), and a finding at each one
    whose importers disagree."""
    found = set(programs)
    for item in shared:
        found.discard(NEUTRAL_TF1_FACT + item.path)
        found.add(f"{SCOPE_FACT}{item.path}:{item.runtime}")
        if item.why:
            found.add(f"{WHY_FACT}{item.path}|{item.why}")
        if item.message:
            messages += (RepositoryMessage(item.path, item.message, rule=None),)
    return frozenset(found), messages


def with_trained_models(facts: frozenset[str]) -> frozenset[str]:
    """``facts`` with the E signal of each file whose Keras training runs on a model a function
    of the repository returns (``tf_model_idioms``) in its :data:`FILE_FACT`, its import-graph
    fact and the repository's codes, and without the pending facts that asked; such a file
    that imports no TensorFlow gets a :data:`KERAS_SCRIPT_FACT` (NPU041 gives it the Keras session
    where it runs TF 1.x)."""
    trained = trained_files(facts)
    trained_tf = set(trained)  # the TF files among them: E-only code of the repository
    tf_files = {fact.rpartition("|")[2] for fact in facts if fact.startswith(FILE_FACT)}
    found = {KERAS_SCRIPT_FACT + path for path in trained - tf_files}  # importing no TF: NPU041's
    for fact in facts:
        if fact.startswith(PENDING_FACT):
            continue
        if fact.startswith(FILE_FACT) and fact.rpartition("|")[2] in trained:
            codes, _, path = fact[len(FILE_FACT):].rpartition("|")
            fact = f"{FILE_FACT}{','.join(sorted({*filter(None, codes.split(',')), CODE_E_ONLY}))}|{path}"
        elif fact.startswith(GRAPH_FACT):
            path, flags, imports = fact[len(GRAPH_FACT):].rsplit("|", 2)
            if path in trained and "x" not in flags:  # imports no TF: trains a model of the repository's
                fact = f"{GRAPH_FACT}{path}|{flags}tk2|{imports}"
                trained_tf.discard(path)
            elif path in trained and "2" not in flags:
                fact = f"{GRAPH_FACT}{path}|{flags}2|{imports}"
        found.add(fact)
    return frozenset(found | ({CODE_E_ONLY} if trained_tf else set()))


def _runtime(configured: Optional[str], own: Mapping[str, str], facts: frozenset[str], folder: str,
             every: Optional[Mapping[str, str]] = None) -> Runtime:
    """One scope's runtime from its own manifests (includes followed in ``every``) and code."""
    return decide(configured or own_setting(own.get(folder + "pyproject.toml", "")), own, facts, every)


def _decided(configured: Optional[str], own: Mapping[str, str], facts: frozenset[str], folder: str,
             every: Optional[Mapping[str, str]] = None, runtime: Optional[Runtime] = None,
             shared: Iterable[Shared] = (), tf2_elsewhere: bool = False
             ) -> tuple[frozenset[str], tuple[RepositoryMessage, ...]]:
    """One scope: its runtime (:func:`_runtime`, unless given) and programs, and the runtime of
    each of its ``shared`` modules (``tf_shared_modules``: its importers'). Its version
    undetermined, a ``tf-neutral`` file that gets the TF 1.x rules is a choice the finding
    reports when TF 2.x code runs in the repository (here, or elsewhere: ``tf2_elsewhere``);
    in a repository with none, such files are TF 1.x code, as before the TF 2.x pack."""
    pyproject = own.get(folder + "pyproject.toml", "")
    runtime = runtime or _runtime(configured, own, facts, folder, every)
    programs, messages = program_facts(facts, runtime.value, pyproject)
    programs, messages = _with_shared(programs, messages, shared)
    decided = with_programs(with_runtime(facts, runtime), programs)
    if runtime.why:
        decided |= {f"{WHY_FACT}{folder}|{runtime.why}"}
    found = tuple(RepositoryMessage(path, text, rule=None) for path, text in runtime.messages) + messages
    if runtime.value == RUNTIME_UNKNOWN and ("", UNDETERMINED) not in runtime.messages \
            and any(fact.startswith(NEUTRAL_TF1_FACT) for fact in programs) and (tf2_elsewhere or _tf2_code(facts)):
        found += (RepositoryMessage("", UNDETERMINED, rule=None),)  # tf-neutral files get the TF 1.x rules
    if not folder:
        return decided, found
    where = min(own) if own else folder  # a scope's repository-level messages: at its manifest
    return (frozenset(SCOPE_FACT + folder + ":" + runtime.value if fact == runtime.fact else fact
                      for fact in decided),
            tuple(replace(message, path=message.path or where) for message in found))
