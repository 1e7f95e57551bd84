"""TensorFlow reached only through a star import of a repository module.

``from models import *`` binds every public name of ``models.py``, its ``tf`` too: a script
that imports nothing of TensorFlow itself can build and run a whole graph through that line
(a GAN's ``trainer.py`` that takes ``tf`` from ``from models import *``). The engine reads a
file's own imports, so such a file would be ``non-tf`` and left alone with no word. It is not
migrated (every rule resolves names through the file's own imports); it is reported at the
star import, with what to do, so it is never a silent skip.

Each file's analysis gives, with ``ast`` only where the file imports TensorFlow::

    star-exports:<module>=<name>,...          the TensorFlow names its star import binds
    star-imports:<path>|<line>|<module as spelled>|<tf>|<name>,...
                                              a star import, and the names the file calls or
                                              reads attributes of

``<tf>`` is ``x`` for a file that imports TensorFlow itself (it only passes names on).
:func:`star_findings` joins them for the repository: a module passes on what it star-imports.
"""

from __future__ import annotations

import ast
import re
from typing import Iterable, Iterator, Optional

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

EXPORTS = "star-exports:"
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


def star_export_fact(path: str, text: str) -> Optional[str]:
    """The ``star-exports:`` fact of a file that imports TensorFlow, or None when its star
    import binds no TensorFlow name (all private, or left out of its ``__all__``)."""
    tree = module_ast(text)
    if tree is None:
        return None
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
    names = {name for name in bound if not name.startswith("_")} if listed is None else bound & listed
    if not names:
        return None
    return f"{EXPORTS}{'.'.join(module_parts(path))}={','.join(sorted(names))}"


def star_findings(facts: Iterable[str]) -> list[tuple[str, int, str]]:
    """``(path, line, message)`` of each file that imports no TensorFlow itself and uses
    TensorFlow names its star imports bind (one per file, at the first such import), from the
    repository's facts."""
    exports: dict[str, set[str]] = {}
    imports: list[tuple[str, int, str, bool, frozenset[str]]] = []
    for fact in facts:
        if fact.startswith(EXPORTS):
            module, _, names = fact[len(EXPORTS):].partition("=")
            exports[module] = set(names.split(","))
        elif fact.startswith(IMPORTS):
            path, line, spelled, tf, used = fact[len(IMPORTS):].split("|")
            imports.append((path, int(line), spelled, tf == "x", frozenset(used.split(","))))
    if not exports:
        return []
    known = exports.keys() | _modules(imports)
    resolved = [(*star, _resolve(star[2], star[0], known)) for star in imports]
    _pass_on(exports, resolved)
    by_file: dict[str, list[tuple[int, str]]] = {}
    for at, number, written, own_tf, spelled_names, target in sorted(resolved):
        bound = sorted(exports.get(target or "", set()) & spelled_names)
        if not own_tf and bound:
            by_file.setdefault(at, []).append((number, f"`from {written} import *` ({target} binds {', '.join(bound)})"))
    found = [(at, stars[0][0], MESSAGE.format(imports=" and ".join(text for _, text in stars)))
             for at, stars in by_file.items()]
    return found


def _pass_on(exports: dict[str, set[str]], resolved: list[tuple[str, int, str, bool, frozenset[str], Optional[str]]]) -> None:
    """A module that star-imports another binds what that one's star import binds: until no
    module gains a name (each round adds one, so this ends)."""
    changed = True
    while changed:
        changed = False
        for path, _, _, _, _, target in resolved:
            if target is None or target not in exports:
                continue
            module = ".".join(module_parts(path))
            before = len(exports.setdefault(module, set()))
            exports[module] |= exports[target]
            changed = changed or len(exports[module]) != before


def _modules(imports: Iterable[tuple[str, int, str, bool, frozenset[str]]]) -> set[str]:
    return {".".join(module_parts(path)) for path, *_ in imports}


def _resolve(spelled: str, path: str, known: Iterable[str]) -> Optional[str]:
    """The repository module ``spelled`` (as ``path`` imports it) is, if known."""
    module = _absolute(spelled, path)
    if module is None:
        return None
    return nearest_name(module, module_package(path), frozenset(known))


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
