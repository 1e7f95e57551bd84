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
"""

from __future__ import annotations

import ast
import re
from typing import Callable, Iterable, Iterator, Optional

from .modules import module_ast, nearest_name
from .names import (
    ESTIMATOR_PACKAGE,
    STAR,
    TF,
    ast_dotted_name,
    ast_import_bindings,
    module_package,
    module_parts,
)
from .tf_scopes import FILE_FACT

IMPORTS = "star-imports:"
_ROOTS = (TF, ESTIMATOR_PACKAGE)
#: ``from <module> import *`` on its own line (a star import is a module-level statement).
_STAR = re.compile(r"^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]*\*", re.MULTILINE)
_STAR_GATE = re.compile(r"import[ \t]*\*")
#: A name the code calls or reads an attribute of (``tf.``, ``dense(``).
_USED = re.compile(r"(?<![\w.])([A-Za-z_]\w*)[ \t]*[.(]")
MESSAGE = ("uses TensorFlow only through {imports}: not migrated, the rules read a file's own "
           "imports; import what it uses here (`import tensorflow as tf`) and run again")


#: The bytes test of :func:`star_import_facts`: may this file's star import bind a name?
_STAR_BYTES = re.compile(rb"^[ \t]*from[ \t]+[\w.]+[ \t]+import[ \t]*\*", re.MULTILINE)


def may_star_import(data: bytes) -> bool:
    """Does the file (its bytes) hold a ``from <module> import *`` line?"""
    return b"*" in data and _STAR_BYTES.search(data) is not None


def star_import_facts(path: str, text: str, imports_tf: bool) -> set[str]:
    """The ``star-imports:`` facts of one file (none for most: the text says first)."""
    if "*" not in text or _STAR_GATE.search(text) is None:
        return set()  # the regular expression's literal start found in C: most files stop here
    facts = set()
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


def star_exports(path: str, text: str) -> set[str]:
    """The TensorFlow names the star import of the module ``text`` binds: its public
    module-level imports of TensorFlow and names assigned from them, as its ``__all__``
    allows (none for a text ``ast`` cannot read)."""
    tree = module_ast(text)
    if tree is None:
        return set()
    bound: set[str] = set()
    listed: Optional[set[str]] = None
    for node in _module_level(tree.body):
        if isinstance(node, (ast.Import, ast.ImportFrom)) and not (isinstance(node, ast.ImportFrom) and node.level):
            bound.update(local for local, target in ast_import_bindings(node)
                         if local != STAR and target.split(".")[0] in _ROOTS)
        elif type(node) is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name:
            name = node.targets[0].id
            if name == "__all__":
                listed = _literal_names(node.value)
            elif type(node.value) in _DOTTED and (ast_dotted_name(node.value) or "").split(".")[0] in bound:
                bound.add(name)  # ``slim = tf.contrib.slim``
    return {name for name in bound if not name.startswith("_")} if listed is None else bound & listed


def star_findings(facts: Iterable[str], read: Callable[[str], Optional[str]]) -> list[tuple[str, int, str]]:
    """``(path, line, message)`` of each file that imports no TensorFlow itself and uses
    TensorFlow names its star imports bind (one per file, at the first such import), from the
    repository's facts; ``read`` gives the text of a file of the repository by its path (None
    when it cannot), asked only for the modules such a file star-imports."""
    imports: list[tuple[str, int, str, bool, frozenset[str]]] = []
    tf_files: set[str] = set()
    for fact in facts:
        if fact.startswith(IMPORTS):
            path, line, spelled, tf, used = fact[len(IMPORTS):].split("|")
            imports.append((path, int(line), spelled, tf == "x", frozenset(used.split(","))))
        elif fact.startswith(FILE_FACT):
            tf_files.add(fact.rpartition("|")[2])
    if all(own_tf for _, _, _, own_tf, _ in imports):
        return []  # no file that imports no TensorFlow star-imports anything: nothing to read
    paths = {".".join(module_parts(path)): path for path in tf_files | {star[0] for star in imports}}
    known = frozenset(paths)
    targets = {(at, number): _resolve(spelled, at, known) for at, number, spelled, _, _ in imports}
    stars: dict[str, list[Optional[str]]] = {}
    for path, number, _, _, _ in imports:
        stars.setdefault(path, []).append(targets[(path, number)])
    exports = _Exports(paths, tf_files, stars, read)
    by_file: dict[str, list[tuple[int, str]]] = {}
    for at, number, written, own_tf, spelled_names in sorted(imports):
        target = targets[(at, number)]
        bound = sorted(exports.of(target) & spelled_names) if target is not None and not own_tf else []
        if bound:
            by_file.setdefault(at, []).append((number, f"`from {written} import *` ({target} binds {', '.join(bound)})"))
    return [(at, stars_at[0][0], MESSAGE.format(imports=" and ".join(text for _, text in stars_at)))
            for at, stars_at in by_file.items()]


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


def _absolute(spelled: str, path: str) -> Optional[str]:
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


_DOTTED = (ast.Name, ast.Attribute)
_BLOCKS = (ast.If, ast.Try, ast.With)


def _module_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The module-level statements, those in ``if``/``try``/``with`` blocks too (not in
    functions or classes: they bind no module name)."""
    for node in body:
        yield node
        if not isinstance(node, _BLOCKS):
            continue
        for field in ("body", "orelse", "finalbody"):
            yield from _module_level(getattr(node, field, None) or [])
        for handler in getattr(node, "handlers", None) or []:
            yield from _module_level(handler.body)


def _literal_names(value: ast.expr) -> Optional[set[str]]:
    """The strings of a literal list or tuple (``__all__``), or None for anything else."""
    if isinstance(value, (ast.List, ast.Tuple)) and all(
            isinstance(item, ast.Constant) and isinstance(item.value, str) for item in value.elts):
        return {item.value for item in value.elts}  # type: ignore[attr-defined]
    return None
