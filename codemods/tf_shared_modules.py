"""The runtime of a module no pin decides: that of the programs that import it (``tf_scopes``).

google-research/big_transfer keeps ``input_pipeline_tf2_or_jax.py`` at its top, where nothing
pins TensorFlow, and imports it from ``bit_tf2/train.py`` and ``bit_jax/train.py``, whose own
``requirements.txt`` pin ``tensorflow==2.2.0``. Decided from its own folder, the module's
runtime is undetermined, and a ``tf-neutral`` file there gets the TF 1.x rules
(``from npu_bridge.npu_init import *``): TF Adapter 2.x ships no ``npu_bridge``, so the TF 2.x
program fails at import. The module runs in the processes of the programs that import it: it
takes their runtime.

A *shared* module is one in a folder whose runtime no pin or configuration decides (undetermined,
or decided from the code of that folder's other files) and that is no program itself (no
``__main__`` block). Its importers are followed up the import graph, through other such modules,
to the files that decide: a file of a pinned folder (its folder's runtime), or a program of an
unpinned one (its folder's runtime, often undetermined). Test files import the module to test it,
on any version: they decide nothing, and neither does an importer whose own runtime is
undetermined (a subfolder's unversioned requirement, a PyTorch or JAX program). When the decided
ones all run TF 2.x, or all TF 1.x, the module takes that runtime; when TF 2.x meets TF 1.x, the
module's version is undetermined and reported (:data:`DISAGREE`): the TF 1.x adapter never goes
silently into a module a TF 2.x program imports. Otherwise (no decided importer) its folder
decides, as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Optional

from .file_kinds import is_test_file
from .program_graph import Graph, Node
from .tf_versions import RUNTIME_TF1, RUNTIME_TF2, RUNTIME_UNKNOWN

DISAGREE = ("TensorFlow major version undetermined for this module: the programs that import it "
            "run different versions ({importers}); pin one version for them or set "
            "[tool.npu-codemod] tensorflow; it is treated as TF 2.x code unless it uses "
            "tf.compat.v1 (then as TF 1.x code: TF Adapter 1.x, npu_bridge)")
#: Why a shared module runs its importers' runtime, completing "in a repository ..."
#: (``tf_versions.runtime_why``).
IMPORTED_BY = "whose programs that import this module run TF {version}.x ({importers})"
_NAMED = 3


@dataclass(frozen=True)
class Shared:
    """A shared module's runtime (:data:`RUNTIME_UNKNOWN`: its importers disagree) and the
    files that decided it, each with its runtime."""

    path: str
    runtime: str
    importers: tuple[tuple[str, str], ...]

    @property
    def why(self) -> str:
        """The :data:`IMPORTED_BY` phrase ("" when undetermined)."""
        if self.runtime == RUNTIME_UNKNOWN:
            return ""
        return IMPORTED_BY.format(version=self.runtime, importers=_named(path for path, _ in self.importers))

    @property
    def message(self) -> str:
        """The :data:`DISAGREE` finding ("" when the importers agree)."""
        if self.runtime != RUNTIME_UNKNOWN:
            return ""
        return DISAGREE.format(importers=_named(f"{path}: {_version(value)}" for path, value in self.importers))


def shared_runtimes(nodes: Mapping[str, Node], folder_of: Callable[[str], str],
                    runtimes: Mapping[str, str], pinned: frozenset[str]) -> dict[str, Shared]:
    """Each shared module (by path) whose importers decide its runtime (see the module's doc):
    ``nodes`` the whole repository's graph, ``folder_of`` a file's folder with its own runtime,
    ``runtimes`` each such folder's, ``pinned`` those a pin or the configuration decides."""
    graph = Graph(nodes)
    importers = graph.importers()
    by_path = {node.path: node for node in nodes.values()}
    found = {}
    for name, node in sorted(nodes.items()):
        if folder_of(node.path) in pinned or node.main or name not in importers:
            continue
        deciding = _deciding(name, importers, by_path, folder_of, runtimes, pinned)
        runtime = _agreed({value for _, value in deciding})
        if runtime is not None:
            found[node.path] = Shared(node.path, runtime, deciding)
    return found


def _deciding(name: str, importers: Mapping[str, list[str]], by_path: Mapping[str, Node],
              folder_of: Callable[[str], str], runtimes: Mapping[str, str],
              pinned: frozenset[str]) -> tuple[tuple[str, str], ...]:
    """The files that decide the runtime of the module ``name``, each with its runtime: its
    importers, transitively, up to a file of a pinned folder or a program."""
    found: dict[str, str] = {}
    seen, todo = {name}, [name]
    while todo:
        for path in importers.get(todo.pop(), ()):
            node = by_path[path]
            if node.module in seen or is_test_file(path):
                continue
            seen.add(node.module)
            folder = folder_of(path)
            if folder in pinned or node.main or node.runs:
                found[path] = runtimes.get(folder, RUNTIME_UNKNOWN)
            if folder not in pinned:  # a pinned folder's file runs its folder's runtime
                todo.append(node.module)
    return tuple(sorted(found.items()))


def _agreed(values: set[str]) -> Optional[str]:
    """The runtime the importers' ``values`` give: the one their decided runtimes agree on,
    undetermined when TF 2.x meets TF 1.x, None (the folder decides) when none is decided. An
    undetermined importer says nothing: a subfolder's unversioned ``tensorflow`` requirement
    (dopamine's ``labs/``) or a PyTorch or JAX program (big_transfer's ``bit_pytorch``) must not
    take a TF 2.x program's module to the TF 1.x adapter."""
    decided = values & {RUNTIME_TF1, RUNTIME_TF2}
    if len(decided) == 1:
        return decided.pop()
    return RUNTIME_UNKNOWN if decided else None


def _version(value: str) -> str:
    return f"TF {value}.x" if value in (RUNTIME_TF1, RUNTIME_TF2) else "undetermined"


def _named(items: Iterable[str]) -> str:
    listed = list(items)
    named = ", ".join(listed[:_NAMED])
    return named + (f" and {len(listed) - _NAMED} more" if len(listed) > _NAMED else "")
