"""The repository's import graph for NPU061: one :class:`Node` per Python file (what it imports,
what kind of code it is), each node's imports resolved to the repository's modules once
(:class:`Graph`), and what an entry script reaches through them (:func:`closure`).

``codemods/tf_programs`` builds the nodes from the analysis' facts and decides the programs.
How one import is resolved (:func:`imported_module`) and how imports are followed
(:func:`reached_from`) serve the distributed pack's Horovod graph as well (NPU021: does the
program reach a use; ``api._toolkit``).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import AbstractSet, Callable, Iterable, Mapping, Optional, Union

from .modules import KnownNames, nearest_name
from .names import module_parts
from .tf_versions import RUNTIME_TF1, RUNTIME_TF2, RUNTIME_UNKNOWN


@dataclass(frozen=True)
class Node:
    """One file of the graph: its path, flags, and the dotted names it imports."""

    path: str
    main: bool
    compat: bool
    trains: bool
    tf: bool
    imports: tuple[str, ...]
    tf1: bool = False  # TF 1.x-only APIs
    tf2: bool = False  # TF 2.x-only APIs or TF 2.x idioms
    runs: bool = False  # its module-level code trains (and it is no test file)
    other: bool = False  # imports another deep-learning framework and no TensorFlow
    adapts: bool = False  # asks which TensorFlow runs it (``codemods/mode_checks``)
    #: imports no TensorFlow, and trains a Keras model a function of the repository returns
    #: (``models.build()``: ``tf_model_idioms``): a TF 2.x program's training code
    keras: bool = False
    #: graph-mode compat.v1 API beside TF 2.x idioms, no compat switch: a ``conflict`` file
    #: where the runtime is not TF 1.x (``Signals.graph_in_eager``), rewritten by nothing
    graph_in_eager: bool = False

    def eager(self, runtime: str) -> bool:
        """Eager TF 2.x training code in a repository whose runtime is ``runtime``."""
        return self.trains and (self.tf or self.keras) and not self.compat and not self.tf1 \
            and (runtime == RUNTIME_TF2 or self.tf2)

    @property
    def module(self) -> str:
        return ".".join(module_parts(self.path))


@dataclass
class Program:
    """What an entry reaches: the training files that are eager TF 2.x, the compat ones, and
    (version undetermined) the TF 1.x ones. ``eager`` are the training files of the ``tf2``
    kind (a TF 2.x signal) of the program's own code; ``neutral`` the training files of the
    ``tf-neutral`` kind where the runtime is TF 2.x (no TF 2.x signal: ``re.compile(...)`` is
    no eager code), which make an entry of a program with no compat or TF 1.x file and mix no
    program; ``library`` the training files of library code elsewhere in the repository that
    ask which TensorFlow runs them (Horovod's own ``horovod/tensorflow`` and ``horovod/_keras``
    under its ``examples/``): a dependency the repository carries, they mix no program (they
    run in graph mode as well) and make an entry only when the entry imports them itself
    (``imported``: ``from mylib.keras_tools import train``, a script that trains through the
    library); reached through other modules only, they are the library's internals
    (Horovod's ``horovod/spark/tensorflow/compute_worker.py`` imports ``horovod.spark.run``,
    which reaches Horovod's Keras code: a data-service worker, no training program)."""

    eager: set[str] = field(default_factory=set)
    neutral: set[str] = field(default_factory=set)
    library: set[str] = field(default_factory=set)
    imported: set[str] = field(default_factory=set)
    compat: set[str] = field(default_factory=set)
    reached: set[str] = field(default_factory=set)
    tf1: set[str] = field(default_factory=set)  # TF 1.x files, where the version is undetermined


class Graph:
    """The repository's import graph: each node's imports resolved to the modules of the
    repository (worked out once per node) and to packages. A package imported as such runs its
    ``__init__`` alone (a node when it imports anything: ``from retinanet import Executor``
    with a re-exporting ``__init__`` reaches what that imports), never its sibling modules:
    ``import keras_retinanet.bin``, a ``sys.path`` bootstrap of a package whose ``__init__`` is
    empty, reaches none of its training modules (``bin/train.py``); ``import pkg.train`` runs
    ``pkg``'s ``__init__`` and ``pkg/train.py`` (``tf_programs._dotted_imports``)."""

    def __init__(self, nodes: Mapping[str, Node]) -> None:
        self.nodes = nodes
        self.known = set(nodes)
        self.packages = {".".join(name.split(".")[:end]) for name in self.known
                         for end in range(1, name.count(".") + 1)}
        self._names = KnownNames(self.known | self.packages)  # once: each node asks of them all
        self._edges: dict[str, tuple[str, ...]] = {}

    def edges(self, node: Node) -> tuple[str, ...]:
        """The modules and packages of the repository that ``node`` imports."""
        found = self._edges.get(node.module)
        if found is None:
            package = module_parts(node.path)[:-1]
            found = self._edges[node.module] = tuple(dict.fromkeys(
                name for target in node.imports for name in _resolved(target, package, self._names)))
        return found

    def importers(self) -> dict[str, list[str]]:
        """Module -> the paths of the files that import it."""
        found: dict[str, list[str]] = {}
        for node in self.nodes.values():
            for name in self.edges(node):
                if name in self.nodes and name != node.module:
                    found.setdefault(name, []).append(node.path)
        return found


def closure(entry: Node, graph: Graph, runtime: str = RUNTIME_TF2) -> Program:
    """The files ``entry`` imports, transitively."""
    program = Program()
    direct = set(graph.edges(entry))

    def node_of(module: str) -> Node:
        return entry if module == entry.module else graph.nodes[module]

    for module in reached_from(entry.module, lambda module: [
            found for found in graph.edges(node_of(module)) if found in graph.nodes]):
        node = node_of(module)
        program.reached.add(node.path)
        _classify(node, program, runtime, entry.path)
        if node.module in direct and node.path in program.library:
            program.imported.add(node.path)
    return program


def reached_from(start: str, edges: Callable[[str], Iterable[str]]) -> dict[str, Optional[str]]:
    """What ``start`` imports, transitively (``start`` included), breadth first: module -> the
    module it was first reached from (``start``: None). ``edges`` gives a module's imports,
    asked once for each module reached."""
    parents: dict[str, Optional[str]] = {start: None}
    todo = deque([start])
    while todo:
        module = todo.popleft()
        for name in edges(module):
            if name not in parents:
                parents[name] = module
                todo.append(name)
    return parents


def imported_module(target: str, package: tuple[str, ...],
                    modules: Union[AbstractSet[str], KnownNames]) -> Optional[str]:
    """The module among ``modules`` that importing ``target`` (dotted, as a file of ``package``
    spells it) runs: ``target`` itself (``import a.b``, ``from a import b`` of a module ``b``),
    else the module it names a member of (``from a.b import c`` of a function ``c``), the
    nearest folder first (:func:`~.modules.nearest_name`); None when neither is one. A caller
    that resolves many imports against the same modules passes them as :class:`KnownNames`:
    a name found in no nearby folder is then not compared with every module."""
    for candidate in (target, target.rpartition(".")[0]):
        if candidate:
            found = modules.nearest(candidate, package) if isinstance(modules, KnownNames) \
                else nearest_name(candidate, package, modules)
            if found is not None:
                return found
    return None


def _resolved(target: str, package: tuple[str, ...], names: KnownNames) -> list[str]:
    found = imported_module(target, package, names)
    return [found] if found is not None else []


def _beside(path: str, entry: str) -> bool:
    """Is ``path`` the entry's own code: in its folder, or below it when that is not the top?
    (A library elsewhere in the repository, such as Horovod's own ``horovod/tensorflow`` under
    its ``examples/``, may run on both versions behind checks of its own.)"""
    folder = entry.rpartition("/")[0]
    return path.rpartition("/")[0] == folder or (bool(folder) and path.startswith(folder + "/"))


def _own_code(path: str, entry: str) -> bool:
    """Is ``path`` the code of the program ``entry`` runs, as the eager side of a program counts
    it: anything for an entry at the top (the repository's own script), else a file in the
    entry's folder or below it (an example's; the repository's library lies elsewhere)."""
    folder = entry.rpartition("/")[0]
    return not folder or path.startswith(folder + "/")


def _classify(node: Node, program: Program, runtime: str, entry: str) -> None:
    """Put ``node`` on its side of ``program``. A compat file with TF 1.x-only APIs in a TF 2.x
    repository is of the ``conflict`` kind: nothing rewrites it (no NPU062 header, no
    ``enable_v1()``), so it switches no program to graph mode and mixes none (DeepCTR's
    ``dien.py``, a ``get_session()`` with a ``tf.compat.v1`` fallback, re-exported by the
    package every example imports its model from); it has its own finding. So is one with
    compat.v1 graph APIs beside TF 2.x idioms and no compat switch (EfficientDet's ``utils.py``,
    ``tensorflow.compat.v1`` and ``compat.v2`` both, imported by its Keras scripts)."""
    if node.graph_in_eager and runtime != RUNTIME_TF1:
        return
    if node.compat and runtime == RUNTIME_TF2 and not node.tf1:
        program.compat.add(node.path)
    elif node.eager(runtime):
        _eager_side(node, program, _own_code(node.path, entry)).add(node.path)
    elif node.tf and (node.tf1 or node.compat) and runtime == RUNTIME_UNKNOWN and _beside(node.path, entry):
        program.tf1.add(node.path)


def _eager_side(node: Node, program: Program, own_code: bool) -> set[str]:
    """Where an eager training file of the program goes (see :class:`Program`)."""
    if not node.tf2:
        return program.neutral
    if node.adapts and not own_code:
        return program.library
    return program.eager
