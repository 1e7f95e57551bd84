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
the file that defines the function. Only these direct shapes are followed: it is cheap, for
every TF file of every repository. Test files say nothing: a test evaluates what the
repository trains on.
"""

from __future__ import annotations

import ast
import sys
from typing import Iterator, Optional

from .file_kinds import is_test_file
from .modules import module_ast
from .names import module_parts
from .tf2_dataset_sources import DATASET, DATASET_METHODS
from .tf2_dataset_uses import EVALUATION, TRAINING, USE_FACT
from .tf2_datasets import FUNCTION_FACT, FileDatasets, Scope, file_datasets

_LIBRARIES = ("tensorflow", "keras", "numpy", "tensorflow_datasets", "tf_keras")
_STANDARD = frozenset(sys.stdlib_module_names)
#: Text of a file that may use a repository function for training or evaluation (substrings:
#: ``in`` is many times faster than a regular expression over a large file).
_CONSUMES = (".fit(", ".evaluate(", ".predict(", "_on_batch(", "validation_data")
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


def dataset_use_facts(path: str, text: str) -> set[str]:
    """The :data:`USE_FACT` facts of one file (see the module docstring)."""
    if not any(word in text for word in _CONSUMES) or is_test_file(path):
        return set()
    tree = module_ast(text)
    if tree is None:
        return set()
    datasets = FileDatasets(tree, text, path)
    package = ".".join(datasets.package)
    facts = set()
    for call, scope in datasets.calls_in_scopes:
        for where, value in _consumed(call):
            for target, position in _origins(datasets, value, scope):
                facts.add(f"{USE_FACT}{package}|{target}|{position}|{where}")
    return facts


def _consumed(call: ast.Call) -> Iterator[tuple[str, ast.AST]]:
    """(where, value) of what a Keras training or evaluation call takes as data."""
    callee = call.func.attr if isinstance(call.func, ast.Attribute) else None
    if callee not in TRAINING | EVALUATION:
        return
    if call.args and not isinstance(call.args[0], ast.Starred):
        yield callee, call.args[0]
    for keyword in call.keywords:
        if keyword.arg == "x":
            yield callee, keyword.value
        elif keyword.arg == "validation_data" and "validation_data=" in EVALUATION:
            yield "validation_data=", keyword.value


def _origins(datasets: FileDatasets, value: ast.AST, scope: Scope) -> Iterator[tuple[str, str]]:
    """(repository function as imported, position) whose result ``value`` is: a call of it
    (later dataset methods aside), or a name ``scope`` assigns one (a tuple target: its index)."""
    value = _unchained(value)
    if isinstance(value, ast.Call):
        target = _repository_function(datasets, value)
        if target:
            yield target, "*"
        return
    if not isinstance(value, ast.Name):
        return
    for statement in datasets.statements(scope):
        if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
            continue
        made = _unchained(statement.value)
        target = _repository_function(datasets, made) if isinstance(made, ast.Call) else None
        position = _position(statement.targets[0], value.id)
        if target and position:
            yield target, position


def _unchained(value: ast.AST) -> ast.AST:
    """``make()`` for ``make().prefetch(2).repeat()``."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
            and value.func.attr in DATASET_METHODS and isinstance(value.func.value, ast.Call):
        value = value.func.value
    return value


def _position(target: ast.AST, name: str) -> Optional[str]:
    if isinstance(target, ast.Name):
        return "*" if target.id == name else None
    if isinstance(target, (ast.Tuple, ast.List)):
        return next((str(index) for index, element in enumerate(target.elts)
                     if isinstance(element, ast.Name) and element.id == name), None)
    return None


def _repository_function(datasets: FileDatasets, call: ast.Call) -> Optional[str]:
    """The dotted name, as imported, of the repository function ``call`` calls, or None (a
    library's, the standard library's, or not imported)."""
    target = datasets.qualify(call.func)
    if target is None or target.startswith(_LIBRARIES) or target.partition(".")[0] in _STANDARD:
        return None
    return target
