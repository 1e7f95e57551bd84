"""Where a TF 2.x dataset goes: training, evaluation or a loop (NPU064, NPU069).

From a dataset expression (a ``batch(...)`` call) the file is followed to what takes it:
later dataset methods (``.prefetch``, ``.repeat``, ``.map``) and
``strategy.experimental_distribute_dataset(...)`` pass it on; a name it is assigned to is
followed to its uses, and so is an attribute chain (``self.ds``) to its uses in the file; a
``return`` to the calls of the function (the position of a returned
tuple to the same target of ``a, b = make_pipelines()``); an argument of a function of the
file to that parameter's uses. It ends in ``fit`` (``x=`` or first), ``evaluate``,
``predict``, ``validation_data=``, a ``for`` loop or ``iter(...)`` (``iter``), or another
call (``other``).

A function of the file used from other files: the repository's analysis gives what other
files pass its results to (:mod:`.tf2_dataset_facts`, :data:`USE_FACT`); the defining file
counts those uses with its own (:meth:`DatasetUses.remote`). So does a method of a module-level
class (``MelDataset(files).create(n)`` in a decoding script): its uses in other files are its
only ones. Besides Keras' calls, another file may loop over the result (``for batch in
make_dataset(...)``, ``iter``, ``enumerate``, ``tqdm``): in a file that trains nothing that use
is :data:`LOOKED_AT` with its place (``looked-at@examples/decode.py:14``, the evidence of the
report), in a file that trains it is :data:`LOOPED` (a custom training loop, maybe); the result
passed to another call is :data:`PASSED` (it may train there).
"""

from __future__ import annotations

import ast
import re
from functools import cached_property
from typing import AbstractSet, Callable, Iterator, Optional

from .file_kinds import is_test_file
from .names import ast_dotted_name, module_parts
from .tf2_dataset_sources import DATASET_METHODS
from .tf2_datasets import FileDatasets, remote_name
from .tf2_window_functions import window_function

USE_FACT = "tf2-dataset-use:"
TRAINING = frozenset({"fit", "fit_generator", "train_on_batch"})
EVALUATION = frozenset({"evaluate", "predict", "predict_on_batch", "test_on_batch",
                        "evaluate_generator", "predict_generator", "validation_data="})
ITERATED, OTHER, REDUCED, COLLECTED = "iter", "other", "reduce", "collected"
#: Words of a name that make it an evaluation or inference pipeline (``val_ds``,
#: ``eval_input_fn``), unless it names training too (``train_and_evaluate``).
EVALUATION_WORDS = frozenset("val valid validation dev holdout eval evaluate evaluation test testing "
                             "predict prediction infer inference decode export serving transcribe "
                             "transcription stream".split())
TRAINING_WORDS = frozenset("train training trainer fit".split())
#: Of those, the words of a pass over every sample that is no evaluation (``process_stream``).
PASS_WORDS = frozenset("transcribe transcription stream".split())
#: Calls whose result is the dataset, distributed or transformed (followed on).
PASSED_ON = frozenset({"experimental_distribute_dataset", "apply"})
#: Where a dataset is used up in the file itself (no call it is passed to, which may train).
LOCAL_PASSES = frozenset({ITERATED, REDUCED, COLLECTED})
_LOOPING = frozenset({"iter", "enumerate", "tqdm"})
#: Uses in other files: a loop in a file that trains nothing (``looked-at@<path>:<line>``), a
#: loop in a file that trains, an argument of another call.
LOOKED_AT, LOOPED, PASSED = "looked-at", "loop", "passed"


class DatasetUses:
    """Where the datasets of one file go (:class:`FileDatasets` for the file's ``ast``)."""

    def __init__(self, datasets: FileDatasets, facts: AbstractSet[str] = frozenset()) -> None:
        self.datasets = datasets
        self.parents = datasets.parents
        self.facts = [fact[len(USE_FACT):].split("|") for fact in facts if fact.startswith(USE_FACT)]
        self._known: dict[tuple[int, object], set[str]] = {}

    def _once(self, node: ast.AST, key: object, compute: Callable[[], set[str]]) -> set[str]:
        """``compute()`` once per (node, key); empty while it is being computed (a name that
        flows back into itself: ``ds = ds.map(f)``)."""
        index = (id(node), key)
        if index not in self._known:
            self._known[index] = set()
            self._known[index] = compute()
        return self._known[index]

    def destinations(self, node: ast.AST) -> set[str]:
        """Where the value of ``node`` goes (see the module docstring); empty when nowhere
        the file shows (assigned to an attribute, unused)."""
        node = self._passed_on(node)
        parent = self.parents.get(id(node))
        if isinstance(parent, ast.Attribute) and parent.attr == "reduce" \
                and isinstance(self.parents.get(id(parent)), ast.Call):
            return {REDUCED}  # ``dataset.reduce(0, count)``: every batch counts
        if isinstance(parent, ast.keyword):
            return self._keyword(parent)
        if isinstance(parent, ast.Call) and parent.func is not node:
            return self._argument(parent, _index(parent.args, node))
        if isinstance(parent, (ast.Assign, ast.AnnAssign)):
            targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            return {where for target in targets for where in self._target_destinations(target)}
        if isinstance(parent, ast.Return):
            return self._returned(parent, None)
        above = self.parents.get(id(parent)) if isinstance(parent, ast.Tuple) else None
        if isinstance(parent, ast.Tuple) and isinstance(above, ast.Return):
            return self._returned(above, _index(parent.elts, node))
        if isinstance(parent, ast.comprehension) and parent.iter is node and _collects(self.parents.get(id(parent))):
            return {COLLECTED}  # ``[model(batch) for batch in ds]``: each batch's result kept
        if isinstance(parent, (ast.For, ast.AsyncFor)) and parent.iter is node and _loop_collects(parent):
            return {COLLECTED}  # ``for batch in ds: embs = tf.concat([embs, model(batch)])``
        if isinstance(parent, (ast.For, ast.AsyncFor, ast.comprehension)) and parent.iter is node:
            return {ITERATED}
        return set()

    def _passed_on(self, node: ast.AST) -> ast.AST:
        """The outermost expression that is still ``node``'s dataset: later dataset methods,
        ``experimental_distribute_dataset(node)``."""
        while True:
            parent = self.parents.get(id(node))
            above = self.parents.get(id(parent)) if parent is not None else None
            if isinstance(parent, ast.Attribute) and parent.attr in DATASET_METHODS \
                    and isinstance(above, ast.Call) and above.func is parent:
                node = above
            elif isinstance(parent, ast.Call) and parent.func is not node and _callee(parent) in PASSED_ON:
                node = parent  # strategy.experimental_distribute_dataset(ds), ds.apply(map_and_batch(...))
            else:
                return node

    def _keyword(self, keyword: ast.keyword) -> set[str]:
        call = self.parents.get(id(keyword))
        callee = _callee(call) if isinstance(call, ast.Call) else None
        if keyword.arg == "validation_data":
            return {"validation_data="}
        if keyword.arg == "x" and callee in TRAINING | EVALUATION:
            return {callee}
        if isinstance(call, ast.Call) and keyword.arg:
            return self._parameter_uses(call, keyword.arg) or {OTHER}
        return {OTHER}

    def _argument(self, call: ast.Call, index: Optional[int]) -> set[str]:
        callee = _callee(call)
        if index == 0 and callee in TRAINING | EVALUATION:
            return {callee}
        if callee in _LOOPING:
            return {ITERATED}
        return (self._parameter_uses(call, index) if index is not None else set()) or {OTHER}

    def _parameter_uses(self, call: ast.Call, which: "int | str | None") -> set[str]:
        """Where a function of the file takes the argument: the uses of its parameter."""
        function = self.datasets.functions.get(call.func.id) if isinstance(call.func, ast.Name) else None
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or which is None:
            return set()
        names = [argument.arg for argument in [*function.args.posonlyargs, *function.args.args]]
        name = names[which] if isinstance(which, int) and which < len(names) else which
        if not isinstance(name, str) or name not in names + [a.arg for a in function.args.kwonlyargs]:
            return set()
        return self._once(function, name, lambda: {where for use in _loads(self.datasets, function, name)
                                                   for where in self.destinations(use)})

    def _target_destinations(self, target: ast.AST) -> set[str]:
        if isinstance(target, ast.Name):
            return self.name_destinations(target)
        return self.attribute_destinations(target) if isinstance(target, ast.Attribute) else set()

    def attribute_destinations(self, target: ast.Attribute) -> set[str]:
        """Where an attribute chain the dataset is assigned to goes (``self.ds = ds.batch(n)``,
        then ``for batch in self.ds:`` in another method): the uses of the same chain anywhere
        in the file, as :meth:`FileDatasets.attribute_kind` tracks attributes."""
        dotted = ast_dotted_name(target)
        if dotted is None:
            return set()
        return self._once(self.datasets.tree, dotted, lambda: {
            where for node in self.datasets.index.nodes(ast.Attribute)
            if isinstance(node.ctx, ast.Load) and node.attr == target.attr
            and ast_dotted_name(node) == dotted for where in self.destinations(node)})

    def name_destinations(self, target: ast.Name) -> set[str]:
        """Where the name ``target`` assigns goes: its uses in the scope (in the module, every
        function that reads it too)."""
        scope = self.datasets.scope_of(target)
        nodes = ast.walk(scope) if isinstance(scope, ast.Module) else self.datasets.nodes_in(scope)
        return self._once(scope, target.id, lambda: {
            where for node in nodes if isinstance(node, ast.Name) and node.id == target.id
            and isinstance(node.ctx, ast.Load) for where in self.destinations(node)})

    def _returned(self, statement: ast.Return, position: Optional[int]) -> set[str]:
        """Where the calls of the function that returns the value take it (``position``: of a
        returned tuple)."""
        function = self.datasets.scope_of(statement)
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return set()
        owner = self.parents.get(id(function))
        if isinstance(owner, ast.ClassDef) and owner in self.datasets.tree.body:
            method = f"{owner.name}.{function.name}"  # its calls are other files': ``X(...).create()``
            return self._once(function, position, lambda: self.remote(method, position))
        if self.datasets.functions.get(function.name) is not function:
            return set()
        def compute() -> set[str]:
            found = self.remote(function.name, position)
            for call, _ in self.datasets.calls_by_name.get(function.name, []):
                found |= self._call_destinations(call, position)
            return found
        return self._once(function, position, compute)

    def _call_destinations(self, call: ast.Call, position: Optional[int]) -> set[str]:
        if position is None:
            return self.destinations(call)
        parent = self.parents.get(id(call))
        if isinstance(parent, ast.Assign) and len(parent.targets) == 1 \
                and isinstance(parent.targets[0], (ast.Tuple, ast.List)) \
                and position < len(parent.targets[0].elts):
            target = parent.targets[0].elts[position]
            return self.name_destinations(target) if isinstance(target, ast.Name) else set()
        return set()

    def evaluation_only(self, node: ast.AST) -> str:
        """Why the dataset ``node`` must keep every sample: it serves evaluation only (its
        name or its function's says so: ``val_ds``, ``def eval_input_fn``; or all it reaches
        is ``evaluate``, ``predict`` or ``validation_data=``), or each batch counts (a
        reduction, results kept, a stream); "" when it reaches training or the file does not
        tell."""
        return self._kept(node)[0]

    def evaluates(self, node: ast.AST) -> bool:
        """Is what :meth:`evaluation_only` found evaluation or inference, not another pass that
        needs every sample (a reduction, a loop that keeps each batch's result, a stream or a
        transcription)?"""
        return self._kept(node)[1]

    def looked_at_only(self, node: ast.AST) -> bool:
        """Is the dataset ``node`` shown to feed no training: all the file shows it going to is
        a loop or ``iter(...)`` (``next(iter(ds))``: a look at one batch), a reduction, a loop
        that keeps each batch's result, or evaluation, and the file trains nothing
        (:attr:`file_trains`), or what it returns is only looked at or evaluated by other
        files that train nothing (:data:`LOOKED_AT`, :meth:`looked_at_in`)? A dataset the file does not show going anywhere (returned to
        another file, kept on an attribute) or passed to another call may be trained there:
        not this."""
        wheres = self.destinations(node)
        local = {where.partition("@")[0] for where in wheres}
        return bool(wheres) and local <= LOCAL_PASSES | EVALUATION | {LOOKED_AT} \
            and not (wheres & LOCAL_PASSES and self.file_trains)

    def looked_at_in(self, node: ast.AST) -> list[str]:
        """The places (``path:line``) of other files that train nothing where the dataset
        ``node`` is only looked at (:data:`LOOKED_AT` uses), sorted."""
        return sorted(where.partition("@")[2] for where in self.destinations(node)
                      if where.startswith(LOOKED_AT + "@"))

    @cached_property
    def file_trains(self) -> bool:
        """Does the file call something that trains (``fit``, ``GradientTape``,
        ``apply_gradients``, ``minimize``, ``train_on_batch``, a callee named for training:
        ``train_step``, ``estimator.train``)? (:func:`file_trains`)"""
        return file_trains(self.datasets)

    def window_function(self, node: ast.AST) -> str:
        """Where ``node`` batches one window or group, not the pipeline ("reduce_func of
        group_by_window", :mod:`.tf2_window_functions`); "" elsewhere."""
        return window_function(self.datasets, node)

    def _kept(self, node: ast.AST) -> tuple[str, bool]:
        wheres = self.destinations(node)
        if wheres & TRAINING:
            return "", False
        callback = self._callback_class(node)
        if callback:
            return f"made in {callback}, a Keras callback or evaluation class", True
        if REDUCED in wheres:
            return "its batches are reduced (.reduce(...)), so none may be dropped", False
        if COLLECTED in wheres and wheres <= EVALUATION | {COLLECTED}:
            return "each batch's result is kept (a list or loop collects them), so none may be dropped", False
        for name in self._names(node):
            words = _words(name)
            if words & EVALUATION_WORDS and not words & TRAINING_WORDS:
                return f"a pipeline named {name}", bool(words & EVALUATION_WORDS - PASS_WORDS)
        if wheres and wheres <= EVALUATION:
            return " and ".join(sorted(wheres)), True
        return "", False

    def _callback_class(self, node: ast.AST) -> str:
        """The name of the class ``node``'s function belongs to when it is a Keras callback
        (a base named ``...Callback``: callbacks evaluate, they do not train) or named for
        evaluation (``eval_callback``, ``Evaluator``); "" otherwise."""
        scope = self.datasets.scope_of(node)
        owner = self.parents.get(id(scope)) if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        if not isinstance(owner, ast.ClassDef):
            return ""
        bases = [base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "") for base in owner.bases]
        words = _words(owner.name)
        if any(base.endswith("Callback") for base in bases) or (words & EVALUATION_WORDS and not words & TRAINING_WORDS):
            return owner.name
        return ""

    def dataset_name(self, call: ast.Call) -> str:
        """The name of the pipeline a dataset method ``call`` works on: its receiver's, else
        the name the result is assigned to, else ``dataset``."""
        receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
        if isinstance(receiver, ast.Name):
            return receiver.id
        named = self._names(call)
        return named[0] if named and named[0] != getattr(self.datasets.scope_of(call), "name", None) \
            else "dataset"

    def _names(self, node: ast.AST) -> list[str]:
        """The name the dataset is assigned to, and the function it is made in."""
        names = []
        statement = self.parents.get(id(self._passed_on(node)))
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name):
            names.append(statement.targets[0].id)
        scope = self.datasets.scope_of(node)
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                and not (scope.name.startswith("test") and is_test_file(self.datasets.path)):
            names.append(scope.name)  # a test file's test_* functions test, they do not evaluate
        return names

    def remote(self, name: str, position: Optional[int]) -> set[str]:
        """Where other files of the repository take what this file's ``name`` returns."""
        module = ".".join(module_parts(self.datasets.path))
        wanted = "*" if position is None else str(position)
        owner, _, method = name.rpartition(".")
        if owner:  # ``Class.method``: the class as imported (a package may re-export it), then the method
            return {where for package, target, at, where in self.facts if at == wanted
                    and target.rpartition(".")[2] == method
                    and _is(target.rpartition(".")[0], package, f"{module}.{owner}")}
        return {where for package, target, at, where in self.facts if at == wanted
                and _is(target, package, f"{module}.{name}")}


def _is(target: str, package: str, qualified: str) -> bool:
    """Is ``target``, as a file of ``package`` imports it, the repository's ``qualified``?"""
    return remote_name(target, tuple(package.split(".")) if package else (), {qualified}) is not None


def _callee(call: ast.Call) -> Optional[str]:
    function = call.func
    if isinstance(function, ast.Attribute):
        return function.attr
    return function.id if isinstance(function, ast.Name) else None


def _index(nodes: list[ast.expr], node: ast.AST) -> Optional[int]:
    return next((index for index, each in enumerate(nodes) if each is node), None)


def _loads(datasets: FileDatasets, function: ast.AST, name: str) -> Iterator[ast.Name]:
    for node in datasets.nodes_in(function):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
            yield node


def _collects(comprehension: Optional[ast.AST]) -> bool:
    """Is ``comprehension`` a list (or generator) of what a call makes of each element that
    trains nothing (``[model(batch) for batch in ds]``, not ``[train_step(x, y).numpy() for
    x, y in ds]``)?"""
    return isinstance(comprehension, (ast.ListComp, ast.GeneratorExp)) \
        and isinstance(comprehension.elt, ast.Call) and not _trains(comprehension.elt)


#: Calls that keep what a loop makes of each element, and calls that train.
_KEEPING = frozenset({"append", "extend", "concat", "concatenate", "stack", "vstack", "hstack"})
_TRAINING_CALLS = frozenset({"GradientTape", "apply_gradients", "minimize", "fit", "train_on_batch"})


def _loop_collects(loop: "ast.For | ast.AsyncFor") -> bool:
    """Does the loop keep what it makes of each batch (``append``, ``concat``, ``yield``) and
    train nothing?"""
    if _trains(loop):
        return False
    return any(isinstance(node, (ast.Yield, ast.YieldFrom))
               or isinstance(node, ast.Call) and _callee(node) in _KEEPING for node in ast.walk(loop))


def file_trains(datasets: FileDatasets) -> bool:
    """Does the file of ``datasets`` call something that trains (:func:`_trains` of its whole
    tree)? Its calls are the module index's: no walk of the tree, no :attr:`~.FileDatasets.parents`
    (the repository's analysis asks it of every file that loops over a repository function's
    result: :mod:`.tf2_dataset_facts`)."""
    return any(map(_call_trains, datasets.index.nodes(ast.Call)))


def _trains(node: ast.AST) -> bool:
    """Does ``node`` call something that trains: ``GradientTape``, ``apply_gradients``... or a
    callee named for training (``train_step``)?"""
    return any(isinstance(call, ast.Call) and _call_trains(call) for call in ast.walk(node))


def _call_trains(call: ast.Call) -> bool:
    callee = _callee(call)
    return callee in _TRAINING_CALLS or bool(_words(callee or "") & TRAINING_WORDS)


def _words(name: str) -> set[str]:
    """The lower-case words of a name (``eval_callback``: eval, callback)."""
    return set(re.split(r"[^a-z]+", name.lower()))
