"""TensorFlow reached only through a star import of a repository module.

``from models import *`` binds every public name of ``models.py``, its ``tf`` too: a script
that imports nothing of TensorFlow itself can build and run a whole graph through that line
(a GAN's ``trainer.py`` that takes ``tf`` from ``from models import *``). The engine reads a
file's own imports, so such a file would be ``non-tf`` and left alone with no word. It is not
migrated (every rule resolves names through the file's own imports); it is reported at the
star import, with what to do, so it is never a silent skip.

Each file's analysis gives (a literal search first: most files hold no ``import *``)::

    star-imports:<path>|<line>|<module as spelled>|<tf>|<name>,...
                                              a star import, and the names the file calls or
                                              reads attributes of

``<tf>`` is ``x`` for a file that imports TensorFlow itself (it only passes names on).
:func:`star_findings` joins them for the repository. What a module's star import binds is read
then, only for the modules a file that imports no TensorFlow star-imports (and those they
star-import in turn): that case is rare, and every TensorFlow file paid for it when the
analysis read it for each file.

The same holds for a *named* import of a TensorFlow name a repository module binds
(tensorpack's ``from tensorpack import tfv1 as tf``, where ``tensorpack/compat`` has ``tfv1 =
tf.compat.v1`` and the package's ``__init__`` imports it): such a file, which imports no
TensorFlow itself, is reported at that import as well::

    named-imports:<path>|<line>|<module as spelled>|<name>:<local>,...
                                              a named import of a repository module of a
                                              TensorFlow-like name (:data:`_TF_LIKE`) the file
                                              calls or reads attributes of

The module is found from the importing file's folder up (as ``nearest_name``), read when the
repository's facts are joined, and followed through its own named re-exports (``from .compat
import tfv1``) a few modules deep.
"""

from __future__ import annotations

import ast
import re
from typing import Callable, Iterable, Optional

from .modules import literal_names, module_ast, module_level, nearest_name
from .names import (
    ESTIMATOR_PACKAGE,
    STAR,
    TF,
    ast_dotted_name,
    ast_import_bindings,
    module_package,
    module_parts,
)
from .reexports import STAR_GATE as _STAR_GATE
from .reexports import STAR_LINE as _STAR
from .reexports import TF_HOPS, Bound, is_foreign, resolve
from .reexports import absolute as _absolute
from .tf_scopes import FILE_FACT

IMPORTS = "star-imports:"
NAMED = "named-imports:"
_ROOTS = (TF, ESTIMATOR_PACKAGE)
#: A name the code calls or reads an attribute of (``tf.``, ``dense(``).
_USED = re.compile(r"(?<![\w.])([A-Za-z_]\w*)[ \t]*[.(]")
MESSAGE = ("uses TensorFlow only through {imports}: not migrated, the rules read a file's own "
           "imports; import what it uses here (`import tensorflow as tf`) and run again")
#: :data:`MESSAGE` for a file whose TensorFlow names all come from named imports (each says how).
NAMED_MESSAGE = ("uses TensorFlow only through {imports}: not migrated, the rules read a file's own "
                 "imports; import it here as shown and run again")
#: One named import in the messages: what the module binds the name to says how to import it.
NAMED_IMPORT = ("`from {written} import {names}` ({module} binds {name} to {target}: "
                "`import {target} as {local}`)")


#: The bytes test of :func:`star_import_facts`: may this file's star import bind a name?
_STAR_BYTES = re.compile(rb"^[ \t]*from[ \t]+[\w.]+[ \t]+import[ \t]*\*", re.MULTILINE)
#: A name that may stand for TensorFlow (``tf``, ``tfv1``, ``tf1``, ``tensorflow``,
#: ``tf_compat``): only imports of such names are followed (:data:`NAMED`).
_TF_LIKE = re.compile(r"^(?:tf|tensorflow)(?:_?v?[12]|_?compat(?:_?v?[12])?)?$", re.IGNORECASE)
#: ``from <module> import ... <tf-like name>`` on a line of its own (any module: the facts
#: leave TensorFlow's out), as text and as bytes.
_NAMED_LINE = (r"^[ \t]*from[ \t]+\.*[\w.]*[ \t]+import[ \t][^\n#]*?"
               r"(?<![\w.])(?:tf|tensorflow)(?:_?v?[12]|_?compat(?:_?v?[12])?)?\b")
_NAMED_GATE = re.compile(_NAMED_LINE, re.MULTILINE | re.IGNORECASE)
_NAMED_BYTES = re.compile(_NAMED_LINE.encode(), re.MULTILINE | re.IGNORECASE)


def may_star_import(data: bytes) -> bool:
    """Does the file (its bytes) hold a ``from <module> import *`` line, or a line importing a
    TensorFlow-like name from a module (:data:`NAMED`)?"""
    return (b"*" in data and _STAR_BYTES.search(data) is not None) or _NAMED_BYTES.search(data) is not None


def star_import_facts(path: str, text: str, imports_tf: bool) -> set[str]:
    """The ``star-imports:`` facts of one file (none for most: the text says first), and for
    a file that imports no TensorFlow its ``named-imports:`` ones."""
    facts = set() if imports_tf else named_import_facts(path, text)
    if "*" not in text or _STAR_GATE.search(text) is None:
        return facts  # the regular expression's literal start found in C: most files stop here
    used: Optional[str] = None
    for match in _STAR.finditer(text):
        spelled = match.group(1)
        if spelled.split(".")[0] in _ROOTS or spelled.startswith(("npu_bridge", "npu_device")):
            continue
        if used is None:
            used = ",".join(sorted(set(_USED.findall(text))))
        line = text.count("\n", 0, match.start()) + 1
        facts.add(f"{IMPORTS}{path}|{line}|{spelled}|{'x' if imports_tf else ''}|{used}")
    return facts


def named_import_facts(path: str, text: str) -> set[str]:
    """The ``named-imports:`` facts of a file that imports no TensorFlow itself: each
    module-level ``from <module> import <name> [as <local>]`` of a module that is not
    TensorFlow's or an adapter's, for the TensorFlow-like names it binds that the file uses."""
    if _NAMED_GATE.search(text) is None:
        return set()
    tree = module_ast(text)
    if tree is None:
        return set()
    used = set(_USED.findall(text))
    facts = set()
    for node in module_level(tree.body):
        if not isinstance(node, ast.ImportFrom) or (not node.level and is_foreign(node.module or "")):
            continue
        names = [f"{alias.name}:{alias.asname or alias.name}" for alias in node.names
                 if alias.name != STAR and (alias.asname or alias.name) in used
                 and _TF_LIKE.match(alias.asname or alias.name)]
        if names:
            spelled = "." * node.level + (node.module or "")
            facts.add(f"{NAMED}{path}|{node.lineno}|{spelled}|{','.join(sorted(names))}")
    return facts


def star_exports(path: str, text: str) -> set[str]:
    """The TensorFlow names the star import of the module ``text`` binds: its public
    module-level imports of TensorFlow and names assigned from them, as its ``__all__``
    allows (none for a text ``ast`` cannot read)."""
    bound, listed = _tf_bindings(text)
    return {name for name in bound if not name.startswith("_")} if listed is None else set(bound) & listed


def _tf_bindings(text: str) -> tuple[dict[str, str], Optional[set[str]]]:
    """The module-level names of the module ``text`` bound to TensorFlow (its imports of
    TensorFlow, names assigned from them), each with what it is (``tensorflow.compat.v1``),
    and its literal ``__all__`` (None: none)."""
    tree = module_ast(text)
    if tree is None:
        return {}, None
    bound: dict[str, str] = {}
    listed: Optional[set[str]] = None
    for node in module_level(tree.body):
        if isinstance(node, (ast.Import, ast.ImportFrom)) and not (isinstance(node, ast.ImportFrom) and node.level):
            bound.update((local, target) for local, target in ast_import_bindings(node)
                         if local != STAR and target.split(".")[0] in _ROOTS)
        elif type(node) is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name:
            name = node.targets[0].id
            dotted = ast_dotted_name(node.value) or "" if type(node.value) in _DOTTED else ""
            head, _, rest = dotted.partition(".")
            if name == "__all__":
                listed = literal_names(node.value)
            elif head in bound:  # ``slim = tf.contrib.slim``; the first of several (``except``: ``= tf``)
                bound.setdefault(name, bound[head] + (f".{rest}" if rest else ""))
    return bound, listed


def star_findings(facts: Iterable[str], read: Callable[[str], Optional[str]]) -> list[tuple[str, int, str]]:
    """``(path, line, message)`` of each file that imports no TensorFlow itself and uses
    TensorFlow names its star imports bind (one per file, at the first such import), from the
    repository's facts; ``read`` gives the text of a file of the repository by its path (None
    when it cannot), asked only for the modules such a file star-imports."""
    imports: list[tuple[str, int, str, bool, frozenset[str]]] = []
    named: list[tuple[str, int, str, list[tuple[str, str]]]] = []
    tf_files: set[str] = set()
    for fact in facts:
        if fact.startswith(IMPORTS):
            path, line, spelled, tf, used = fact[len(IMPORTS):].split("|")
            imports.append((path, int(line), spelled, tf == "x", frozenset(used.split(","))))
        elif fact.startswith(NAMED):
            path, line, spelled, written = fact[len(NAMED):].split("|")
            named.append((path, int(line), spelled, [_pair(pair) for pair in written.split(",")]))
        elif fact.startswith(FILE_FACT):
            tf_files.add(fact.rpartition("|")[2])
    by_file: dict[str, list[tuple[int, str, bool]]] = {}
    modules = _Modules(read)
    for at, number, written, given_names in sorted(named):
        for name, local in given_names:
            target = modules.binds_tf(written, at, name)
            if target is not None:
                spelled = name if name == local else f"{name} as {local}"
                by_file.setdefault(at, []).append((number, NAMED_IMPORT.format(
                    written=written, names=spelled, module=_absolute(written, at) or written, name=name,
                    target=target, local=local), False))
    if all(own_tf for _, _, _, own_tf, _ in imports):
        return _messages(by_file)  # no file that imports no TensorFlow star-imports anything
    paths = {".".join(module_parts(path)): path for path in tf_files | {star[0] for star in imports}}
    known = frozenset(paths)
    targets = {(at, number): _resolve(spelled, at, known) for at, number, spelled, _, _ in imports}
    stars: dict[str, list[Optional[str]]] = {}
    for path, number, _, _, _ in imports:
        stars.setdefault(path, []).append(targets[(path, number)])
    exports = _Exports(paths, tf_files, stars, read)
    for at, number, written, own_tf, spelled_names in sorted(imports):
        target = targets[(at, number)]
        bound = sorted(exports.of(target) & spelled_names) if target is not None and not own_tf else []
        if bound:
            by_file.setdefault(at, []).append(
                (number, f"`from {written} import *` ({target} binds {', '.join(bound)})", True))
    return _messages(by_file)


def _messages(by_file: dict[str, list[tuple[int, str, bool]]]) -> list[tuple[str, int, str]]:
    """One finding per file, at its first import that binds TensorFlow names (each import
    ``(line, text, is a star import)``)."""
    found = []
    for at, imports_at in by_file.items():
        imports_at.sort()
        message = MESSAGE if any(star for _, _, star in imports_at) else NAMED_MESSAGE
        found.append((at, imports_at[0][0], message.format(imports=" and ".join(text for _, text, _ in imports_at))))
    return found


class _Modules:
    """The repository's modules as their texts say, read when first asked (the files that
    import no TensorFlow and import a TensorFlow-like name from one are few)."""

    def __init__(self, read: Callable[[str], Optional[str]]) -> None:
        self.read = read
        self.files: dict[tuple[str, tuple[str, ...]], Optional[tuple[str, str]]] = {}

    def binds_tf(self, spelled: str, path: str, name: str) -> Optional[str]:
        """What the repository module ``spelled`` (as the file ``path`` imports it) binds
        ``name`` to, when it is TensorFlow (``tensorflow.compat.v1``): assigned from a
        TensorFlow import (private names too), or imported so from another repository module
        (``from .compat import tfv1``, at most :data:`~.reexports.TF_HOPS` re-exports); else None."""
        module = _absolute(spelled, path)
        if module is None:
            return None
        package = module_package(path) if spelled == module else ()
        return resolve(f"{module}.{name}", package, self._tf_name, self._owner, TF_HOPS)

    def _file(self, module: str, package: tuple[str, ...]) -> Optional[tuple[str, str]]:
        """The path and text of the repository module ``module`` found from ``package``
        (:func:`_module_text`), read once."""
        key = (module, package)
        if key not in self.files:
            self.files[key] = _module_text(module, package, self.read)
        return self.files[key]

    def _tf_name(self, target: str, package: tuple[str, ...]) -> Optional[str]:
        """The TensorFlow name the module of ``target`` binds its last part to, or None."""
        module, _, name = target.rpartition(".")
        found = self._file(module, package) if module else None
        return _tf_bindings(found[1])[0].get(name) if found is not None else None

    def _owner(self, module: str, package: tuple[str, ...]) -> Optional[tuple[str, Bound, tuple[str, ...]]]:
        """The module ``module`` (found from ``package``): its path, its named imports of
        repository modules, and its package."""
        found = self._file(module, package)
        if found is None:
            return None
        path, text = found
        tree = module_ast(text)
        bound: dict[str, list[str]] = {}
        for node in module_level(tree.body if tree is not None else []):
            if isinstance(node, ast.ImportFrom) and (node.level or not is_foreign(node.module or "")):
                for local, target in ast_import_bindings(node, path):
                    if local != STAR:
                        bound.setdefault(local, [target])  # the first (the old walk's)
        return path, bound, module_package(path)


def _pair(written: str) -> tuple[str, str]:
    """``(name, local)`` of a ``name:local`` of a :data:`NAMED` fact."""
    name, _, local = written.partition(":")
    return name, local


def _module_text(module: str, package: tuple[str, ...], read: Callable[[str], Optional[str]]
                 ) -> Optional[tuple[str, str]]:
    """The path and text of the repository module ``module`` (absolute) as a file of
    ``package`` imports it: the nearest folder of the package first (a script's neighbours),
    as Python finds it; None when no such file is read."""
    for depth in range(len(package), -1, -1):
        folder = "/".join([*package[:depth], *module.split(".")])
        for candidate in (f"{folder}.py", f"{folder}/__init__.py"):
            text = read(candidate)
            if text is not None:
                return candidate, text
    return None


class _Exports:
    """What each module's star import binds, read when first asked: its own TensorFlow names
    and what it star-imports in turn (a cycle of star imports ends where it started)."""

    def __init__(self, paths: dict[str, str], tf_files: set[str], stars: dict[str, list[Optional[str]]],
                 read: Callable[[str], Optional[str]]) -> None:
        self.paths, self.tf_files, self.stars, self.read = paths, tf_files, stars, read
        self.known: dict[str, frozenset[str]] = {}

    def of(self, module: str) -> frozenset[str]:
        if module in self.known:
            return self.known[module]
        self.known[module] = frozenset()  # while it is worked out: a cycle adds nothing
        path = self.paths.get(module)
        names: set[str] = set()
        if path in self.tf_files:
            text = self.read(path)
            names |= star_exports(path, text) if text is not None else set()
        for target in self.stars.get(path or "", []):
            names |= self.of(target) if target is not None else set()
        self.known[module] = frozenset(names)
        return self.known[module]


def _resolve(spelled: str, path: str, known: frozenset[str]) -> Optional[str]:
    """The repository module ``spelled`` (as ``path`` imports it) is, if known."""
    module = _absolute(spelled, path)
    if module is None:
        return None
    return nearest_name(module, module_package(path), known)


_DOTTED = (ast.Name, ast.Attribute)

