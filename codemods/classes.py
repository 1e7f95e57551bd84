"""Which classes a repository defines, what they derive from, and where a file calls them.

An Estimator subclass may live in ``models/estimator.py`` while ``train.py`` builds it; a rule
that must act where the Estimator is built asks which of the repository's classes derive from
the API classes it knows (through any chain of the repository's own classes) and where the
file it rewrites calls them. Each file is read on its own with ``ast`` before any rewrite
(:func:`class_facts`, returned by a plugin's ``npu_codemod_analyze_file``), one fact per
module-level class with a base other than ``object`` and the builtins::

    class:<module>.<Class>=<base>,<base>;<parameters of its __init__>

``<module>`` is the file's path, dotted (``models/estimator.py`` -> ``models.estimator``); a base
is its dotted name as the file imports it (``tensorflow.estimator.Estimator``,
``modeling.BaseEstimator``; a class of the same file: ``<module>.<Base>``); the parameters are
those of the class's own ``__init__`` after ``self`` (``model_fn,config,*,params,**kwargs``:
``*`` or ``*args`` before the keyword-only ones), or ``-`` when it defines none.
:func:`subclass_calls` reads the facts back for the file being rewritten.

A call may spell the class through the packages that re-export it (``import mylib``,
``mylib.estimator.GANEstimator(...)`` where ``mylib``'s and ``mylib.estimator``'s ``__init__``
import it: the ``reexport:`` facts of :mod:`reexports`).

Not seen: a class defined in a file that imports no TensorFlow (no analysis runs there), in a
function, built through something other than a call of its (imported) name, or re-exported
under another name (``from .gan import GANEstimator as GE``).
"""

from __future__ import annotations

import ast
import builtins
import sys
from dataclasses import dataclass
from functools import lru_cache
from typing import AbstractSet, FrozenSet, Iterable, Optional

from fissix import pytree
from fissix.pgen2 import token
from fissix.pygram import python_symbols as syms

from .ast_handover import file_imported_names
from .modules import KnownNames, imported_names, module_ast, nearest_name
from .names import (
    ast_dotted_name,
    canonical,
    is_attribute_trailer,
    is_call_trailer,
    module_parts,
    public_name,
)
from .qualified import Reference
from .reexports import Reexports, reexports
from .rule import FileContext
from .walk import position, pre_order

PREFIX = "class:"
#: Bases that say nothing about what a class is for.
_PLAIN = frozenset(dir(builtins)) | frozenset(getattr(sys, "stdlib_module_names", ()))


@dataclass(frozen=True)
class RepositoryClass:
    """A class of the repository that derives from an API class.

    ``name`` is module-qualified (``models.estimator.BertEstimator``), ``api_base`` the API
    class it derives from (canonical: ``tensorflow.estimator.Estimator``), ``init`` the
    parameters of the ``__init__`` it is built with (its own or the nearest repository base's,
    as in the fact), or None when that is the API class's own. ``lineage`` holds the
    repository classes from this one to the one that derives from the API class, each with
    the parameters of its own ``__init__`` (None: it defines none).
    """

    name: str
    api_base: str
    init: Optional[tuple[str, ...]]
    lineage: tuple[tuple[str, Optional[tuple[str, ...]]], ...] = ()

    def parameter(self, name: str) -> Optional[tuple[Optional[int], bool]]:
        """How a call passes the ``__init__`` parameter ``name``: ``(position or None when
        keyword-only, True)``; ``(None, False)`` when only ``**kwargs`` can take it; None
        when the ``__init__`` cannot take it at all. Only for a class with its own ``init``."""
        assert self.init is not None
        positional = True
        for index, parameter in enumerate(self.init):
            if parameter.startswith("**"):
                break
            if parameter.startswith("*"):
                positional = False
            elif parameter == name:
                return (index if positional else None), True
        return (None, False) if any(p.startswith("**") for p in self.init) else None


@dataclass(frozen=True)
class SubclassCall:
    """A call, in the file being rewritten, of a repository class that derives from an API class."""

    reference: Reference
    cls: RepositoryClass


def class_facts(path: str, text: str) -> set[str]:
    """The ``class:`` facts of one file, for a plugin's ``npu_codemod_analyze_file``: one per
    module-level class with a base other than ``object`` and the builtins,
    ``class:<module>.<Class>=<base>,...;<parameters of its own __init__ after self, or ->``
    (``class:models.estimators.BertEstimator=tensorflow.estimator.Estimator;bert_config,config``);
    :func:`subclass_calls` reads them back."""
    tree = module_ast(text)
    if tree is None:
        return set()
    module = ".".join(module_parts(path))
    imports = imported_names(tree, path)
    local = {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
    facts = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            bases = [base for base in (_base(value, imports, local, module) for value in node.bases)
                     if base]
            if bases:
                facts.add(f"{PREFIX}{module}.{node.name}={','.join(bases)};{_init(node)}")
    return facts


def _base(value: ast.expr, imports: dict[str, str], local: AbstractSet[str], module: str) -> str:
    """The dotted name of one base as the file binds it, or '' for a plain or unknown one."""
    spelled = ast_dotted_name(value)
    if spelled is None:
        return ""
    head, _, rest = spelled.partition(".")
    if head in imports:
        return imports[head] + (f".{rest}" if rest else "")
    if head in local:
        return f"{module}.{spelled}"
    return "" if head in _PLAIN else spelled


def _init(node: ast.ClassDef) -> str:
    """The parameters of the class's ``__init__`` after ``self``, or ``-``."""
    for item in node.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == "__init__":
            arguments = item.args
            names = [argument.arg for argument in [*arguments.posonlyargs, *arguments.args][1:]]
            if arguments.vararg is not None:
                names.append(f"*{arguments.vararg.arg}")
            elif arguments.kwonlyargs:
                names.append("*")
            names += [argument.arg for argument in arguments.kwonlyargs]
            if arguments.kwarg is not None:
                names.append(f"**{arguments.kwarg.arg}")
            return ",".join(names)
    return "-"


class RepositoryClasses:
    """The ``class:`` facts of a repository, read back."""

    def __init__(self, facts: Iterable[str]) -> None:
        facts = frozenset(facts)
        #: Module-qualified name -> (its bases, its own ``__init__`` parameters or None).
        self.classes: dict[str, tuple[tuple[str, ...], Optional[tuple[str, ...]]]] = {}
        #: A base spelled through its package (TensorFlowTTS's ``from tensorflow_tts.models
        #: import BaseModel``, the package's ``__init__`` importing it from ``base_model``).
        self._reexports = reexports(facts)
        for fact in facts:
            if fact.startswith(PREFIX):
                name, _, rest = fact[len(PREFIX):].partition("=")
                bases, _, init = rest.partition(";")
                parameters = None if init == "-" else tuple(p for p in init.split(",") if p)
                self.classes[name] = (tuple(bases.split(",")), parameters)
        self._known = KnownNames(self.classes)
        self._subclasses: dict[frozenset[str], dict[str, RepositoryClass]] = {}

    def subclasses(self, api: AbstractSet[str]) -> dict[str, RepositoryClass]:
        """Every class that derives from one of the API classes ``api`` (canonical names),
        by module-qualified name; worked out once per ``api`` (do not change the result)."""
        key = frozenset(api)
        found = self._subclasses.get(key)
        if found is None:
            found = self._subclasses[key] = {}
            for name in self.classes:
                derived = self._derive(name, key, frozenset())
                if derived is not None:
                    found[name] = derived
        return found

    def _derive(self, name: str, api: AbstractSet[str],
                visiting: frozenset[str]) -> Optional[RepositoryClass]:
        """The class ``name`` as a :class:`RepositoryClass` of the API classes ``api``, or None."""
        bases, init = self.classes[name]
        package = tuple(name.split(".")[:-2])
        for base in bases:
            public = canonical(public_name(base))
            if public in api:
                return RepositoryClass(name, public, init, ((name, init),))
            known = self._reexports.resolve(base, package, self._known.nearest)
            if known is not None and known not in visiting:
                derived = self._derive(known, api, visiting | {name})
                if derived is not None:
                    return RepositoryClass(name, derived.api_base,
                                           init if init is not None else derived.init,
                                           ((name, init), *derived.lineage))
        return None


def subclass_calls(ctx: FileContext, api: AbstractSet[str]) -> list[SubclassCall]:
    """The calls in the file of ``ctx`` of the repository's classes that derive from one of
    the API classes ``api`` (canonical names: ``tensorflow.estimator.Estimator``), by any
    name the file binds them to (defined in the file, ``from models import MyEstimator as
    E``, ``models.MyEstimator``), in source order; from the ``class:`` facts of
    :func:`class_facts`. Worked out once per file and set of classes."""
    return ctx.analysis(_subclass_calls, frozenset(api))


def _subclass_calls(ctx: FileContext, api: frozenset[str]) -> list[SubclassCall]:
    classes = ctx.analysis(_repository_classes).subclasses(api)
    if not classes or not any(name.rpartition(".")[2] in ctx.original for name in classes):
        return []
    names = _file_names(ctx, classes)
    found = []
    for node in pre_order(ctx.tree):
        if node.type == syms.power and node.children[0].type == token.NAME \
                and node.children[0].value in names.heads:
            call = _class_call(node, names)
            if call is not None:
                found.append(call)
    return found


@lru_cache(maxsize=64)
def subclass_names(facts: FrozenSet[str], api: FrozenSet[str]) -> frozenset[str]:
    """The class names (last parts) of the repository's classes, known from the ``class:``
    ``facts``, that derive from one of the API classes ``api``: what a construction of one
    spells (a rule's ``Rule._site_names_for``)."""
    return frozenset(name.rpartition(".")[2] for name in repository_classes(facts).subclasses(api))


@lru_cache(maxsize=8)
def repository_classes(facts: FrozenSet[str]) -> RepositoryClasses:
    """``RepositoryClasses(facts)``, built once per repository's facts: every file of the
    repository reads the same (which classes derive from which is worked out once)."""
    return RepositoryClasses(facts)


def _repository_classes(ctx: FileContext) -> RepositoryClasses:
    return repository_classes(ctx.facts)


@dataclass(frozen=True)
class _FileNames:
    """How the file spells the repository classes: its imports, its own module, the classes."""

    imports: dict[str, str]
    module: str
    package: tuple[str, ...]
    classes: dict[str, RepositoryClass]
    reexports: Reexports

    @property
    def heads(self) -> set[str]:
        own = {name.rpartition(".")[2] for name in self.classes
               if name.rpartition(".")[0] == self.module}
        return set(self.imports) | own

    def find(self, spelled: str) -> Optional[RepositoryClass]:
        head, _, rest = spelled.partition(".")
        if head in self.imports:
            target = self.imports[head] + (f".{rest}" if rest else "")
            found = self.reexports.resolve(target, self.package, self._nearest)
        else:
            found = f"{self.module}.{spelled}"
        return self.classes.get(found or "")

    def _nearest(self, target: str, package: tuple[str, ...]) -> Optional[str]:
        return nearest_name(target, package, self.classes.keys())


def _file_names(ctx: FileContext, classes: dict[str, RepositoryClass]) -> _FileNames:
    parts = module_parts(ctx.path)
    imports = file_imported_names(ctx)  # the analysis's reading, or the file's ast
    return _FileNames(imports, ".".join(parts), parts[:-1], classes, reexports(ctx.facts))


def _class_call(power: pytree.Node, names: _FileNames) -> Optional[SubclassCall]:
    """The call of a repository class that ``power`` starts with (``models.MyEstimator(...)``)."""
    parts = [power.children[0].value]
    children = power.children
    for end in range(1, len(children)):
        found = names.find(".".join(parts))
        if found is not None and is_call_trailer(children[end]):
            return SubclassCall(Reference(power, end, found.name, children[end], *position(power)),
                                found)
        if not is_attribute_trailer(children[end]):
            return None
        parts.append(children[end].children[1].value)
    return None
