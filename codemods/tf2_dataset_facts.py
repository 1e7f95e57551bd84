"""The repository facts of TF 2.x datasets (NPU064, NPU069): which functions return one, and
what the files pass to training and evaluation.

:func:`dataset_function_facts` gives one :data:`~.tf2_datasets.FUNCTION_FACT` per module-level
function of a file that returns a dataset (:class:`~.tf2_datasets.FileDatasets` reads them).

A pipeline function is often used from another file: ``validation_data=data.make_dataset(...)``,
``model.evaluate(make_pipeline(files, 64))``, ``train_ds, val_ds = load_splits(...)`` then
``model.fit(train_ds, validation_data=val_ds)``. Each file is read with ``ast`` before any
rewrite; a call of an imported repository function whose result a Keras ``fit``/``evaluate``/
``predict`` takes (as its data or ``validation_data=``), directly or through the name it is
assigned to in the same function (a tuple target: by position), becomes one fact
``tf2-dataset-use:<package of the file>|<dotted name as imported>|<position>|<where>``
(position ``*`` for the whole result). :class:`~.tf2_dataset_uses.DatasetUses` counts them in
the file that defines the function. The same for a loop over such a result (``for batch in
dataset``, ``iter``, ``enumerate``, ``tqdm``): ``looked-at@<path>:<line>`` in a file that trains
nothing (a decoding script), ``loop`` in one that trains; and for the result passed to another
call (``passed``: it may train there, ``custom_loop(model, make_dataset(...))``). A method of a repository class
is named ``<Class>.<method>`` (``MelDataset(files).create(n)``, or ``loader = MelDataset(files)``
then ``loader.create(n)`` in the same function). Only these direct shapes are followed: it is
cheap, for every TF file of every repository, and for the files that import no TensorFlow but
may loop over a dataset (:func:`may_use_datasets`: a decoding script that imports the
repository's library only). Test files say nothing: a test evaluates what the repository trains
on.
"""

from __future__ import annotations

import ast
import sys
from typing import AbstractSet, Iterator, Optional

from .file_kinds import is_test_file
from .modules import module_ast
from .names import module_parts
from .tf2_dataset_sources import DATASET, DATASET_METHODS
from .tf2_dataset_uses import EVALUATION, LOOKED_AT, LOOPED, PASSED, TRAINING, USE_FACT, file_trains
from .tf2_datasets import FUNCTION_FACT, FileDatasets, Scope, file_datasets

#: Libraries whose functions are no repository's (by the first name: ``tensorflow_tts`` is one).
_LIBRARIES = frozenset({"tensorflow", "keras", "numpy", "tensorflow_datasets", "tf_keras",
                        # well-known libraries: never a repository's function (and a file
                        # importing only these is not read for loops at all)
                        "absl", "six", "scipy", "sklearn", "pandas", "matplotlib", "PIL", "cv2",
                        "tqdm", "h5py", "yaml", "tensorflow_hub", "tensorflow_addons", "horovod",
                        "tensorflow_estimator", "npu_device", "npu_bridge", "torch", "gin"})
_STANDARD = frozenset(sys.stdlib_module_names)
#: First names of modules that are no repository's (united once: the tests below ask per call).
_NOT_REPOSITORY = _LIBRARIES | _STANDARD
#: Calls that loop over their first argument.
_LOOPING = frozenset({"iter", "enumerate", "tqdm"})
#: Builtins that only look at their arguments (a dataset passed to them goes nowhere else).
_LOOKS = frozenset({"len", "print", "isinstance", "str", "repr", "type", "id"})
#: Keras' calls that take a dataset as their data (:func:`_consumed`).
_CONSUMING = TRAINING | EVALUATION
#: Calls whose arguments are not passed on (:func:`_looped`).
_NOT_PASSING = _CONSUMING | _LOOKS
#: Text of a file that may return a dataset it makes.
_MAKES = ("data.", "Dataset", "tensorflow_datasets", "_dataset_from_", "padded_batch", "prefetch")


def dataset_function_facts(path: str, text: str) -> set[str]:
    """The :data:`FUNCTION_FACT` of each module-level function of a file that returns a
    dataset (``*``) or a tuple with datasets (their positions)."""
    if "return" not in text or not any(word in text for word in _MAKES):
        return set()
    datasets = file_datasets(text, path)
    if datasets is None:
        return set()
    module = ".".join(module_parts(path))
    facts = set()
    for name, kind in datasets.returns.items():
        positions = "*" if kind == DATASET else ",".join(
            str(index) for index, part in enumerate(kind or ()) if part == DATASET)
        if positions:
            facts.add(f"{FUNCTION_FACT}{module}.{name}:{positions}")
    return facts


def may_use_datasets(data: bytes) -> bool:
    """May a file that imports no TensorFlow loop over a repository's dataset (a decoding
    script: ``from mylib.datasets import MelDataset``, ``for batch in tqdm(dataset)``)? Read
    for :func:`dataset_use_facts` whatever rules run: its loops are the only known uses of a
    factory (bytes: cheap for every Python file)."""
    return (b"for " in data or b"iter(" in data) and b"import" in data \
        and any(word in data for word in (b"ataset", b"batch", b"_ds", b"oader"))


def dataset_use_facts(path: str, text: str) -> set[str]:
    """The :data:`USE_FACT` facts of one file (see the module docstring)."""
    if "import" not in text or is_test_file(path):
        return set()
    tree = module_ast(text)
    if tree is None:
        return set()
    datasets = FileDatasets(tree, text, path)
    heads = frozenset(local for local, target in datasets.imports.items()
                      if target.partition(".")[0] not in _NOT_REPOSITORY)
    if not heads:
        # no repository name imported: no value is a repository function's result (a name
        # qualifies to its import's package: ``canonical`` folds TensorFlow's alone)
        return set()
    package = ".".join(datasets.package)
    origins = _Origins(datasets, heads)
    facts = set()
    for call, scope in datasets.calls_in_scopes:
        for where, value in _consumed(call):
            for target, position in origins.of(value, scope):
                facts.add(f"{USE_FACT}{package}|{target}|{position}|{where}")
    trains: list[bool] = []  # whether the file trains: asked only for a value that is a result
    for kind, value, scope in _looped(datasets):
        for target, position in origins.of(value, scope):
            if kind == PASSED:
                where = PASSED
            else:
                if not trains:
                    trains.append(file_trains(datasets))
                where = LOOPED if trains[0] else f"{LOOKED_AT}@{path}:{getattr(value, 'lineno', 0)}"
            facts.add(f"{USE_FACT}{package}|{target}|{position}|{where}")
    return facts


def _looped(datasets: FileDatasets) -> Iterator[tuple[str, ast.AST, Scope]]:
    """(kind, value, scope) of what the file loops over (``for``, a comprehension, ``iter``,
    ``enumerate``, ``tqdm``: kind :data:`LOOPED`) and of the arguments of every other call (but
    Keras' and a few builtins that only look: ``len``, ``print``; kind :data:`PASSED`)."""
    index = datasets.index
    loops: list[ast.For | ast.AsyncFor | ast.comprehension] = [
        *index.nodes(ast.For), *index.nodes(ast.AsyncFor), *index.nodes(ast.comprehension)]
    for node in loops:
        yield LOOPED, _unlooped(node.iter), datasets.owners.get(id(node), datasets.tree)
    for call, scope in datasets.calls_in_scopes:
        if _callee(call) in _LOOPING and call.args:
            yield LOOPED, _unlooped(call.args[0]), scope
        elif _callee(call) not in _NOT_PASSING:
            for value in [*call.args, *(keyword.value for keyword in call.keywords)]:
                yield PASSED, value, scope


def _unlooped(value: ast.expr) -> ast.expr:
    """``ds`` for ``enumerate(tqdm(ds))``."""
    while isinstance(value, ast.Call) and _callee(value) in _LOOPING and value.args:
        value = value.args[0]
    return value


def _callee(call: ast.Call) -> Optional[str]:
    function = call.func
    return function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", None)


def _consumed(call: ast.Call) -> Iterator[tuple[str, ast.AST]]:
    """(where, value) of what a Keras training or evaluation call takes as data."""
    callee = call.func.attr if isinstance(call.func, ast.Attribute) else None
    if callee not in _CONSUMING:
        return
    if call.args and not isinstance(call.args[0], ast.Starred):
        yield callee, call.args[0]
    for keyword in call.keywords:
        if keyword.arg == "x":
            yield callee, keyword.value
        elif keyword.arg == "validation_data" and "validation_data=" in EVALUATION:
            yield "validation_data=", keyword.value


class _Origins:
    """Which repository functions' results the values of a file are (one map of assignments per
    function: a file that trains asks about every argument of every call)."""

    def __init__(self, datasets: FileDatasets, heads: AbstractSet[str]) -> None:
        self.datasets = datasets
        #: The names the file imports from the repository (:func:`_repository_function`).
        self.heads = heads
        self._assigned: dict[int, dict[str, list[tuple[str, str]]]] = {}
        self._instances: dict[int, dict[str, str]] = {}
        self._function_assignments: Optional[dict[int, list[ast.Assign]]] = None

    def assignments(self, scope: Scope) -> Iterator[ast.Assign]:
        """The assignments among :meth:`FileDatasets.statements` of ``scope``, in order; a
        function's from the module index's, by owner (its own nodes are not walked)."""
        if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return (node for node in self.datasets.statements(scope) if isinstance(node, ast.Assign))
        if self._function_assignments is None:
            owners = self.datasets.owners
            found: dict[int, list[ast.Assign]] = {}
            self._function_assignments = found
            for node in self.datasets.index.nodes(ast.Assign):
                function = owners.get(id(node))
                if function is not None:
                    found.setdefault(id(function), []).append(node)
        return iter(self._function_assignments.get(id(scope), ()))

    def of(self, value: ast.AST, scope: Scope) -> Iterator[tuple[str, str]]:
        """(repository function as imported, position) whose result ``value`` is: a call of it
        (later dataset methods aside), or a name ``scope`` assigns one (a tuple target: its
        index)."""
        value = _unchained(value)
        if isinstance(value, ast.Call):
            target = self.callee(value, scope)
            if target:
                yield target, "*"
        elif isinstance(value, ast.Name):
            yield from self.assigned(scope).get(value.id, ())

    def callee(self, call: ast.Call, scope: Scope) -> Optional[str]:
        """The repository function ``call`` calls (:func:`_repository_function`), or the
        method of a repository class: ``Class.method`` for ``Class(...).method(...)`` or for
        ``instance.method(...)`` with ``instance = Class(...)`` in ``scope``."""
        function = call.func
        if not isinstance(function, ast.Attribute):
            return _repository_function(self.datasets, call, self.heads)
        receiver = function.value
        if isinstance(receiver, ast.Call):
            owner = _repository_function(self.datasets, receiver, self.heads)
            return f"{owner}.{function.attr}" if owner else None
        if isinstance(receiver, ast.Name) and receiver.id in self.instances(scope):
            return f"{self.instances(scope)[receiver.id]}.{function.attr}"
        return _repository_function(self.datasets, call, self.heads)

    def instances(self, scope: Scope) -> dict[str, str]:
        """The names ``scope`` assigns a call of a repository name (``loader = Loader(...)``)."""
        found = self._instances.get(id(scope))
        if found is None:
            found = self._instances[id(scope)] = {}
            for statement in self.assignments(scope):
                if len(statement.targets) == 1 \
                        and isinstance(statement.targets[0], ast.Name) and isinstance(statement.value, ast.Call):
                    owner = _repository_function(self.datasets, statement.value, self.heads)
                    if owner:
                        found[statement.targets[0].id] = owner
        return found

    def assigned(self, scope: Scope) -> dict[str, list[tuple[str, str]]]:
        """Name -> (repository function, position) of each assignment of ``scope`` of a call
        of one (``ds = make_dataset(...)``, ``train, val = load_splits(...)``)."""
        found = self._assigned.get(id(scope))
        if found is None:
            found = self._assigned[id(scope)] = {}
            for statement in self.assignments(scope):
                if len(statement.targets) != 1:
                    continue
                made = _unchained(statement.value)
                target = self.callee(made, scope) if isinstance(made, ast.Call) else None
                if target:
                    for name, position in _names(statement.targets[0]):
                        found.setdefault(name, []).append((target, position))
        return found


def _unchained(value: ast.AST) -> ast.AST:
    """``make()`` for ``make().prefetch(2).repeat()``."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
            and value.func.attr in DATASET_METHODS and isinstance(value.func.value, ast.Call):
        value = value.func.value
    return value


def _names(target: ast.AST) -> Iterator[tuple[str, str]]:
    """(name, position) the target binds: ``*`` for a name, the index in a tuple target."""
    if isinstance(target, ast.Name):
        yield target.id, "*"
    elif isinstance(target, (ast.Tuple, ast.List)):
        for index, element in enumerate(target.elts):
            if isinstance(element, ast.Name):
                yield element.id, str(index)


def _repository_function(datasets: FileDatasets, call: ast.Call, heads: AbstractSet[str]) -> Optional[str]:
    """The dotted name, as imported, of the repository function ``call`` calls, or None (a
    library's, the standard library's, or not imported). ``heads``: the names the file imports
    from the repository; a callee whose dotted name starts with none of them is none (its
    qualified name keeps its import's package: ``canonical`` folds TensorFlow's names alone),
    told without spelling the name (every argument of every call of the file is asked about)."""
    head = call.func
    while isinstance(head, ast.Attribute):
        head = head.value
    if not isinstance(head, ast.Name) or head.id not in heads:
        return None
    target = datasets.qualify(call.func)
    if target is None or target.partition(".")[0] in _NOT_REPOSITORY:
        return None
    return target
