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
the functions (``contrib.tpu``, ``tpu``), also through a package's re-exports (``import lib;
lib.get_tf()`` where ``lib/__init__.py`` imports ``get_tf``, or assigns it, ``get_tf =
compat.get_tf``: the ``reexport:`` and ``reexport-assigned:`` facts) and star imports (``from
lib.compat import *``, or a package's ``from .compat import *``, which binds what the module's
``__all__`` names when it has one: an ``accessor-all:<module>=<name>,...`` fact, ``?`` for one
that is no literal list, whose functions are then not known). Not followed: a plain module's
imports (``lib/helpers.py``: ``from lib.compat import get_tf``; the analysis reads no such file
that imports no TensorFlow).
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from typing import AbstractSet, FrozenSet, Iterable, Optional

from .modules import (
    import_statements,
    imported_names,
    literal_names,
    module_ast,
    module_index,
    module_level,
    nearest_name,
)
from .names import (
    ESTIMATOR_PACKAGE,
    STAR,
    TF,
    ast_dotted_name,
    ast_import_bindings,
    canonical,
    module_package,
    module_parts,
    public_name,
)
from .names import UNRESOLVED_ACCESSOR as UNRESOLVED
from .reexports import Reexports, star_imported

PREFIX = "accessor:"
#: The ``__all__`` of a module that defines accessors: ``accessor-all:<module>=<name>,...``
#: (``?``: not a literal list), which a star import of the module follows.
LISTED = "accessor-all:"
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
    if facts and "__all__" in text:
        listed = _listed(tree)
        if listed is not None:
            facts.add(f"{LISTED}{module}={listed}")
    return facts


def _listed(tree: ast.Module) -> Optional[str]:
    """The names of the module's ``__all__`` (``tree``), joined by commas, ``?`` when it is not
    made of literal lists (``__all__ = [...]``, ``__all__ += [...]``), or None when it has none."""
    names: Optional[set[str]] = None
    for node in module_level(tree.body):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if not any(isinstance(target, ast.Name) and target.id == "__all__" for target in targets):
                continue
            added = literal_names(node.value) if node.value is not None else None
            if added is None or len(targets) > 1:
                return UNRESOLVED
            if isinstance(node, ast.AugAssign):  # ``__all__ += [...]``
                if names is None or not isinstance(node.op, ast.Add):
                    return UNRESOLVED
                added |= names
            names = added
    return None if names is None else ",".join(sorted(names))


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


class RepositoryAccessors(dict[str, str]):
    """Module-qualified function name -> what it returns; and ``listed``: each module of them
    that has an ``__all__`` -> the names in it (None: not a literal list)."""

    def __init__(self) -> None:
        super().__init__()
        self.listed: dict[str, Optional[frozenset[str]]] = {}


@lru_cache(maxsize=4)
def repository_accessors(facts: FrozenSet[str]) -> RepositoryAccessors:
    """The repository's accessor functions, from the ``accessor:`` facts (worked out once per
    repository's facts: the dict kept for them, not to be edited)."""
    found = RepositoryAccessors()
    for fact in facts:
        if fact.startswith(PREFIX):
            name, _, target = fact[len(PREFIX):].partition("=")
            found[name] = target
        elif fact.startswith(LISTED):
            module, _, names = fact[len(LISTED):].partition("=")
            found.listed[module] = None if names == UNRESOLVED else frozenset(names.split(","))
    return found


def file_accessors(path: str, text: str, accessors: dict[str, str],
                   imported: Optional[dict[str, str]] = None,
                   reexported: Optional[Reexports] = None) -> dict[str, str]:
    """How the file ``path`` (source ``text``) spells the repository's accessor functions ->
    what each returns: ``contrib.tpu`` after ``from lib.utils import contrib``, ``tpu`` after
    ``from lib.utils.contrib import tpu`` or where the file defines it. ``imported``: the
    file's :func:`~.modules.imported_names`, when known (else read from its ``ast``).

    With the repository's re-exports (``reexported``), also as a package's ``__init__`` passes
    them on (``get_tf`` after ``from lib import get_tf``, ``lib.get_tf`` after ``import lib``,
    where ``lib/__init__.py`` has ``from .compat import get_tf`` or ``from .compat import *``);
    and a star import binds the public ones of the module it imports (``get_tf`` after ``from
    lib.compat import *``, or ``from lib import *`` of such a package), unless the file
    imports that name otherwise or defines a function or class of that name. ``import
    lib.compat`` spells them in full (``lib.compat.get_tf``)."""
    if not accessors:
        return {}
    if imported is None:
        tree = module_ast(text)
        if tree is None:
            return {}
        imported = imported_names(tree, path)
    module = ".".join(module_parts(path))
    # found from the file's folder (a package's ``__init__``: the package), as its imports are
    members = _Members(accessors, module_package(path), reexported)
    found = {}
    for star in star_imported(path, text):
        found.update({name: target for name, target in members.starred(star).items()
                      if name.partition(".")[0] not in imported and not _defines(text, name.partition(".")[0])})
    found.update({name.rpartition(".")[2]: target for name, target in accessors.items()
                  if name.rpartition(".")[0] == module})
    for local, bound in imported.items():
        if bound.split(".")[0] not in _ROOTS:
            found.update(members.spelled(local, bound))
    for dotted in _dotted_imports(text, members.modules):
        found.update({f"{dotted}.{name}": target for name, target in members.of(dotted).items()})
    return found


def _dotted_imports(text: str, modules: AbstractSet[str]) -> list[str]:
    """The submodules ``import lib.compat`` (no ``as``) makes the file spell in full
    (``lib.compat``; ``lib.utils`` and ``lib.utils.contrib`` for ``import lib.utils.contrib``),
    when the text may name one of ``modules`` so (its last name after a dot)."""
    if not any(f".{module.rpartition('.')[2]}" in text for module in modules):
        return []
    found = []
    for node in import_statements(text).body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if alias.asname is None and parts[0] not in _ROOTS:
                    found += [".".join(parts[:end]) for end in range(2, len(parts) + 1)]
    return found


def _defines(text: str, name: str) -> bool:
    """Does the module ``text`` define a function or class ``name`` at module level (which
    takes the place of what a star import binds)?"""
    return name in text and \
        re.search(rf"^(?:async[ \t]+def|def|class)[ \t]+{name}\b", text, re.MULTILINE) is not None


class _Members:
    """The accessor functions a dotted name of a file of ``package`` reaches: the function
    itself, or those of the module it is (its own, and what its package's ``__init__`` passes
    on, through ``reexported``)."""

    def __init__(self, accessors: dict[str, str], package: tuple[str, ...],
                 reexported: Optional[Reexports]) -> None:
        self.accessors, self.package, self.reexported = accessors, package, reexported
        self.modules = frozenset(name.rpartition(".")[0] for name in accessors)
        self.listed = accessors.listed if isinstance(accessors, RepositoryAccessors) else {}

    def spelled(self, local: str, bound: str) -> dict[str, str]:
        """How ``local``, bound to the dotted name ``bound``, spells accessor functions."""
        returned = self._returned(bound)
        if returned is not None:
            return {local: returned}
        return {f"{local}.{name}": target for name, target in self.of(bound).items()}

    def starred(self, module: str) -> dict[str, str]:
        """The accessor functions ``from <module> import *`` binds (of :meth:`of`): those its
        ``__all__`` names (each :data:`UNRESOLVED` when it is no literal list), else the public
        ones."""
        found = self.of(module)
        owner = self._find(module, self.listed.keys()) if self.listed else None
        if owner is None:
            return {name: target for name, target in found.items() if not name.startswith("_")}
        listed = self.listed[owner]
        if listed is None:
            return {name: UNRESOLVED for name in found if not name.startswith("_")}
        return {name: target for name, target in found.items() if name.partition(".")[0] in listed}

    def of(self, module: str) -> dict[str, str]:
        """The accessor functions the module ``module`` has as attributes, by their spelling
        from it (``get_tf``, ``compat.get_tf``) -> what each returns."""
        owner = self._find(module, self.modules)
        own = {} if owner is None else {name.rpartition(".")[2]: target for name, target
                                        in self.accessors.items() if name.rpartition(".")[0] == owner}
        passed = self.reexported.package(module, self.package) if self.reexported is not None else None
        return own if not passed else {**self._passed(module, passed), **own}

    def _passed(self, module: str, passed: dict[str, list[str]]) -> dict[str, str]:
        """The accessor functions the package ``module`` passes on (its ``__init__``'s imports
        ``passed``), by their spelling from it."""
        names = set(passed) - {STAR}
        hidden: set[str] = set()
        unknown: set[str] = set()
        if STAR in passed:  # any accessor, or module of them, it may pass on
            hidden, unknown = self._star_bound(passed[STAR])
            names.update(name.rpartition(".")[2] for name in (*self.accessors, *self.modules))
            names -= hidden - set(passed)
        found: dict[str, str] = {}
        for name in sorted(names):
            returned = self._returned(f"{module}.{name}")
            owner = None if returned is not None else self._find(f"{module}.{name}", self.modules)
            if returned is not None:
                found[name] = returned
            elif owner is not None:
                found.update({f"{name}.{function.rpartition('.')[2]}": target
                              for function, target in self.accessors.items()
                              if function.rpartition(".")[0] == owner})
        found.update({name: UNRESOLVED for name in unknown - set(passed) if name in found})
        return found

    def _star_bound(self, stars: list[str]) -> tuple[set[str], set[str]]:
        """Of the accessor functions of the modules ``stars`` (a package's star imports),
        those the star imports do not bind (not in the module's ``__all__``; without one, the
        private ones), and those they may bind or not (its ``__all__`` is no literal list)."""
        hidden, unknown = set(), set()
        for function in self.accessors:
            owner, _, name = function.rpartition(".")
            if owner not in stars:
                continue
            listed = self.listed.get(owner, frozenset())
            if listed is None:
                unknown.add(name)
            elif name not in listed if owner in self.listed else name.startswith("_"):
                hidden.add(name)
        return hidden, unknown

    def _returned(self, target: str) -> Optional[str]:
        """What the accessor function the dotted ``target`` is returns, directly or through
        the re-exports of the packages it is spelled through (:data:`UNRESOLVED` when they pass
        on functions that return different modules: ``try: from .tf1 import get_tf / except
        ImportError: from .tf2 import get_tf``), or None when it is none."""
        function = nearest_name(target, self.package, self.accessors.keys())
        if function is not None or self.reexported is None:
            return None if function is None else self.accessors[function]
        returned: set[str] = set()

        def every(name: str, package: tuple[str, ...]) -> None:  # each one, not the first
            function = nearest_name(name, package, self.accessors.keys())
            if function is not None:
                returned.add(self.accessors[function])

        self.reexported.resolve(target, self.package, every)
        return returned.pop() if len(returned) == 1 else UNRESOLVED if returned else None

    def _find(self, target: str, known: AbstractSet[str]) -> Optional[str]:
        """The name among ``known`` the dotted ``target`` is, directly or through the
        re-exports of the packages it is spelled through."""
        found = nearest_name(target, self.package, known)
        if found is not None or self.reexported is None:
            return found
        return self.reexported.resolve(target, self.package,
                                       lambda name, package: nearest_name(name, package, known))


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
