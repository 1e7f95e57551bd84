"""What other files of a repository use a pipeline-building function for (NPU002).

A function that builds a ``tf.data`` pipeline is often used from another file:
``estimator.predict(input_fn=lambda: data.input_fn(files))``, ``validation_data=
data.make_dataset(...)``, a call in ``def evaluate(...)``, ``test_input = make_input_fn(...)``
then ``estimator.evaluate(test_input)``. Each file is read with ``ast`` before any rewrite,
and each use of an imported function that says what it is for becomes a repository fact:

- ``npu002-use:<package of the using file>|<dotted name as imported>|infer|<path>:<line>``
  (or ``train``), the first such use of the file: the keyword the function is passed as
  (``validation_data=``, ``eval_input_fn=``), else the call it is passed to
  (``estimator.predict``, ``tf.estimator.TrainSpec``), names inference or training; or the
  name its result is bound to (``test_input = make_input_fn(...)``), else the calls that name
  is then passed to in the same scope (``estimator.evaluate(test_input)``); or the function
  that calls it (``decode_from_file``) does.
- ``...|iterator``: what the function returns builds an iterator that another dataset also
  initialises (:mod:`._shared_iterators`): its training batch must keep its last batch;
  ``...|iterator:<attribute>`` (no ``|<path>:<line>`` either): the class's instances build
  such an iterator from their ``<attribute>`` (``from_structure(tr.data.output_types, ...)``,
  ``make_initializer(te.data)``), so the batch a method keeps in ``self.<attribute>`` must
  keep its last batch too.

:func:`remote_uses` gives the file that defines the function what the others say of it (a
name imported through a package's re-exports, ``from lib import make_input_fn`` with
``lib/__init__.py`` importing it, included), so that :func:`._datasets.inference_pipeline`
counts those uses with the file's own. Not seen: a function reached otherwise than by its
imported name (passed around, ``getattr``), a use in a file that imports no TensorFlow.
"""

from __future__ import annotations

import ast
import sys
from functools import lru_cache, partial
from typing import Callable, Iterator, Optional, Union

from npu_codemod.api import FileContext
from npu_codemod.api._toolkit import (
    ModuleIndex,
    imported_module,
    memo,
    module_index,
    module_parts,
    nearest_name,
    reexports,
)
from npu_codemod.api._toolkit import ast_dotted_name as dotted
from npu_codemod.api._toolkit import module_ast as parse

from ._datasets import _name_says as says
from ._shared_iterators import iterator_uses, module_nodes
from ._words import words

PREFIX = "npu002-use:"
#: ``npu002-module:<module>``: a module of the repository that defines module-level functions,
#: so that a use's import is resolved as Python would (:func:`module_facts`).
MODULE = "npu002-module:"
_Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]
#: Imports whose functions are no pipeline builders of the repository.
_LIBRARIES = ("tensorflow", "keras", "numpy", "tensorflow_datasets")
_STANDARD = frozenset(sys.stdlib_module_names)
#: What other files use a module's functions for: name -> verdict -> where the first such
#: use is (``examples/run.py line 41``; empty for an ``iterator`` fact).
Uses = dict[str, dict[str, str]]


def pipeline_use_facts(path: str, text: str) -> set[str]:
    """The ``npu002-use:`` facts of one file (see the module docstring)."""
    tree = parse(text)
    if tree is None:
        return set()
    index = module_index(tree)
    imports = {name: target for name, target in index.imported_names(path).items()
               if not target.startswith(_LIBRARIES) and target.partition(".")[0] not in _STANDARD}
    if not imports:
        return set()
    package = ".".join(module_parts(path)[:-1])
    first: dict[tuple[str, str], int] = {}
    module_code = lru_cache(maxsize=1)(partial(module_nodes, tree))  # walked once, if asked for
    for target, verdict, line in [*_file_uses(index, imports), *_bound_uses(index, imports, module_code)]:
        first[target, verdict] = min(line, first.get((target, verdict), line))
    facts = {f"{PREFIX}{package}|{target}|{verdict}|{path}:{line}"
             for (target, verdict), line in first.items()}
    # An iterator constructor spells "from_str..." (ast reads non-ASCII names NFKC-normalized).
    iterators = _iterator_uses(index, imports, module_code()) if "from_str" in text or not text.isascii() else ()
    facts.update(f"{PREFIX}{package}|{target}|{verdict}" for target, verdict in iterators)
    return facts


def module_facts(path: str, text: str) -> set[str]:
    """The :data:`MODULE` fact of a module (no package ``__init__``, whose names are followed
    as re-exports) that defines a function at module level: in a repository of sample projects
    that each have their own ``trainer/model.py``, ``import trainer.model`` in one project is
    that project's module (the nearest folder, as ``sys.path[0]`` finds it), and only the
    known modules tell which one that is."""
    tree = None if path.replace("\\", "/").rpartition("/")[2] == "__init__.py" else parse(text)
    if tree is None or not any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) for node in tree.body):
        return set()
    return {MODULE + ".".join(module_parts(path))}


def _iterator_uses(index: ModuleIndex, imports: dict[str, str],
                   module_code: list[ast.AST]) -> Iterator[tuple[str, str]]:
    """(imported target, "iterator") of each function whose results build an iterator that
    another dataset also initialises, (target, "iterator:<attribute>") of each class whose
    instances' attribute does, in module-level code (``module_code``: its nodes) or any function."""
    functions: list[_Function] = [*index.nodes(ast.FunctionDef), *index.nodes(ast.AsyncFunctionDef)]
    tree = index.tree
    if not isinstance(tree, ast.Module):
        return
    scopes = [module_code, *(index.own_nodes(function) for function in functions)]
    for spelled, verdict in iterator_uses(tree, scopes, imports, index.nodes(ast.Call)):
        target = _imported(spelled, imports)
        if target:
            yield target, verdict


def _file_uses(index: ModuleIndex, imports: dict[str, str]) -> Iterator[tuple[str, str, int]]:
    """(imported target, verdict, line) of each use in the module that says what it is for: a call
    of an imported function in a function whose name says it, or given names that say it
    (``args.eval_files``), an imported function in the arguments of a call (or keyword) whose
    name says it."""
    around = _saying_functions(index)
    for call in index.nodes(ast.Call):
        callee = dotted(call.func) or ""
        direct = _imported(callee, imports)
        said = (around.get(id(call)) or _arguments_say(call)) if direct else None
        if direct and said:
            yield direct, said, call.lineno
        verdict = _verdict(callee)  # a direct call covers uses in the arguments of others there
        if verdict:
            for value in call.args:
                yield from _uses_in(value, imports, verdict)
        for keyword in call.keywords:
            said = (_verdict(keyword.arg) if keyword.arg else None) or verdict
            if said:
                yield from _uses_in(keyword.value, imports, said)


def _arguments_say(call: ast.Call) -> Optional[str]:
    """What the names a call is given say, when they agree: ``model.input_fn(args.eval_files,
    batch_size=args.eval_batch_size)`` builds the evaluation input, ``args.train_files`` the
    training input. A call passed its caller's mode (``data_reader.input_fn(ds,
    self.skip_random_fraction_when_training, mode)``) builds for whatever mode that is: no
    other name makes it training input then (one naming evaluation still keeps its batch)."""
    values = [*call.args, *(keyword.value for keyword in call.keywords)]
    names = [dotted(node) or "" for value in values for node in _names(value)]
    said = set(map(_verdict, names)) - {None}
    if said == {"train"} and any(_passes_mode(name) for name in names):
        return None
    return said.pop() if len(said) == 1 else None


def _passes_mode(name: str) -> bool:
    """Is ``name`` a mode chosen elsewhere (``mode``, ``self.mode``), not a mode it names
    (``tf.estimator.ModeKeys.TRAIN`` says training)?"""
    return "mode" in words(name.rpartition(".")[2]) and _verdict(name) is None


def _saying_functions(index: ModuleIndex) -> dict[int, str]:
    """id of each call -> the verdict of the function it sits in, for the functions whose name
    says one (most say nothing: their calls are not looked up)."""
    found: dict[int, str] = {}
    functions: list[_Function] = [*index.nodes(ast.FunctionDef), *index.nodes(ast.AsyncFunctionDef)]
    for function in functions:
        verdict = _verdict(function.name)
        if verdict:
            found.update((id(node), verdict) for node in index.own_nodes(function) if type(node) is ast.Call)
    return found


def _uses_in(value: ast.AST, imports: dict[str, str], said: str) -> Iterator[tuple[str, str, int]]:
    for node in _names(value):
        target = _imported(dotted(node) or "", imports)
        if target:
            yield target, said, getattr(node, "lineno", 0)


def _bound_uses(index: ModuleIndex, imports: dict[str, str],
                module_code: Callable[[], list[ast.AST]]) -> Iterator[tuple[str, str, int]]:
    """(imported target, verdict, line) of each call of an imported function whose result a
    statement binds to names: what a name says (``test_input = make_input_fn(...)``), else what
    the calls it is then passed to in the same scope say (``estimator.evaluate(input_fn=x)``),
    at the line of that call. The factory of an ``input_fn`` is used so, as the file that
    defines it would see it used (``._datasets._use_says``). ``module_code``: gives the nodes
    of module-level code (:func:`._shared_iterators.module_nodes`). The assignments are the
    index's; each scope's nodes are only looked up for them (an assignment in a class body is
    in no scope: not read)."""
    bound: dict[int, tuple[ast.Assign, str, list[str]]] = {}  # id -> (assignment, target, names)
    for node in index.nodes(ast.Assign):
        if isinstance(node.value, ast.Call):
            target = _imported(dotted(node.value.func) or "", imports)
            names = [name for name in map(dotted, node.targets) if name] if target else []
            if target and names:
                bound[id(node)] = node, target, names
    if not bound:
        return
    functions: list[_Function] = [*index.nodes(ast.FunctionDef), *index.nodes(ast.AsyncFunctionDef)]
    for nodes in [module_code(), *(index.own_nodes(function) for function in functions)]:
        here = bound.keys() & map(id, nodes)
        if not here:
            continue
        passed: Optional[dict[str, list[tuple[str, int]]]] = None  # read once a scope needs it
        for node, target, names in (entry for key, entry in bound.items() if key in here):
            said = next(filter(None, map(_verdict, names)), None)
            if said:
                yield target, said, node.lineno
                continue
            passed = _passed_names(nodes) if passed is None else passed
            for name in names:
                yield from ((target, verdict, line) for verdict, line in passed.get(name, ()))


def _passed_names(nodes: list[ast.AST]) -> dict[str, list[tuple[str, int]]]:
    """Each plain name passed to a call among ``nodes`` that says what it is for -> (verdict,
    line) of each such call: the keyword it is passed as, else the call's name
    (``estimator.evaluate(test_input)``, ``EvalSpec(input_fn=test_input)``)."""
    passed: dict[str, list[tuple[str, int]]] = {}
    for node in nodes:
        if type(node) is not ast.Call:
            continue
        verdict = _verdict(dotted(node.func) or "")
        given = [(value, verdict) for value in node.args]
        given += [(keyword.value, (_verdict(keyword.arg) if keyword.arg else None) or verdict)
                  for keyword in node.keywords]
        for value, said in given:
            if said and isinstance(value, ast.Name):
                passed.setdefault(value.id, []).append((said, node.lineno))
    return passed


@lru_cache(maxsize=4096)
def _verdict(name: str) -> Optional[str]:
    """"infer", "train" or None: what the name says (the same names recur in every file)."""
    return says(name)


def _names(node: ast.AST) -> Iterator[ast.AST]:
    """The whole dotted names in ``node`` (``a.b.c``, not also ``a.b`` and ``a``)."""
    if isinstance(node, (ast.Name, ast.Attribute)) and dotted(node):
        yield node
        return
    for child in ast.iter_child_nodes(node):
        yield from _names(child)


def _imported(name: str, imports: dict[str, str]) -> Optional[str]:
    """The dotted name, as imported, that ``name`` (spelled in the file) stands for."""
    head, _, rest = name.partition(".")
    if head not in imports:
        return None
    return imports[head] + (f".{rest}" if rest else "")


def remote_uses(ctx: FileContext) -> Uses:
    """What other files use this file's module-level functions for: name -> verdict -> where
    the first use that says it is (by path, then line), also through a package's re-exports
    (``from lib import make_input_fn``)."""
    if "npu002.remote" in memo(ctx):
        return memo(ctx)["npu002.remote"]
    module = ".".join(module_parts(ctx.path))
    repository_modules, use_facts = _repository_uses(ctx.facts)
    modules = {*repository_modules, module}
    found: dict[str, dict[str, tuple[str, int]]] = {}
    for fact in use_facts:
        package, target, verdict, *where = fact[len(PREFIX):].split("|", 3)
        name = target.rpartition(".")[2]
        if not _names_function(target, package, f"{module}.{name}", ctx) \
                or _imports_another(target, package, module, modules):
            continue
        path, _, line = where[0].rpartition(":") if where else ("", "", "0")
        place = (path, int(line) if line.isdigit() else 0)
        known = found.setdefault(name, {})
        known[verdict] = min(place, known.get(verdict, place))
    uses = {name: {verdict: f"{path} line {line}" if path else "" for verdict, (path, line) in said.items()}
            for name, said in found.items()}
    memo(ctx)["npu002.remote"] = uses
    return uses


@lru_cache(maxsize=2)
def _repository_uses(facts: frozenset[str]) -> tuple[frozenset[str], tuple[str, ...]]:
    """The repository's modules (:data:`MODULE` facts) and its use facts (:data:`PREFIX`),
    sorted: the same for each of its files, and its facts are many in a large repository."""
    modules = frozenset(fact[len(MODULE):] for fact in facts if fact.startswith(MODULE))
    return modules, tuple(sorted(fact for fact in facts if fact.startswith(PREFIX)))


def _imports_another(target: str, package: str, module: str, modules: set[str]) -> bool:
    """Does importing ``target`` from a file of ``package`` run another of the repository's
    ``modules`` than ``module`` (``import trainer.model`` in ``p1/trainer/task.py``: the nearest
    ``trainer/model.py``, ``p1``'s, not ``p2``'s)?"""
    found = imported_module(target, tuple(package.split(".")) if package else (), modules)
    return found is not None and found != module


def _names_function(target: str, package: str, qualified: str, ctx: FileContext) -> bool:
    """Does ``target``, imported by a file of ``package``, name the function ``qualified``
    (directly, or through the re-exports of the packages it is spelled through)?"""
    parts = tuple(package.split(".")) if package else ()

    def find(name: str, parts: tuple[str, ...]) -> Optional[str]:
        return qualified if nearest_name(name, parts, {qualified}) == qualified else None

    return reexports(ctx.facts).resolve(target, parts, find) == qualified
