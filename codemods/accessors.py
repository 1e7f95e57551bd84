"""Module accessor functions: repository functions that return a TensorFlow module.

Large libraries reach ``tf.contrib`` through functions, so that importing them does not fail
where contrib is missing::

    def tpu():                      # tensor2tensor/utils/contrib.py
      err_if_tf2(msg='err')
      from tensorflow.contrib import tpu as contrib_tpu
      return contrib_tpu

and call them where they need the module: ``contrib.tpu().TPUEstimator(...)``. Such a call
resolves like the module it returns, for every rule and for the audit. Each file is read with
``ast`` before any rewrite (:func:`accessor_facts`, returned by a plugin's
``npu_codemod_analyze_file``), one fact per module-level function that takes no argument it
must be given and returns a TensorFlow name (or that looks a TensorFlow module up by a name it
is given: ``contrib("tpu")``, always ``?``)::

    accessor:<module>.<function>=<full TensorFlow name, or ? when it cannot be resolved>

A return of something else as well (a ``DummyModule(...)`` where TF 2 has no contrib) does not
count: the TF 1.x path returns the module. Two different TensorFlow names, or a module the
function looks up by name (``getattr(tf.contrib, name)``, ``importlib.import_module(...)``),
cannot be resolved: ``?``. :func:`file_accessors` reads the facts back as the file being rewritten spells
the functions (``contrib.tpu``, ``tpu``).
"""

from __future__ import annotations

import ast
from functools import lru_cache
from typing import FrozenSet, Iterable, Optional

from .modules import imported_names, module_ast, module_index, nearest_name
from .names import (
    ESTIMATOR_PACKAGE,
    STAR,
    TF,
    ast_dotted_name,
    ast_import_bindings,
    canonical,
    module_parts,
    public_name,
)
from .names import UNRESOLVED_ACCESSOR as UNRESOLVED

PREFIX = "accessor:"
_ROOTS = (TF, ESTIMATOR_PACKAGE)
#: Calls that give a module or one of its members by name.
_LOOKUPS = frozenset({"getattr", "import_module", "__import__"})


def accessor_facts(path: str, text: str) -> set[str]:
    """The ``accessor:`` facts of one file (see the module's doc)."""
    tree = module_ast(text)
    if tree is None:
        return set()
    module = ".".join(module_parts(path))
    imports = _tf_imports(tree)
    index = module_index(tree)
    facts = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            target = _returned_module(node, index.own_nodes(node), imports)
            # one that must be given an argument is an accessor only when it looks the module
            # up (the argument picks it): its accesses are then reported, never resolved
            if target is not None and (target == UNRESOLVED or not _required(node.args)):
                facts.add(f"{PREFIX}{module}.{node.name}={target}")
    return facts


def _tf_imports(tree: ast.Module) -> dict[str, str]:
    """Local name -> the TensorFlow name it is imported as, anywhere in the module: a name
    imported from TensorFlow in one place and from elsewhere in another (``try: from
    tensorflow.contrib import slim as tf_slim / except ImportError: import tf_slim``) is
    TensorFlow's, as on TF 1.x; one imported as two TensorFlow names is left out."""
    found: dict[str, set[str]] = {}
    for node in module_index(tree).nodes(ast.Import, ast.ImportFrom):  # the analyses' one walk
        if not isinstance(node, (ast.Import, ast.ImportFrom)) or isinstance(node, ast.ImportFrom) and node.level:
            continue  # a relative import binds no TensorFlow name
        for local, target in ast_import_bindings(node):
            if local != STAR and target.split(".")[0] in _ROOTS:
                found.setdefault(local, set()).add(target)
    return {local: targets.pop() for local, targets in found.items() if len(targets) == 1}


def _required(arguments: ast.arguments) -> bool:
    """Must a call pass an argument?"""
    positional = [*arguments.posonlyargs, *arguments.args]
    return len(positional) > len(arguments.defaults) \
        or any(default is None for default in arguments.kw_defaults)


def _returned_module(function: ast.FunctionDef, nodes: list[ast.AST], imports: dict[str, str]) -> Optional[str]:
    """The TensorFlow name every TensorFlow-returning ``return`` of ``function`` (its own
    nodes ``nodes``, as the shared index keeps them) gives, :data:`UNRESOLVED`, or None when it
    returns nothing of TensorFlow."""
    targets, built = set(), False
    for node in nodes:
        if type(node) is ast.Return and node.value is not None:
            name = _tf_name(node.value, imports)
            if name is not None:
                targets.add(name)
            elif _builds_module(node.value) and _mentions_tf(node.value, imports):
                built = True
    if len(targets) == 1 and not built:
        return targets.pop()
    return UNRESOLVED if targets or built else None


def _tf_name(value: ast.expr, imports: dict[str, str]) -> Optional[str]:
    """The full TensorFlow name of a dotted ``value`` (``contrib_tpu``, ``tf.contrib.tpu``)."""
    spelled = ast_dotted_name(value)
    if spelled is None:
        return None
    head, _, rest = spelled.partition(".")
    bound = imports.get(head)
    if bound is None:
        return None
    return canonical(public_name(bound + (f".{rest}" if rest else "")))


def _builds_module(value: ast.expr) -> bool:
    """Is ``value`` a call that looks a module or its member up by name (``getattr(tf.contrib,
    name)``, ``importlib.import_module(...)``)?"""
    if not isinstance(value, ast.Call):
        return False
    return (ast_dotted_name(value.func) or "").rpartition(".")[2] in _LOOKUPS


def _mentions_tf(value: ast.AST, imports: dict[str, str]) -> bool:
    """Does ``value`` use a TensorFlow binding or spell a TensorFlow module in a string?"""
    for node in ast.walk(value):
        if isinstance(node, ast.Name) and imports.get(node.id, "").split(".")[0] in _ROOTS:
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and node.value.split(".")[0] in _ROOTS:
            return True
    return False


@lru_cache(maxsize=4)
def repository_accessors(facts: FrozenSet[str]) -> dict[str, str]:
    """Module-qualified function name -> what it returns, from the ``accessor:`` facts
    (worked out once per repository's facts: the dict kept for them, not to be edited)."""
    found = {}
    for fact in facts:
        if fact.startswith(PREFIX):
            name, _, target = fact[len(PREFIX):].partition("=")
            found[name] = target
    return found


def file_accessors(path: str, text: str, accessors: dict[str, str],
                   imported: Optional[dict[str, str]] = None) -> dict[str, str]:
    """How the file ``path`` (source ``text``) spells the repository's accessor functions ->
    what each returns: ``contrib.tpu`` after ``from lib.utils import contrib``, ``tpu`` after
    ``from lib.utils.contrib import tpu`` or where the file defines it. ``imported``: the
    file's :func:`~.modules.imported_names`, when known (else read from its ``ast``)."""
    if not accessors:
        return {}
    if imported is None:
        tree = module_ast(text)
        if tree is None:
            return {}
        imported = imported_names(tree, path)
    parts = module_parts(path)
    module, package = ".".join(parts), parts[:-1]
    found = {name.rpartition(".")[2]: target for name, target in accessors.items()
             if name.rpartition(".")[0] == module}
    modules = {name.rpartition(".")[0] for name in accessors}
    for local, bound in imported.items():
        if bound.split(".")[0] in _ROOTS:
            continue
        function = nearest_name(bound, package, accessors.keys())
        if function is not None:
            found[local] = accessors[function]
            continue
        owner = nearest_name(bound, package, modules)
        if owner is not None:
            found.update({f"{local}.{name.rpartition('.')[2]}": target
                          for name, target in accessors.items() if name.rpartition(".")[0] == owner})
    return found


def unresolved_accesses(text: str, spellings: Iterable[str]) -> list[tuple[int, int, str]]:
    """``(line, character column, code)`` of each ``<accessor>().<name>`` in ``text`` whose
    accessor is one of ``spellings`` (those returning a module not known), or ``<alias>.<name>``
    of a name bound to such a call (``fw = contrib.framework()``), in source order."""
    wanted = frozenset(spellings)
    tree = module_ast(text) if wanted else None
    if tree is None:
        return []
    lines = text.split("\n")
    aliases = _accessor_aliases(tree, wanted)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        spelled = _called_accessor(node.value, wanted) if isinstance(node.value, ast.Call) \
            else aliases.get(node.value.id) if isinstance(node.value, ast.Name) else None
        if spelled is not None:
            line = lines[node.lineno - 1]
            column = len(line.encode("utf-8")[:node.col_offset].decode("utf-8", "replace"))
            found.append((node.lineno, column, f"{spelled}().{node.attr}"))
    return sorted(found)


def _called_accessor(call: ast.Call, wanted: frozenset[str]) -> Optional[str]:
    """The spelling of the accessor ``call`` calls, if one of ``wanted`` (those whose module is
    not known: with arguments too, ``contrib_module("layers")``, which pick the module)."""
    spelled = ast_dotted_name(call.func)
    return spelled if spelled in wanted else None


def _accessor_aliases(tree: ast.Module, wanted: frozenset[str]) -> dict[str, str]:
    """Names bound to an accessor's module (``tpu_lib = contrib.tpu()``) -> the accessor."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Call):
            spelled = _called_accessor(node.value, wanted)
            if spelled is not None:
                aliases.setdefault(node.targets[0].id, spelled)
    return aliases
