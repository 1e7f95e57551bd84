"""TF 2.x programs of a repository: which scripts are entry scripts, and which mix modes.

NPU061 opens the NPU at the top of each *entry script* of a TF 2.x program (``spec/rules-tf2.md``):
the files listed in ``[tool.npu-codemod] entry`` of the repository's ``pyproject.toml``, else the
files with a module-level ``if __name__ == "__main__":`` block whose repository import closure
(followed transitively) holds TF 2.x training code. The entry itself may import no TensorFlow,
and its own training counts when it trains a Keras model a function of the repository returns
(``models.build()``: ``tf_model_idioms.script_pending_fact``).
When one entry's closure holds both eager TF 2.x training files and ``tf.compat.v1`` graph files
(``enable_v1()`` switches the whole process to graph mode) the program is *mixed*: nothing in it
is rewritten, and the entry gets one finding.

Our deviation from the spec, in the user's favour: real TF 2.x scripts often train at module level
with no ``__main__`` block (Horovod's TF 2.x benchmarks). A TensorFlow file with no ``__main__``
block is an entry too when no file of the repository imports it, it is not a test file, and its
module-level code trains (``codemods/module_training``); so is such a file that imports no
TensorFlow when what it trains is a Keras model of a repository function (``k``). A module whose module-level code trains
but that another file imports is no entry (the script that imports it is the one run); when no
entry reaches it, NPU061 reports it.

Every Python file of the repository is a node of the import graph (``codemods/program_graph``;
its imports read with ``ast``, never with fissix), so that a module importing no TensorFlow links an entry to the training code
(``main.py -> runner.py -> train.py``). The repository's analysis gives one :data:`GRAPH_FACT` per
file (:func:`graph_fact`); :func:`program_facts` turns them, once the runtime is known, into the
facts the rules and the engine read: :data:`ENTRY_FACT` per entry, :data:`LIBRARY_FACT` per file
others import and no entry reaches, :data:`MIXED_FACT` per file of
a mixed program, :data:`DONE_FACT` (the analysis ran: without it NPU061 decides from the file
alone), and the findings about programs, filed under NPU061 (NPU062 for a compat file of a mixed
program, which the engine reports).
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from typing import AbstractSet, Iterable, Mapping, Optional

from .file_kinds import is_test_file
from .findings import Finding
from .mode_checks import adapts_to_mode
from .module_training import may_train_when_run, trains_when_run
from .modules import import_statements, imported_names, module_ast, module_index, statements
from .names import STAR, ast_import_bindings
from .program_graph import Graph, Node, Program, closure
from .script_training import converts_without_training, fits_a_model
from .text_search import AnyOf
from .tf_versions import NON_TF, RUNTIME_TF2, RUNTIME_UNKNOWN, Signals
from .training_calls import CALLS_FACT, calls_training, read_calls

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.9/3.10
    import tomli as tomllib

GRAPH_FACT = "tf2-graph:"
ENTRY_FACT = "tf2-entry:"
MIXED_FACT = "tf2-mixed:"
MIXED_ENTRY_FACT = "tf2-mixed-entry:"
DONE_FACT = "tf2-programs:done"
#: The entry of a compat.v1 graph program (an Estimator's ``est.train(...)``, a ``sess.run``
#: loop: its closure reaches ``tf2-compat`` files and no eager TF 2.x file): NPU062's header
#: ports that program, so NPU061 neither adds nor advises the eager TF 2.x device init there.
COMPAT_ENTRY_FACT = "tf2-compat-entry:"
#: Library code: a file that other files of the repository import (a package's module, re-exported
#: by its ``__init__``; a helper of the tests) and that no entry script of a TF 2.x program
#: reaches, so no training program of the repository runs it: the program-level rewrites
#: (NPU067, NPU068) report there and import no ``npu_device`` (:func:`library_code`). A file
#: nothing imports and no entry reaches stays a script of its own (one file run by hand).
LIBRARY_FACT = "tf2-library:"
#: A file an entry script reaches whose program (any module the entry's import closure holds)
#: imports Horovod or BytePS: Horovod aggregates the gradients and broadcasts the variables, so
#: NPU067 and NPU068 leave every file of it to NPU070 (a helper module's ``hvd.allreduce`` and the
#: script's tape loop are one aggregation; never both: :func:`horovod_program`).
HOROVOD_PROGRAM_FACT = "tf2-horovod-program:"
_HOROVOD_PACKAGES = frozenset({"horovod", "byteps"})
#: A ``tf-neutral`` file of a repository whose version is undetermined that belongs to its TF 1.x
#: code (:func:`tf1_neutral_files`): it gets the TF 1.x rules (the others, the TF 2.x treatment).
NEUTRAL_TF1_FACT = "tf-neutral-tf1:"
#: A ``non-tf`` file (Horovod alone: ``from horovod.tensorflow... import``) of a repository whose
#: version is undetermined that belongs to its TF 2.x code (:func:`tf2_non_tf_files`): no TF 1.x
#: rule runs on it (the others keep the TF 1.x rules of their modules, as before).
NON_TF_TF2_FACT = "non-tf-tf2:"
#: :data:`TRAINING_TEXT` but ``.fit(`` (see there).
_BEYOND_FIT = (r"\bGradientTape\b", r"\.apply_gradients\(", r"\.minimize\(",
               r"\.compile\((?<!\bre\.compile\()(?<!\bregex\.compile\()(?<!\bpy_compile\.compile\()"
               r"(?<!\bsre_compile\.compile\()",
               r"\.fit_generator\(", r"\.train_on_batch\(")
#: Text that only training code spells (NPU061's "trains"): a prefilter, never the decision
#: alone (a file with no TF 2.x signal is no eager TF 2.x code, ``program_graph``). Training is
#: a Keras ``fit``/``fit_generator``/``train_on_batch``/``compile``, a ``GradientTape``, an
#: optimizer's ``apply_gradients``/``minimize``. A ``tf.function`` alone is none: libraries trace
#: their inference, export and data-processing helpers too (TF-GNN's graph-tensor ops, which its
#: schema validator and record printer import), and a tool that imports one must not need an NPU
#: to run (``spec/rules-tf2.md`` NPU061: scripts that train nothing are reported). The
#: standard library's ``compile`` functions (``re.compile(``, ``regex.compile(``,
#: ``py_compile.compile(``, ``sre_compile.compile(``) are not Keras' (each lookbehind after the
#: literal, so that the search still scans for ``.compile(`` in C: ``text_search``).
TRAINING_TEXT = AnyOf(*_BEYOND_FIT[:3], r"\.fit\(", *_BEYOND_FIT[3:])
#: The training text but ``.fit(``, which a file checked alone reads by its receiver (:func:`trains_alone`).
BEYOND_FIT_TEXT = AnyOf(*_BEYOND_FIT)
TRAINING = TRAINING_TEXT.pattern
#: What only TensorFlow training spells: the other patterns of :data:`TRAINING_TEXT` are method
#: names other libraries share (``PCA().fit(x)``, ``scipy.optimize.minimize(f, x0)``).
_TF_TRAINING_TEXT = AnyOf(r"\bGradientTape\b", r"\.fit_generator\(", r"\.train_on_batch\(")
#: Methods of :data:`TRAINING_TEXT` that other libraries' objects have too.
_SHARED_METHODS = frozenset({"fit", "compile", "minimize", "apply_gradients"})
#: Libraries whose ``fit``/``minimize`` train no TensorFlow model.
OTHER_LIBRARIES = frozenset({"sklearn", "scipy", "xgboost", "lightgbm", "catboost", "statsmodels",
                             "numpy", "pandas", "umap", "hdbscan", "re", "regex"})
MAIN = AnyOf(r"""^if\s+(?:__name__\s*==\s*(['"])__main__\1|(['"])__main__\2\s*==\s*__name__)\s*:""",
             flags=re.MULTILINE)

MIXED = ("this program mixes eager TF 2.x files ({eager}) and compat.v1 graph files ({compat}): "
         "npu_device.compat.enable_v1() switches the whole process to graph mode; port one mode "
         "(nothing in this program was rewritten)")
MIXED_PART = ("part of a program that mixes eager TF 2.x and compat.v1 graph files (entry "
              "{entry}): not rewritten; port one mode")
MIXED_TF1 = ("this program mixes eager TF 2.x files ({eager}) and TF 1.x files ({tf1}): no TensorFlow "
             "version runs both as written; pin the version and port one mode (nothing in this "
             "program was rewritten)")
NO_ENTRY = ("no entry script found: add import npu_device as npu; npu.open().as_default() at the "
            "top of the script you run, or list it in [tool.npu-codemod] entry")
BAD_ENTRY = "[tool.npu-codemod] entry must be a list of paths, got {value!r}: ignored"
TRAINS_ON_IMPORT = ("this module trains when it is imported (by {importers}) and no entry script "
                    "reaches it: add import npu_device as npu; npu.open().as_default() at the top "
                    "of the script you run, or list it in [tool.npu-codemod] entry")
#: The rules the findings about programs are filed under (the spec's NPU061 and NPU062).
ENTRY_RULE = ("NPU061", "tf2-device-init")
COMPAT_RULE = ("NPU062", "tf2-compat-header")
#: Other deep-learning frameworks: a script that imports one and no TensorFlow trains with it,
#: whatever TensorFlow code its imports reach (Horovod's PyTorch examples import ``horovod.spark``,
#: which imports Horovod's Keras code).
OTHER_FRAMEWORKS = frozenset({"torch", "torchvision", "pytorch_lightning", "lightning", "mxnet",
                              "jax", "flax", "paddle", "mindspore", "oneflow"})
#: What a file importing no TensorFlow spells when it may be an entry script (``Engine.wants``):
#: a ``__main__`` block, or the Keras training a module-level entry makes (``keras_training_calls``).
SCRIPT_BYTES = (b"__main__", b".fit(", b".compile(", b".train_on_batch(")
#: Any import statement: a file without one (and without a ``__main__`` block) is no graph node.
_IMPORTS = re.compile(r"^[ \t]*(?:import|from)[ \t]", re.MULTILINE)


@dataclass(frozen=True)
class RepositoryMessage:
    """A finding of the repository's analysis (its runtime, its programs): the file it is about
    ("" for the repository), its text, its SARIF level (``"note"`` or ``""``) and its rule (the
    findings about programs are NPU061's; None: the engine's file rule, NPU000)."""

    path: str
    text: str
    level: str = ""
    rule: Optional[tuple[str, str]] = ENTRY_RULE

    def finding(self, repo: str, file_rule: tuple[str, str]) -> Finding:
        """The message as an ``unmigrated`` finding in ``repo`` (``file_rule``: NPU000's id and
        name, for a message of no rule)."""
        rule_id, name = self.rule or file_rule
        return Finding(repo, self.path, 1, 0, rule_id, name, "unmigrated", self.text, level=self.level)


def graph_fact(path: str, text: str, signals: Optional[Signals]) -> Optional[str]:
    """The :data:`GRAPH_FACT` of one Python file (``signals``: its TF signals, None for a file
    that imports no TensorFlow), or None for a file that imports nothing and has no ``__main__``
    block (no edge of the graph starts there)."""
    main = "__main__" in text and MAIN.found(text)  # the test: a substring's cost
    if signals is None and not main and not _IMPORTS.search(text):
        return None
    tree = module_ast(text) if signals is not None else import_statements(text)  # TF files: parsed anyway
    imports = _imports(tree, indexed=signals is not None) if tree is not None else []
    targets = sorted({target for target in (_imported_modules(tree, path, imports) if tree is not None else ())
                      if target.split(".")[0] not in ("tensorflow", "__future__")})
    flags = ("m" if main else "") + ("x" if signals is not None else "")
    if signals is None and any(target.split(".")[0] in OTHER_FRAMEWORKS for target in targets):
        flags += "o"
    if signals is not None:
        trains = _script_trains(text, tree, path, main)
        flags += ("c" if signals.c1 or signals.c2 else "") + ("t" if trains else "") \
            + ("1" if signals.t1 else "") + ("2" if signals.t2 or signals.e or signals.adapter else "") \
            + ("g" if signals.graph_in_eager else "")
        if "t" in flags and "2" in flags and tree is not None and adapts_to_mode(text, tree):
            flags += "a"
    if not main and not is_test_file(path) and may_train_when_run(text):
        # a file that imports no TensorFlow is parsed only now: its module-level training is
        # an entry's when it trains a model of the repository's (``k``, ``tf_model_idioms``)
        whole = tree if signals is not None else module_ast(text)
        flags += "l" if whole is not None and trains_when_run(whole) else ""
    return f"{GRAPH_FACT}{path}|{flags}|{','.join(targets)}"


def _trains(text: str, tree: Optional[ast.Module], path: str) -> bool:
    """Does the TF file ``text`` (its ``tree``) spell training: :data:`TRAINING_TEXT`, unless
    every ``fit``/``compile``/``minimize``/``apply_gradients`` call it makes is of another
    library's object (``pca = PCA(n)`` then ``pca.fit(x)``; ``optimize.minimize(f, x0)``), or
    its only training text is ``.fit(`` and no receiver of it may be a Keras model
    (``script_training.fits_a_model``: a class of its own, ``ImageDataGenerator``)."""
    if not TRAINING_TEXT.found(text):
        return False
    if tree is None or _TF_TRAINING_TEXT.found(text):
        return True
    imported = imported_names(tree, path)
    others = {local for local, target in imported.items() if target.split(".")[0] in OTHER_LIBRARIES}
    if not BEYOND_FIT_TEXT.found(text):  # ``.fit(`` alone: of what the file may hold as a Keras model
        return fits_a_model(tree, imported, others)
    if not others:
        return True
    index = module_index(tree)  # the analyses' one walk: no walk of its own
    calls = [call.func.value for call in index.nodes(ast.Call)
             if isinstance(call.func, ast.Attribute) and call.func.attr in _SHARED_METHODS]
    if not calls:
        return True  # the text's match is in a comment or a string: as before, training text
    made: dict[str, set[bool]] = {}  # name -> whether each value assigned to it is another library's
    for node in index.nodes(ast.Assign):
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            made.setdefault(node.targets[0].id, set()).add(_of_other_library(node.value, others))
    return not all(_of_other_library(receiver, others)
                   or (isinstance(receiver, ast.Name) and made.get(receiver.id) == {True}) for receiver in calls)


def trains_alone(text: str, path: str) -> bool:
    """NPU061's "trains" for a file checked with no repository analysis: the graph's reading of
    its own code (:func:`_script_trains`)."""
    return _script_trains(text, module_ast(text), path, MAIN.found(text))


def _script_trains(text: str, tree: Optional[ast.Module], path: str, main: bool) -> bool:
    """Does the TF file ``text`` train (:func:`_trains`), unless it is a TFLite conversion
    ``__main__`` script (``main``) that runs no training (``script_training``)?"""
    return _trains(text, tree, path) and not (main and converts_without_training(text, tree))


def _of_other_library(value: ast.expr, others: set[str]) -> bool:
    """Is ``value`` a name of another library or a call of one (``PCA(n)``, ``optimize``,
    ``sklearn.decomposition.PCA(n)``)?"""
    callee = value.func if isinstance(value, ast.Call) else value
    while isinstance(callee, ast.Attribute):
        callee = callee.value
    return isinstance(callee, ast.Name) and callee.id in others


def _imports(tree: ast.Module, indexed: bool) -> list[ast.Import]:
    """The ``import`` statements of ``tree`` (nested ones too; their order does not matter):
    from the analyses' index of a TF file's tree (walked once for every analysis of the file),
    else from a walk of its statements (the small tree of a file's imports alone)."""
    if indexed:
        found: list[ast.Import] = module_index(tree).nodes(ast.Import)
        return found
    return [node for node in statements(tree) if isinstance(node, ast.Import)]


def _imported_modules(tree: ast.Module, path: str, imports: Iterable[ast.Import]) -> set[str]:
    """What the module imports (``imported_names``' targets), the modules it star-imports
    (``from layers import *``: an edge of the program like ``from layers import Dense``) and
    what its ``imports`` run (:func:`_dotted_imports`)."""
    found = set(imported_names(tree, path).values()) | _dotted_imports(imports)
    if "*" in {alias.name for node in tree.body if isinstance(node, ast.ImportFrom) for alias in node.names}:
        found.update(target for node in tree.body if isinstance(node, ast.ImportFrom)
                     for local, target in ast_import_bindings(node, path) if local == STAR)
    return found


def _dotted_imports(imports: Iterable[ast.Import]) -> set[str]:
    """What ``import a.b.c`` runs: ``a``'s ``__init__``, ``a.b``'s and ``a.b.c`` (a module, or
    a package's ``__init__``), and nothing else of those packages. It binds ``a`` alone, so
    :func:`~.modules.imported_names` gives ``a``: a script that trains through ``import
    pkg.train; pkg.train.fit(...)`` would reach none of ``pkg/train.py``."""
    return {".".join(parts[:end]) for node in imports
            for parts in (alias.name.split(".") for alias in node.names if "." in alias.name)
            for end in range(1, len(parts) + 1)}


def graph_nodes(facts: Iterable[str]) -> dict[str, Node]:
    """The import graph's nodes (by module) of the :data:`GRAPH_FACT` among ``facts``."""
    nodes = {}
    for fact in facts:
        if fact.startswith(GRAPH_FACT):
            path, flags, imports = fact[len(GRAPH_FACT):].rsplit("|", 2)
            node = Node(path, "m" in flags, "c" in flags, "t" in flags, "x" in flags,
                        tuple(filter(None, imports.split(","))), "1" in flags, "2" in flags, "l" in flags,
                        "o" in flags, "a" in flags, "k" in flags, "g" in flags)
            nodes[node.module] = node
    return nodes


def configured_entries(pyproject: str) -> tuple[tuple[str, ...], Optional[str]]:
    """``[tool.npu-codemod] entry`` of the repository's ``pyproject.toml``: (paths, problem)."""
    if "npu-codemod" not in pyproject or "entry" not in pyproject:
        return (), None
    try:
        value = tomllib.loads(pyproject).get("tool", {}).get("npu-codemod", {}).get("entry")
    except (tomllib.TOMLDecodeError, AttributeError):
        return (), None
    if value is None:
        return (), None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        return (), BAD_ENTRY.format(value=value)
    return tuple(item.lstrip("./") for item in value), None


def listed(path: str, entries: Iterable[str]) -> bool:
    """Is ``path`` (repository-relative, or under a folder ``check`` was given) one of ``entries``?"""
    return any(path == entry or path.endswith("/" + entry) for entry in entries)


def program_facts(facts: frozenset[str], runtime: str, pyproject: str = ""
                  ) -> tuple[frozenset[str], tuple[RepositoryMessage, ...]]:
    """The entry and mixed-program facts of a repository, and its findings about programs
    (mixed programs at their entry, no entry script, modules that train when imported and that
    no entry reaches, a bad ``entry`` setting)."""
    nodes = graph_nodes(facts)
    if not nodes:
        return frozenset(), ()
    entries, problem = configured_entries(pyproject)
    messages = [RepositoryMessage("pyproject.toml", problem)] if problem else []
    found = {DONE_FACT}
    if runtime not in (RUNTIME_TF2, RUNTIME_UNKNOWN):  # a TF 1.x repository: no TF 2.x program
        return frozenset(found), tuple(messages)
    graph = Graph(nodes)
    importers = graph.importers()
    candidates = [node for node in nodes.values() if listed(node.path, entries)] if entries else \
        [node for node in nodes.values() if (node.main and not node.other)
         or (node.runs and (node.tf or node.keras) and node.module not in importers)]
    reached: set[str] = set()
    calls = read_calls(facts)
    running = frozenset(node.path for node in nodes.values() if node.runs)  # train when imported
    repository = frozenset(part for name in nodes for part in name.split("."))
    for node in sorted(candidates, key=lambda node: node.path):
        program = closure(node, graph, runtime)
        reached |= program.reached
        if (program.eager and (program.compat or program.tf1)) or (program.compat and _eager_script(node)):
            messages.append(_mixed(node, program))
            for path in program.reached:
                found |= {MIXED_FACT + path, f"{MIXED_ENTRY_FACT}{path}={node.path}"}
        elif entries and not program.compat:  # listed (a listed compat program: NPU062)
            found.add(ENTRY_FACT + node.path)
        elif (program.eager or ((program.neutral or program.imported) and not (program.compat or program.tf1))) \
                and _runs_training(node, program, running, calls, repository):
            found.add(ENTRY_FACT + node.path)
        elif program.compat:
            found.add(COMPAT_ENTRY_FACT + node.path)
    messages += [RepositoryMessage(node.path, TRAINS_ON_IMPORT.format(importers=", ".join(sorted(importers[name]))),
                                   "note")
                 for name, node in sorted(nodes.items()) if node.runs and name in importers
                 and node.path not in reached and node.eager(runtime)]
    if not any(fact.startswith(ENTRY_FACT) or fact.startswith(MIXED_FACT) for fact in found) \
            and any(node.eager(runtime) for node in nodes.values()):
        messages.append(RepositoryMessage("", NO_ENTRY))
    if runtime == RUNTIME_UNKNOWN:
        tf1_neutral = tf1_neutral_files(nodes, graph)
        found |= {NEUTRAL_TF1_FACT + path for path in tf1_neutral}
        found |= {NON_TF_TF2_FACT + path for path in tf2_non_tf_files(nodes, graph, tf1_neutral)}
    return frozenset(found), tuple(messages)


def _runs_training(entry: Node, program: Program, running: frozenset[str],
                   calls: Mapping[str, tuple[frozenset[str], dict[str, frozenset[str]]]],
                   repository: frozenset[str]) -> bool:
    """Does ``entry`` run the training code its ``program`` reaches: its own, a module's whose
    module-level code trains when imported, or a function or class it calls
    (``training_calls``)? A tool that imports its repository's package and calls none of its
    training is no entry (``spec/rules-tf2.md`` NPU061: scripts that train nothing are reported)."""
    if entry.trains or entry.keras or entry.runs:
        return True
    if not running.isdisjoint(program.reached):
        return True
    return calls_training(entry.path, program.reached, calls, repository)


def tf1_side(facts: frozenset[str], path: str, kind: str) -> bool:
    """Does the file ``path`` of ``kind`` belong to the TF 1.x code of a repository whose version
    is undetermined (:func:`~npu_codemod.codemods.tf_versions.treatment`)? A ``tf-neutral`` file
    when the analysis put it there, a ``non-tf`` one unless it put it in TF 2.x code."""
    if kind == NON_TF:
        return NON_TF_TF2_FACT + path not in facts
    return NEUTRAL_TF1_FACT + path in facts


def tf2_non_tf_files(nodes: Mapping[str, Node], graph: Graph, tf1_neutral: Iterable[str]) -> list[str]:
    """The ``non-tf`` files of a repository whose version is undetermined that belong to its
    TF 2.x code: next to (importing, or imported by) a file the TF 2.x rules treat (TF 2.x
    signs, or ``tf-neutral`` and not of the TF 1.x side: ``tf1_neutral``) and to no TF 1.x,
    compat or TF 1.x-side neutral file. A TF 2.x program's launcher that imports only
    Horovod's helpers is no TF 1.x code: NPU100 (the TF 1.15 list) must not audit it."""
    tf1_paths = set(tf1_neutral)
    tf1_side = {name for name, node in nodes.items()
                if node.tf and (node.tf1 or node.compat or node.path in tf1_paths)}
    tf2_side = {name for name, node in nodes.items() if node.tf and name not in tf1_side}
    if not tf2_side:
        return []
    neighbours = _neighbours(nodes, graph)
    return sorted(node.path for name, node in nodes.items()
                  if not node.tf and neighbours[name] & tf2_side and not neighbours[name] & tf1_side)


def _neighbours(nodes: Mapping[str, Node], graph: Graph) -> dict[str, set[str]]:
    """Each file's neighbours in the import graph: the files it imports and that import it."""
    neighbours: dict[str, set[str]] = {name: set() for name in nodes}
    for name, node in nodes.items():
        for found in graph.edges(node):
            if found in nodes and found != name:
                neighbours[name].add(found)
                neighbours[found].add(name)
    return neighbours


def _eager_script(entry: Node) -> bool:
    """Is ``entry`` itself eager TF 2.x code (the ``tf2`` kind: a TF 2.x signal, no compat.v1
    or TF 1.x one), training or not? A ``tf.function`` inference or export script that imports a
    compat.v1 module runs eagerly: NPU062's header in that module (``enable_v1()`` switches the
    whole process to graph mode when it is imported) would break it, as it would a training one."""
    return entry.tf and entry.tf2 and not (entry.compat or entry.tf1 or entry.graph_in_eager)


def _mixed(entry: Node, program: Program) -> RepositoryMessage:
    """The finding at the entry of a program that mixes eager TF 2.x files (the entry's own
    code counts, training or not: :func:`_eager_script`) with compat.v1 (or, version
    undetermined, TF 1.x) files."""
    eager = ", ".join(sorted(program.eager | ({entry.path} if _eager_script(entry) else set())))
    if program.compat:
        return RepositoryMessage(entry.path, MIXED.format(eager=eager, compat=", ".join(sorted(program.compat))))
    return RepositoryMessage(entry.path, MIXED_TF1.format(eager=eager, tf1=", ".join(sorted(program.tf1))))


def tf1_neutral_files(nodes: Mapping[str, Node], graph: Optional[Graph] = None) -> list[str]:
    """The ``tf-neutral`` files (TensorFlow, no version's sign) of a repository whose version is
    undetermined that belong to its TF 1.x code: every one where no file has TF 2.x signs, else a
    neutral file next to (importing, or imported by) TF 1.x or compat files, directly or through
    other such neutral files, and next to no TF 2.x file. The other neutral files get the TF 2.x treatment: a TF 1.x rule's ``npu_bridge``
    in a TF 2.x program breaks it, a TF 2.x rule in TF 1.x code only migrates less."""
    neighbours = _neighbours(nodes, graph or Graph(nodes))
    neutral = {name for name, node in nodes.items() if node.tf and not (node.tf1 or node.tf2 or node.compat)}
    tf1_side = {name for name, node in nodes.items() if node.tf and (node.tf1 or node.compat)}
    tf2_side = {name for name, node in nodes.items() if node.tf and node.tf2 and not (node.tf1 or node.compat)}
    if not tf2_side:  # no TF 2.x code at all: TF 1.x code, as before the TF 2.x pack
        return sorted(nodes[name].path for name in neutral)
    grown = True
    while grown:
        joining = {name for name in neutral - tf1_side
                   if neighbours[name] & tf1_side and not neighbours[name] & tf2_side}
        tf1_side |= joining
        grown = bool(joining)
    return sorted(nodes[name].path for name in neutral & tf1_side)


def with_programs(facts: frozenset[str], programs: frozenset[str]) -> frozenset[str]:
    """The facts the rules get: the graph's (read by :func:`program_facts` only) replaced by
    what it decided, so that an edit of one file's imports leaves the other files' facts (and
    their cached results) as they were."""
    return frozenset(fact for fact in facts if not fact.startswith(GRAPH_FACT) and not fact.startswith(CALLS_FACT)) \
        | programs


def library_facts(facts: Iterable[str], decided: AbstractSet[str]) -> frozenset[str]:
    """The :data:`LIBRARY_FACT` of each file of the repository's import graph (the
    :data:`GRAPH_FACT` among ``facts``, every scope's together: an example's entry may reach a
    package of another scope) that a file imports and that no entry script among the
    ``decided`` facts (its scope's :data:`ENTRY_FACT`, or of a mixed program) reaches. A test
    file run as a script (``if __name__ == "__main__": tf.test.main()``) is no training program:
    a module only tests reach is library code (TF Addons' metric test helper). And the
    :data:`HOROVOD_PROGRAM_FACT` of each file an entry reaches whose program imports Horovod
    (:func:`_importing_horovod`)."""
    nodes = graph_nodes(facts)
    entries = {fact[len(ENTRY_FACT):] for fact in decided if fact.startswith(ENTRY_FACT)} \
        | {fact.rpartition("=")[2] for fact in decided if fact.startswith(MIXED_ENTRY_FACT)}
    graph = Graph(nodes)
    importers = graph.importers()
    reached: set[str] = set()
    horovod: set[str] = set()
    importing = _importing_horovod(nodes)
    for node in nodes.values():
        if node.path in entries and not is_test_file(node.path):
            program = closure(node, graph).reached
            reached |= program
            horovod |= program if not importing.isdisjoint(program) else set()
    return frozenset(LIBRARY_FACT + node.path for name, node in nodes.items()
                     if name in importers and node.path not in reached) \
        | frozenset(HOROVOD_PROGRAM_FACT + path for path in horovod)


def _importing_horovod(nodes: Mapping[str, Node]) -> set[str]:
    """The paths of the files that import Horovod, or BytePS (Horovod's API)."""
    return {node.path for node in nodes.values()
            if any(target.split(".")[0] in _HOROVOD_PACKAGES for target in node.imports)}


def horovod_program(facts: AbstractSet[str], path: str) -> bool:
    """Is the file ``path`` part of a program that imports Horovod (:data:`HOROVOD_PROGRAM_FACT`)?"""
    return HOROVOD_PROGRAM_FACT + path in facts


def library_code(facts: AbstractSet[str], path: str) -> bool:
    """Is the file ``path`` library code (:data:`LIBRARY_FACT`)? (A package with no entry script
    at all is library code throughout: importing it must not need ``npu_device``.) Without the
    repository's analysis (one file checked alone): no."""
    return LIBRARY_FACT + path in facts


def mixed_entry(facts: frozenset[str], path: str) -> Optional[str]:
    """The entry of the mixed program ``path`` is part of, or None (a set lookup first: the
    engine asks it of every file). A file several programs reach names the first entry by
    path (``path`` itself when it is one): the same on every run, whatever the set's order."""
    if MIXED_FACT + path not in facts:
        return None
    prefix = f"{MIXED_ENTRY_FACT}{path}="
    if prefix + path in facts:
        return path
    return min((fact[len(prefix):] for fact in facts if fact.startswith(prefix)), default=path)
