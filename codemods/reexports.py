"""What a package's ``__init__`` re-exports, so that a name spelled through the package finds
the repository's class or function it is.

``import mylib; mylib.estimator.GANEstimator(...)`` names the class
``mylib.estimator.gan_estimator.GANEstimator`` when ``mylib/__init__.py`` imports the
subpackage (``from mylib import estimator``) and ``mylib/estimator/__init__.py`` imports the
class (``from .gan_estimator import *``, ``from .gan_estimator import GANEstimator``): the
dotted name is no module-qualified name of the repository, so a rule that looks it up among
the repository's facts (``class:``...) alone finds nothing and leaves the construction with no
word. Each package's ``__init__`` is read on its own before any rewrite
(:func:`reexport_facts`, whether it imports TensorFlow or not), one fact per name its
module-level imports bind::

    reexport:<package>|<name>|<target>

``<package>`` is the ``__init__``'s module (``mylib/estimator/__init__.py`` ->
``mylib.estimator``), ``<name>`` the name bound (``*`` for a star import), ``<target>`` what it
is bound to as the import spells it, relative imports made absolute (``from .gan_estimator
import *`` -> ``mylib.estimator.gan_estimator``). :meth:`Reexports.resolve` follows them.

One resolver serves every reader of re-exports (:func:`resolve`): the Estimator subclasses'
(``classes``, ``built_models``: a class of the repository, through these facts, :data:`DEPTH`
deep), the repository's TensorFlow aliases (``tf_aliases``: ``tfv1 = tf.compat.v1`` imported
through a package, through its ``tf-alias:`` re-exports) and a named import of one in a file
that imports no TensorFlow (``star_imports``: through the modules' texts, read then), both
:data:`TF_HOPS` deep. They differ only in what a step looks up (``find``) and where a module's
re-exports come from (``owner``); what is not the repository's is :func:`is_foreign` for all.

A name the ``__init__`` assigns at module level from what it imports (``get_tf =
compat.get_tf``, ``get_tf = _get_tf`` after ``from .compat import get_tf as _get_tf``) is a fact
of its own, ``reexport-assigned:<package>|<name>|<target>``, followed only by the module
accessors' reader (:func:`accessor_reexports`). Not followed: such names for the other readers
(``GANEstimator = gan_estimator.GANEstimator``), a plain module's re-exports, ``__all__`` (a star import is taken to pass on the name asked for:
the name must still be a class of the module it ends at).
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import PurePosixPath
from typing import Callable, FrozenSet, Iterable, Mapping, Optional, Sequence

from .modules import KnownNames, module_ast, module_level
from .names import STAR, ast_dotted_name, ast_import_bindings, module_package, module_parts

PREFIX = "reexport:"
#: A name a package's ``__init__`` assigns from one it imports (see the module's doc).
ASSIGNED = "reexport-assigned:"
#: How many re-exports a name is followed through (``tfgan.estimator.GANEstimator``: the
#: package's star import of its ``python`` package, that package's import of ``estimator``,
#: its star import of ``gan_estimator``).
DEPTH = 4
#: How many re-exports a TensorFlow alias is followed through (``from tensorpack import tfv1``:
#: the package's import of ``compat``'s ``tfv1``, and two more).
TF_HOPS = 3
#: What a reader looks a dotted name up with, from a package (the Estimators':
#: ``KnownNames.nearest`` among the repository's classes), giving what it found or None.
Find = Callable[[str, tuple[str, ...]], Optional[str]]


def is_package_init(path: str) -> bool:
    """Is ``path`` a package's ``__init__.py`` (whose re-exports :func:`reexport_facts` reads)?"""
    return PurePosixPath(path.replace("\\", "/")).name == "__init__.py"


def reexport_facts(path: str, text: str) -> set[str]:
    """The ``reexport:`` facts of a package's ``__init__`` (none for any other file): one per
    name its module-level imports of the repository's modules bind (TensorFlow's and those
    of a module outside the repository are left out: no class of the repository there)."""
    if not is_package_init(path):
        return set()
    tree = module_ast(text)
    if tree is None:
        return set()
    package = ".".join(module_parts(path))
    facts: set[str] = set()
    imported: dict[str, str] = {}  # every name the imports so far bind -> its dotted target
    for node in module_level(tree.body):
        if isinstance(node, ast.Import):
            imported.update(ast_import_bindings(node))
            # ``import pkg.sub`` binds ``pkg`` alone; ``import pkg.sub as sub`` binds ``sub``
            bindings = [(alias.asname, alias.name) for alias in node.names if alias.asname]
        elif isinstance(node, ast.ImportFrom):
            bindings = ast_import_bindings(node, path)
            imported.update(bindings)
        else:
            assigned = _assigned(node, imported)
            if assigned is not None:
                facts.add(f"{ASSIGNED}{package}|{assigned[0]}|{assigned[1]}")
            continue
        facts.update(f"{PREFIX}{package}|{name}|{target}" for name, target in bindings
                     if not is_foreign(target))
    return facts


def _assigned(node: ast.stmt, imported: dict[str, str]) -> Optional[tuple[str, str]]:
    """``(name, target)`` of ``name = <dotted>`` whose dotted value starts with a name the
    imports so far bind to a repository module's (``get_tf = compat.get_tf`` after ``from lib
    import compat``: ``lib.compat.get_tf``), else None."""
    if type(node) is not ast.Assign or len(node.targets) != 1 or type(node.targets[0]) is not ast.Name:
        return None
    head, _, rest = (ast_dotted_name(node.value) or "").partition(".")
    bound = imported.get(head)
    if bound is None or bound == STAR or is_foreign(bound):
        return None
    return node.targets[0].id, bound + (f".{rest}" if rest else "")


#: The first parts of the dotted names that are none of the repository's modules.
_FOREIGN = frozenset(("tensorflow", "tensorflow_estimator", "npu_bridge", "npu_device", "__future__"))


def is_foreign(module: str) -> bool:
    """Is ``module`` (a dotted name, absolute) no repository module's: TensorFlow's, an
    adapter's, the standard library's ``__future__``? Its names are never re-exports to follow
    (every reader of re-exports asks here)."""
    return module.split(".")[0] in _FOREIGN


#: What a module re-exports: each name it imports -> the dotted names it is bound to (``*``:
#: the modules it star-imports).
Bound = Mapping[str, Sequence[str]]
#: The module a dotted name is, imported from a package: a key for it (a cycle ends at a key
#: seen), what it re-exports, and the package its targets are looked up from; or None.
Owner = Callable[[str, tuple[str, ...]], Optional[tuple[str, Bound, tuple[str, ...]]]]


def resolve(target: str, package: tuple[str, ...], find: Find, owner: Owner, depth: int) -> Optional[str]:
    """What ``find`` gives for ``target`` (a dotted name as a file of ``package`` imports it)
    or, when it gives nothing, for the name ``target`` is through the re-exports of the modules
    it is spelled through (``mylib.estimator.GANEstimator`` ->
    ``mylib.estimator.gan_estimator.GANEstimator``: ``owner`` gives each module's), the
    innermost module first, at most ``depth`` re-exports deep; None when neither finds it.
    Every reader of re-exports follows them here; they differ in what they look up
    (``find``) and where the re-exports come from (``owner``: the facts, :class:`Reexports`,
    or a module's text, ``star_imports``)."""
    return _resolve(target, package, find, owner, depth, frozenset())


def _resolve(target: str, package: tuple[str, ...], find: Find, owner: Owner, depth: int,
             seen: frozenset[str]) -> Optional[str]:
    found = find(target, package)
    if found is not None or depth == 0:
        return found
    parts = target.split(".")
    for cut in range(len(parts) - 1, 0, -1):  # the innermost module first
        hit = owner(".".join(parts[:cut]), package)
        if hit is None or hit[0] in seen:
            continue
        key, bound, inner = hit
        name, rest = parts[cut], parts[cut + 1:]
        bases = bound.get(name) or [f"{module}.{name}" for module in bound.get(STAR, ())]
        for base in bases:
            found = _resolve(".".join([base, *rest]), inner, find, owner, depth - 1, seen | {key})
            if found is not None:
                return found
    return None


class Reexports:
    """The ``reexport:`` facts of a repository, read back (and ``entries``, re-exports given
    as ``(module, name, target)``: ``tf_aliases``'s)."""

    def __init__(self, facts: Iterable[str], entries: Iterable[tuple[str, str, str]] = (),
                 prefixes: tuple[str, ...] = (PREFIX,)) -> None:
        #: Module -> name -> what it is bound to, sorted (``*``: the star-imported modules).
        self.packages: dict[str, dict[str, list[str]]] = {}
        for fact in facts:
            if fact.startswith(prefixes):
                package, name, target = fact.partition(":")[2].split("|")
                self.packages.setdefault(package, {}).setdefault(name, []).append(target)
        for package, name, target in entries:
            self.packages.setdefault(package, {}).setdefault(name, []).append(target)
        for bound in self.packages.values():
            for targets in bound.values():
                targets.sort()
        self._known = KnownNames(self.packages)

    def resolve(self, target: str, package: tuple[str, ...], find: Find, depth: int = DEPTH) -> Optional[str]:
        """:func:`resolve` through these re-exports (:data:`DEPTH` deep unless said)."""
        if not self.packages:
            return find(target, package)
        return resolve(target, package, find, self._owner, depth)

    def package(self, name: str, package: tuple[str, ...]) -> Optional[dict[str, list[str]]]:
        """What the package ``name`` (a dotted name as a file of ``package`` imports it; the
        nearest such) passes on: each name its ``__init__`` imports -> what it is bound to
        (``*``: the star-imported modules); None for a module that is no such package."""
        owner = self._known.nearest(name, package)
        return None if owner is None else self.packages[owner]

    def _owner(self, name: str, package: tuple[str, ...]) -> Optional[tuple[str, Bound, tuple[str, ...]]]:
        """The module ``name`` is among these re-exports' (the nearest to ``package``)."""
        owner = self._known.nearest(name, package)
        return None if owner is None else (owner, self.packages[owner], tuple(owner.split(".")))


@lru_cache(maxsize=8)
def reexports(facts: FrozenSet[str]) -> Reexports:
    """``Reexports(facts)``, built once per repository's facts."""
    return Reexports(facts)


@lru_cache(maxsize=4)
def accessor_reexports(facts: FrozenSet[str]) -> Reexports:
    """The re-exports the module accessors' reader follows: :func:`reexports` and the names a
    package's ``__init__`` assigns (:data:`ASSIGNED`), built once per repository's facts."""
    return Reexports(facts, prefixes=(PREFIX, ASSIGNED))


#: ``from <module> import *`` on its own line (a star import is a module-level statement).
STAR_LINE = re.compile(r"^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]*\*", re.MULTILINE)
STAR_GATE = re.compile(r"import[ \t]*\*")


def star_imported(path: str, text: str) -> list[str]:
    """The repository modules the file ``path`` (source ``text``) star-imports, absolute, in
    source order (not TensorFlow's or the adapters', :func:`is_foreign`, nor what leaves the
    repository)."""
    if "*" not in text or STAR_GATE.search(text) is None:
        return []
    found = []
    for match in STAR_LINE.finditer(text):
        module = absolute(match.group(1), path)
        if module is not None and not is_foreign(module):
            found.append(module)
    return found


def absolute(spelled: str, path: str) -> Optional[str]:
    """``spelled`` (``.nets``, ``models``) as an absolute module name from ``path``'s package,
    or None when it leaves the repository."""
    level = len(spelled) - len(spelled.lstrip("."))
    if not level:
        return spelled
    package = module_package(path)
    if level - 1 > len(package):
        return None
    rest = spelled[level:]
    return ".".join([*package[: len(package) - (level - 1)], *([rest] if rest else [])]) or None
