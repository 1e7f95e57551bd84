"""Horovod reached through a parameter (the distributed pack's NPU023 and NPU025 report the uses;
with the pack off, the audit's NPU100 does): ``create_optimizer(loss, lr, hvd=hvd)`` passes the module
to a file that does not import it, whose ``hvd.DistributedOptimizer(opt)`` and
``hvd.allreduce(x)`` are Horovod's all the same (NVIDIA's BERT). The spec's NPU025 line "every
other ``hvd.*`` use is reported" and NPU023's line hold for them too: each is reported
``unmigrated`` with its replacement, never rewritten (the value is not known to be Horovod in
every call: a caller may pass ``None`` or another module).

A parameter is Horovod's when a caller of the repository passes the Horovod module to it
(``horovod-passed:`` facts, gathered with ``ast`` by :func:`passed_facts`), or when it is named
``hvd``; so is a local name ``hvd`` a function assigns (``hvd = model.hvd``, OpenSeq2Seq), and an
attribute of ``self`` a method of the class sets to the Horovod module or to such a parameter
(``self.hvd = hvd``, tensorpack's HorovodTrainer). Only their attribute uses that are Horovod's
API (:data:`HOROVOD_PARAMETER_API`) are reported: what another object of that name does is no Horovod use.

So are Horovod's uses through a variable of a repository module that holds the module
(``horovod_holders``: NVIDIA's ``hvd.hvd_global_object.BroadcastGlobalVariablesHook(0)``, the
wrapper module imported as ``hvd``); through any attribute named as the module is
(``model.hvd.rank()``, ``self.model.hvd.size()``: whatever object holds it); and the names of
``from horovod.tensorflow import *`` (``rank()``), which no rule follows: reported, not
rewritten (:func:`star_imports` gives the imports themselves).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, replace
from typing import AbstractSet, FrozenSet, Iterable, Iterator, Mapping, Optional, Union

from .horovod_holders import HOROVOD_MODULES, NAME_PREFIX, held_names, horovod_names
from .horovod_holders import PREFIX as HELD_PREFIX
from .horovod_stars import ANY, Passed, star_passes
from .horovod_stars import MODULE as MODULE_HELD
from .modules import ModuleIndex, module_ast, module_index, nearest_name, own_nodes
from .names import STAR, ast_dotted_name, ast_import_bindings, module_package, module_parts
from .reexports import star_imported
from .rule import FileContext

PASSED = "horovod-passed:"
#: The name Horovod's users give the module, and so a parameter that holds it.
CONVENTIONAL = "hvd"
CONVENTIONAL_WHY = "named as Horovod's module is, and used as it"
#: A parameter named ``hvd`` (or an argument: a caller, parsed for nothing), a local assigned;
#: an attribute named so (``model.hvd.rank()``); a star import of Horovod.
_CONVENTIONAL_HOLDER = re.compile(r"[(,][ \t\n]*hvd[ \t]*[,)=:]|^[ \t]*hvd[ \t]*=(?!=)"
                                  r"|\._?(?:hvd|horovod)[ \t]*\.[ \t]*\w"
                                  r"|^[ \t]*from[ \t]+horovod[\w.]*[ \t]+import[ \t(]+\*", re.MULTILINE)
#: A star import of a Horovod module, as a file's text may spell it.
_STAR_IMPORT = re.compile(r"\bfrom[\s\\]+horovod[\w.]*[\s\\]+import[\s(\\]+\*")
#: A star import of a module that is not Horovod's (``from common import *``).
_REPOSITORY_STAR = re.compile(r"^[ \t]*from[ \t]+(?!horovod\b)[\w.]+[ \t]+import[ \t(]*\*", re.MULTILINE)
#: An attribute named as Horovod's module is (``model.hvd``, ``self._hvd``).
_CHAIN_NAME = re.compile(r"^_?(?:hvd|horovod)$")
#: Horovod's API as an attribute of the module (the ones a parameter is taken for).
HOROVOD_PARAMETER_API = frozenset({
    "DistributedOptimizer", "allreduce", "allgather", "broadcast", "broadcast_global_variables",
    "broadcast_variables", "BroadcastGlobalVariablesHook", "rank", "size", "local_rank",
    "local_size", "grouped_allreduce", "alltoall", "init",
    "callbacks.BroadcastGlobalVariablesCallback", "callbacks.MetricAverageCallback",
    "callbacks.LearningRateWarmupCallback", "callbacks.LearningRateScheduleCallback",
})
#: Horovod's module whose members a use names with it (``hvd.callbacks.MetricAverageCallback()``:
#: the member ``callbacks.MetricAverageCallback``), its Keras callbacks'.
SUBMODULE = "callbacks"
#: What holds the Horovod module a use goes through: a parameter, a local name, an attribute
#: of ``self`` a method sets, an attribute of anything named ``hvd``, a module variable of the
#: repository, a star import.
PARAMETER, NAME, ATTRIBUTE, CHAIN, GLOBAL, STARRED = "parameter", "name", "attribute", "chain", "global", "star"
#: A repository module that star-imports Horovod (``horovod-held:<module>.*``) or imports a
#: name from it (``horovod-name:``), imported as a name; a name it imports, imported from it.
MODULE, IMPORTED = "module", "imported"
#: How a message names each holder, and where it may hold something else.
HOLDERS = {PARAMETER: ("parameter", "in some call"),
           NAME: ("name", "(what is assigned to it is not known here)"),
           ATTRIBUTE: ("attribute", "(a subclass, or another method, may set it)"),
           CHAIN: ("attribute", "(what is assigned to it is not known here)"),
           GLOBAL: ("module variable", "(its module may set it to another object: migrate that "
                                       "module's Horovod uses with these)"),
           MODULE: ("module", "(a name it defines itself is not Horovod's)"),
           IMPORTED: ("name", "(its module may bind it to something else)")}
#: What a star import of Horovod is told.
STAR_IMPORT = ("from {module} import * binds Horovod's names where npu-codemod does not follow them "
               "(each use of them it finds is reported, never rewritten): import {module} as hvd "
               "and spell hvd.<name> to have them migrated, or migrate them by hand")
#: Why a name of a star import is not rewritten, and how it would be.
STAR_NOT_FOLLOWED = ("not rewritten, as npu-codemod does not follow the names of a star import: "
                     "import {module} as hvd and spell it hvd.{member} to have it migrated")
#: The spelling of a site in the facts' third part: a keyword, or ``#<position>``.
POSITION = "#"
_Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]
#: The nodes whose names are their own scope's.
_SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


@dataclass(frozen=True)
class ParameterUse:
    """``<parameter>.<member>`` (called or not) at ``line``/``column`` (0-based) of the file;
    ``why``: what makes the parameter Horovod's, for the message."""

    line: int
    column: int
    parameter: str
    member: str
    call: str  # "()", "(...)" (a call with arguments) or "" (not called)
    why: str
    holder: str = PARAMETER  # what ``parameter`` is: PARAMETER, NAME, ATTRIBUTE...
    module: str = ""  # STARRED: the Horovod module star-imported
    #: How the file spells the use when not ``<parameter>.<member>`` (``cbs.X``: ``cbs`` a
    #: name bound to Horovod's ``callbacks`` module, the member ``callbacks.X``).
    written: str = ""

    @property
    def spelled(self) -> str:
        """``hvd.rank()``; a star import's name alone: ``rank()``."""
        if self.written:
            return f"{self.written}{self.call}"
        return f"{self.parameter}.{self.member}{self.call}" if self.parameter else f"{self.member}{self.call}"

    @property
    def described(self) -> str:
        """What the use is: ``hvd.rank() is Horovod's rank through the parameter hvd (...)``;
        a star import's: ``rank() is Horovod's rank through from horovod.tensorflow import *
        (line 2)``."""
        if self.holder == STARRED:
            return f"{self.spelled} is Horovod's {self.member} through {self.why}"
        if self.holder == IMPORTED:
            return f"{self.spelled} is Horovod's {self.member} ({self.why})"
        return (f"{self.spelled} is Horovod's {self.member} through the {HOLDERS[self.holder][0]} "
                f"{self.parameter} ({self.why})")

    def noted(self, opt_in: str) -> str:
        """The audit's message while the distributed pack is off (``opt_in`` names it); a star
        import's name is migrated only once it is spelled through the module."""
        if self.holder == STARRED:
            return f"{self.described}: import {self.module} as hvd and spell it hvd.{self.member}, then {opt_in}"
        return f"{self.described}: {opt_in}"

    def message(self, replacement: str) -> str:
        if self.holder == STARRED:
            return f"{self.described}: {replacement}; " + STAR_NOT_FOLLOWED.format(
                module=self.module, member=self.member)
        word, elsewhere = HOLDERS[self.holder]
        return f"{self.described}: {replacement}; not rewritten, as the {word} may hold something else {elsewhere}"


def passed_facts(path: str, index: ModuleIndex, imports: dict[str, str]) -> Iterator[str]:
    """``horovod-passed:<package>|<callee>|<parameter>`` for each call of the file that passes
    a name bound to a Horovod module (``<callee>`` dotted through the file's imports)."""
    horovod = {name for name, target in imports.items() if target in HOROVOD_MODULES}
    if not horovod:
        return
    package = ".".join(module_package(path))
    for call in index.nodes(ast.Call):
        callee = ast_dotted_name(call.func)
        head, _, rest = (callee or "").partition(".")
        target = imports.get(head)
        if target is None or target.split(".")[0] == "horovod":
            continue
        qualified = f"{target}.{rest}" if rest else target
        given = [(f"{POSITION}{position}", value) for position, value in enumerate(call.args)]
        given += [(keyword.arg, keyword.value) for keyword in call.keywords if keyword.arg]
        for parameter, value in given:
            if isinstance(value, ast.Name) and value.id in horovod:
                yield f"{PASSED}{package}|{qualified}|{parameter}"


def parameter_uses(ctx: FileContext, members: AbstractSet[str]) -> list[ParameterUse]:
    """The uses of :data:`HOROVOD_PARAMETER_API` names ``members`` through Horovod's parameters of the file's
    functions, and its other holders (see the module's doc); not through a name the file binds
    to Horovod itself: the rules see those."""
    own = ".".join(module_parts(ctx.path))
    passed = _passed_here(ctx.facts, own) if _passed(ctx.facts) else {}
    held = [name for name in held_names(ctx.facts) if _spelled_part(name) in ctx.original]
    named = {name: member for name, member in horovod_names(ctx.facts).items()
             if _may_import(name, own, ctx.original)}
    starred = _passes_horovod(ctx)
    if not passed and not held and not named and not starred and CONVENTIONAL not in ctx.original \
            and "horovod" not in ctx.original:
        return []  # no parameter, name or attribute can hold Horovod: the file is not parsed
    bindings = ctx.names("horovod").bindings
    modules = {name for name, target in bindings.items() if target in HOROVOD_MODULES}
    if not passed and not held and not named and not starred and not _may_hold(ctx.original, modules):
        return []
    tree = module_ast(ctx.original)
    if tree is None:
        return []
    index, bound = module_index(tree), set(bindings)
    found: dict[tuple[int, int], ParameterUse] = {}  # a nested function's walked twice
    scoped = _in_submodule(index, _scoped_uses(index, passed, bound, modules))
    found.update(((use.line, use.column), use) for use in scoped if use.member in members)
    stars = ctx.facts if starred else frozenset()
    for use in unfollowed_uses(index, ctx.path, frozenset(held), bound, named, stars):  # a surer holder's first
        if use.member in members:
            found.setdefault((use.line, use.column), use)
    return [found[position] for position in sorted(found)]


def _scoped_uses(index: ModuleIndex, passed: dict[str, set[str]], bound: AbstractSet[str],
                 modules: AbstractSet[str]) -> Iterator[ParameterUse]:
    """The uses through the parameters and locals of the file's functions, and through the
    attributes of ``self`` its classes set to the Horovod module (``modules``: its names)."""
    for function in index.nodes(ast.FunctionDef, ast.AsyncFunctionDef):
        assert isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
        holders = [*_horovod_parameters(function, passed), *_conventional_locals(function)]
        for parameter, why, holder in holders:
            if parameter not in bound:
                yield from _uses(function, parameter, why, holder)
    for klass in index.nodes(ast.ClassDef):
        assert isinstance(klass, ast.ClassDef)
        yield from _attribute_uses(klass, modules, passed)


def unfollowed_uses(index: ModuleIndex, path: str, held: AbstractSet[str] = frozenset(),
                    bound: AbstractSet[str] = frozenset(),
                    named: Mapping[str, str] = {},  # noqa: B006 (read only)
                    facts: FrozenSet[str] = frozenset()) -> Iterator[ParameterUse]:
    """The uses through a repository module's variable (``held``) or a name it imports from
    Horovod (``named``: ``horovod_holders``), an attribute named as Horovod's module is, a star
    import of Horovod, one of a repository module that passes Horovod's names on (the
    repository's ``facts``: ``horovod_stars``); not through a name of ``bound`` (the file's
    Horovod names: the rules read those). Every member, Horovod's API or not."""
    calls = _call_spellings(index.nodes(ast.Call))
    if held:
        yield from _in_submodule(index, _held_uses(index, path, held, bound, calls))
    if facts:
        yield from _in_submodule(index, _star_held_uses(index, path, facts, calls))
    if named:
        yield from _in_submodule(index, _named_uses(index, path, named, bound, calls))
    yield from _in_submodule(index, _chain_uses(index, bound, calls))
    yield from _in_submodule(index, _star_uses(index, path, calls))


def _in_submodule(index: ModuleIndex, found: Iterable[ParameterUse]) -> Iterator[ParameterUse]:
    """``found``, a use of :data:`SUBMODULE` named with its member (``hvd.callbacks.X(0)``: the
    member ``callbacks.X``, called ``(...)``), as the rules name Horovod's Keras callbacks."""
    members: Optional[dict[tuple[int, int], tuple[str, str]]] = None
    for use in found:
        if use.member == SUBMODULE:
            members = _submodule_members(index) if members is None else members
            named = members.get((use.line, use.column))
            if named is not None:
                use = replace(use, member=named[0], call=named[1])
        yield use


def _call_spellings(calls: Iterable[ast.AST]) -> dict[int, str]:
    """id of each call's callee -> how it is called: "(...)" with arguments, else "()"."""
    return {id(node.func): "(...)" if node.args or node.keywords else "()"
            for node in calls if isinstance(node, ast.Call)}


def _submodule_members(index: ModuleIndex) -> dict[tuple[int, int], tuple[str, str]]:
    """(line, column) of each ``<...>.callbacks.<name>`` (``callbacks.<name>`` too) -> the
    member ``callbacks.<name>`` and how it is called ("", "()" or "(...)")."""
    calls = _call_spellings(index.nodes(ast.Call))
    found = {}
    for node in index.nodes(ast.Attribute):
        base = node.value
        if isinstance(base, ast.Attribute) and base.attr == SUBMODULE or _is_name(base, SUBMODULE):
            found[(node.lineno, node.col_offset)] = (f"{SUBMODULE}.{node.attr}", calls.get(id(node), ""))
    return found


def _held_uses(index: ModuleIndex, path: str, held: AbstractSet[str], bound: AbstractSet[str],
               calls: dict[int, str]) -> Iterator[ParameterUse]:
    """``<imported name>[.<dotted>].<member>`` where the imported name, followed by the dotted
    part, is a module variable of the repository that holds Horovod (``horovod_holders``):
    ``hvd.hvd_global_object.allreduce(...)`` after ``from utils import hvd_wrapper as hvd``;
    or is a module that star-imports Horovod (``hvd.init()`` after ``from utils import
    hvd_utils as hvd``, ``hvd_utils.py`` holding ``from horovod.tensorflow import *``)."""
    imports = index.imported_names(path)
    package = module_package(path)
    for node in index.nodes(ast.Attribute):
        base = ast_dotted_name(node.value) if isinstance(node.ctx, ast.Load) else None
        head, _, rest = (base or "").partition(".")
        target = imports.get(head)
        if target is None or head in bound:
            continue
        full = f"{target}.{rest}" if rest else target
        name = nearest_name(full, package, held)
        if name is not None:
            why = f"{name.rpartition('.')[0]} sets it to the Horovod module"
            yield ParameterUse(node.lineno, node.col_offset, str(base), node.attr, calls.get(id(node), ""), why, GLOBAL)
            continue
        module = nearest_name(f"{full}.{STAR}", package, held)
        if module is not None:
            why = f"{module[:-2]} passes on Horovod's names with a star import"
            yield ParameterUse(node.lineno, node.col_offset, str(base), node.attr, calls.get(id(node), ""), why, MODULE)


def _star_held_uses(index: ModuleIndex, path: str, facts: FrozenSet[str],
                    calls: dict[int, str]) -> Iterator[ParameterUse]:
    """The names a star import of a repository module binds to Horovod (``horovod_stars``),
    read where the file binds them no other way: ``hvd.<member>`` after ``from common import
    *``, ``common`` setting its variable ``hvd`` to the Horovod module; ``init()`` when
    ``common`` imports ``init`` from Horovod, or star-imports Horovod (or a module that does);
    as ``__all__`` lets them through."""
    passes = star_passes(facts)
    names: dict[str, tuple[Passed, str]] = {}  # name -> (what it is, the star import's module)
    anys: list[tuple[Passed, str]] = []
    for star in index.nodes(ast.ImportFrom):
        assert isinstance(star, ast.ImportFrom)
        for local, module in ast_import_bindings(star, path):
            if local != STAR or module.split(".")[0] in ("horovod", "tensorflow"):
                continue
            for name, passed in passes.passed(module, path).items():
                if name == ANY:
                    anys.append((passed, module))
                else:
                    names.setdefault(name, (passed, module))
    if not names and not anys:
        return
    attributes = {id(node.value): node for node in index.nodes(ast.Attribute) if isinstance(node.value, ast.Name)}
    for read in _free_reads(index.tree, frozenset()):
        found = names.get(read.id) or next(((passed, module) for passed, module in anys if passed.binds(read.id)), None)
        if found is not None:
            yield from _star_held_use(read, attributes.get(id(read)), found[0], found[1], calls)


def _star_held_use(read: ast.Name, attribute: Optional[ast.Attribute], passed: Passed, module: str,
                   calls: dict[int, str]) -> Iterator[ParameterUse]:
    """The use ``read`` of a name the star import of ``module`` binds to Horovod (``passed``)."""
    here = f"from {module} import * binds it here"
    if passed.member == MODULE_HELD:
        if attribute is not None:
            why = f"{passed.owner} sets it to the Horovod module; {here}"
            yield ParameterUse(attribute.lineno, attribute.col_offset, read.id, attribute.attr,
                               calls.get(id(attribute), ""), why, GLOBAL)
        return
    member = read.id if passed.member == ANY else passed.member
    why = (f"{passed.owner} passes on Horovod's names with a star import" if passed.member == ANY
           else f"{passed.owner} imports it from Horovod") + f"; {here}"
    if member == SUBMODULE and attribute is not None:  # ``callbacks.X``
        yield ParameterUse(attribute.lineno, attribute.col_offset, read.id, f"{SUBMODULE}.{attribute.attr}",
                           calls.get(id(attribute), ""), why, IMPORTED, written=f"{read.id}.{attribute.attr}")
    elif member != SUBMODULE:
        yield ParameterUse(read.lineno, read.col_offset, "", member, calls.get(id(read), ""), why, IMPORTED,
                           written=read.id)


def _named_uses(index: ModuleIndex, path: str, named: Mapping[str, str], bound: AbstractSet[str],
                calls: dict[int, str]) -> Iterator[ParameterUse]:
    """The names a module of the repository imports from Horovod (``named``: module-qualified
    name -> Horovod's member), used through it: ``hvd_utils.init()`` after ``from utils import
    hvd_utils``, ``init()`` after ``from utils.hvd_utils import init``."""
    imports = index.imported_names(path)
    package, known = module_package(path), named.keys()
    attributes = {id(node.value): node for node in index.nodes(ast.Attribute)}
    for node in index.nodes(ast.Attribute, ast.Name):
        if not isinstance(getattr(node, "ctx", None), ast.Load):
            continue
        spelled = node.id if isinstance(node, ast.Name) else ast_dotted_name(node)
        if spelled is None:
            continue
        head, _, rest = spelled.partition(".")
        target = imports.get(head) if head not in bound else None
        name = nearest_name(f"{target}.{rest}" if rest else target, package, known) if target else None
        if name is None:
            continue
        assert isinstance(node, (ast.Name, ast.Attribute))
        why = f"{name.rpartition('.')[0]} imports it from Horovod"
        member = attributes.get(id(node)) if named[name] == SUBMODULE and isinstance(node, ast.Name) else None
        if member is not None:  # ``cbs.X`` after ``from utils import cbs``: the member ``callbacks.X``
            yield ParameterUse(member.lineno, member.col_offset, spelled, f"{SUBMODULE}.{member.attr}",
                               calls.get(id(member), ""), why, IMPORTED, written=f"{spelled}.{member.attr}")
            continue
        holder, parameter = (IMPORTED, "") if isinstance(node, ast.Name) else (MODULE, spelled.rpartition(".")[0])
        yield ParameterUse(node.lineno, node.col_offset, parameter, named[name], calls.get(id(node), ""), why, holder)


def _passes_horovod(ctx: FileContext) -> bool:
    """Does a star import of the file bind a name to Horovod (``horovod_stars``)? Read from
    its text: most files are not parsed for it."""
    if _REPOSITORY_STAR.search(ctx.original) is None \
            or not any(fact.startswith((HELD_PREFIX, NAME_PREFIX)) for fact in ctx.facts):
        return False
    passes = star_passes(ctx.facts)
    return any(passes.passed(module, ctx.path) for module in star_imported(ctx.path, ctx.original))


def _may_import(name: str, own: str, text: str) -> bool:
    """May the file (module ``own``, text ``text``) import ``name`` (``<module>.<local>``) from
    another module: does it spell both?"""
    module, _, local = name.rpartition(".")
    return module != own and local in text and module.rpartition(".")[2] in text


def _spelled_part(held: str) -> str:
    """What a file that reaches the holder ``held`` spells: its name, or for a module that
    star-imports Horovod (``utils.hvd_utils.*``), the module's."""
    module, _, name = held.rpartition(".")
    return module.rpartition(".")[2] if name == STAR else name


def _chain_uses(index: ModuleIndex, bound: AbstractSet[str], calls: dict[int, str]) -> Iterator[ParameterUse]:
    """``<anything>.hvd.<member>`` (``model.hvd.rank()``, ``self.model.hvd.size()``): an
    attribute named as Horovod's module is, of whatever object holds it."""
    for node in index.nodes(ast.Attribute):
        base = node.value
        if not isinstance(node.ctx, ast.Load) or not isinstance(base, ast.Attribute) \
                or not _CHAIN_NAME.match(base.attr):
            continue
        spelled = ast_dotted_name(base) or ast.unparse(base)
        if spelled.partition(".")[0] not in bound:
            yield ParameterUse(node.lineno, node.col_offset, spelled, node.attr, calls.get(id(node), ""),
                               CONVENTIONAL_WHY, CHAIN)


def _star_uses(index: ModuleIndex, path: str, calls: dict[int, str]) -> Iterator[ParameterUse]:
    """The names a star import of Horovod may bind, read where the file binds them no other
    way (``rank()`` after ``from horovod.tensorflow import *``, not where a function has its
    own ``rank``)."""
    stars = star_imports_of(index, path)
    if not stars:
        return
    line, _, module = stars[0]
    for node in _free_reads(index.tree, frozenset()):
        yield ParameterUse(node.lineno, node.col_offset, "", node.id, calls.get(id(node), ""),
                           f"from {module} import * (line {line})", STARRED, module)


def _free_reads(scope: ast.AST, visible: frozenset[str]) -> Iterator[ast.Name]:
    """The names read in ``scope`` (the module, a function, class or lambda) that neither it
    binds (by any statement but a star import) nor a scope it sees (``visible``)."""
    own = list(_scope_nodes(scope))
    seen = visible | _bound_in(scope, own)
    for node in own:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in seen:
            yield node
        elif isinstance(node, _SCOPE_NODES):  # a class's names are not seen in its methods
            yield from _free_reads(node, visible if isinstance(scope, ast.ClassDef) else seen)


def _scope_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``scope``'s body, and the scopes in it, not their insides."""
    body = getattr(scope, "body", [])
    stack: list[ast.AST] = list(reversed(body)) if isinstance(body, list) else [body]
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, _SCOPE_NODES):
            stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _bound_in(scope: ast.AST, own: list[ast.AST]) -> frozenset[str]:
    """The names ``scope`` binds: its parameters, and its own nodes' assignments, imports (not
    a star's), ``def``/``class`` statements and ``except ... as`` names."""
    arguments = getattr(scope, "args", None)
    names = {argument.arg for argument in ast.walk(arguments) if isinstance(argument, ast.arg)} \
        if isinstance(arguments, ast.arguments) else set()
    for node in own:
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update(local for local, _ in ast_import_bindings(node) if local != STAR)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return frozenset(names)


def star_imports(ctx: FileContext) -> list[tuple[int, int, str]]:
    """(line, column (0-based), module) of each ``from <Horovod module> import *`` of the file."""
    if "horovod" not in ctx.original or _STAR_IMPORT.search(ctx.original) is None:  # the word: a substring's cost
        return []  # the file is not parsed for it
    tree = module_ast(ctx.original)
    return star_imports_of(module_index(tree), ctx.path) if tree is not None else []


def star_imports_of(index: ModuleIndex, path: str) -> list[tuple[int, int, str]]:
    return [(node.lineno, node.col_offset, module) for node in index.nodes(ast.ImportFrom)
            for name, module in ast_import_bindings(node, path) if name == STAR and module in HOROVOD_MODULES]


def _may_hold(text: str, modules: AbstractSet[str]) -> bool:
    """Whether ``text`` may spell a parameter or a local named ``hvd`` (``def f(x, hvd=None)``,
    ``hvd = model.hvd``), or an attribute of ``self`` set to one of ``modules``: a script that
    only calls its own ``hvd`` (most) is not parsed again."""
    if _CONVENTIONAL_HOLDER.search(text):
        return True
    names = "|".join(re.escape(name) for name in sorted(modules))
    return bool(names) and re.search(rf"\bself\.\w+[ \t]*=[ \t]*(?:{names})\b(?![ \t]*[.(\[])", text) is not None


def _passed(facts: AbstractSet[str]) -> bool:
    return any(fact.startswith(PASSED) for fact in facts)


def _passed_here(facts: AbstractSet[str], own: str) -> dict[str, set[str]]:
    """Function name of the module ``own`` -> the parameters (keywords, ``#<position>``) a
    caller passes Horovod to. A callee is found as its import is (the nearest folder first),
    or by its module's ending."""
    found: dict[str, set[str]] = {}
    for fact in facts:
        if not fact.startswith(PASSED):
            continue
        package, callee, parameter = fact[len(PASSED):].split("|")
        module, _, function = callee.rpartition(".")
        parts = tuple(filter(None, package.split(".")))
        candidates = {".".join((*parts[:depth], module)) for depth in range(len(parts) + 1)}
        if module and (own in candidates or own.endswith("." + module)):
            found.setdefault(function, set()).add(parameter)
    return found


def _horovod_parameters(function: _Function, passed: dict[str, set[str]]) -> Iterator[tuple[str, str, str]]:
    """(parameter, why it is Horovod's, :data:`PARAMETER`) of ``function``."""
    positional = [argument.arg for argument in (*function.args.posonlyargs, *function.args.args)]
    names = positional + [argument.arg for argument in function.args.kwonlyargs]
    given = passed.get(function.name, set())
    for parameter in names:
        position = f"{POSITION}{positional.index(parameter)}" if parameter in positional else ""
        if parameter in given or position in given:
            yield parameter, f"a caller passes the Horovod module to {function.name}()", PARAMETER
        elif parameter == CONVENTIONAL:
            yield parameter, CONVENTIONAL_WHY, PARAMETER


def _conventional_locals(function: _Function) -> Iterator[tuple[str, str, str]]:
    """(``hvd``, why, :data:`NAME`) when ``function`` assigns a local ``hvd`` (not a parameter:
    :func:`_horovod_parameters` has those; an import binds no such name)."""
    arguments = function.args
    parameters = {argument.arg for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
    if CONVENTIONAL in parameters:
        return
    for node in own_nodes(function):
        if isinstance(node, ast.Assign) and any(isinstance(target, ast.Name) and target.id == CONVENTIONAL
                                                for target in node.targets):
            yield CONVENTIONAL, CONVENTIONAL_WHY, NAME
            return


def _attribute_uses(klass: ast.ClassDef, modules: AbstractSet[str],
                    passed: dict[str, set[str]]) -> Iterator[ParameterUse]:
    """The uses of ``self.<attribute>.<member>`` in the methods of ``klass`` when one of them
    sets ``self.<attribute>`` to the Horovod module: a name in ``modules`` (the file's
    bindings of it) or a Horovod parameter of that method."""
    methods = [node for node in klass.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    set_at: dict[str, int] = {}
    for method in methods:
        horovod = set(modules) | {parameter for parameter, _, _ in _horovod_parameters(method, passed)}
        own = _self_name(method)
        for node in own_nodes(method):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in horovod:
                for target in node.targets:
                    if isinstance(target, ast.Attribute) and _is_name(target.value, own):
                        set_at.setdefault(target.attr, node.lineno)
    for method in methods:
        own = _self_name(method)
        for attribute, line in set_at.items():
            why = f"set to the Horovod module on line {line}"
            for use in _uses(method, attribute, why, ATTRIBUTE):
                yield replace(use, parameter=f"{own}.{attribute}")


def _self_name(method: _Function) -> str:
    positional = [*method.args.posonlyargs, *method.args.args]
    return positional[0].arg if positional else ""


def _is_name(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _uses(function: _Function, parameter: str, why: str, holder: str) -> Iterator[ParameterUse]:
    """``<parameter>.<member>`` in ``function``; for an :data:`ATTRIBUTE` holder,
    ``<self>.<parameter>.<member>``."""
    own = _self_name(function)
    calls = _call_spellings(node for node in ast.walk(function) if isinstance(node, ast.Call))
    for node in ast.walk(function):
        if not isinstance(node, ast.Attribute) or not isinstance(node.ctx, ast.Load):
            continue
        base = node.value
        if holder == ATTRIBUTE:
            held = isinstance(base, ast.Attribute) and base.attr == parameter and _is_name(base.value, own)
        else:
            held = _is_name(base, parameter)
        if held:
            yield ParameterUse(node.lineno, node.col_offset, parameter, node.attr,
                               calls.get(id(node), ""), why, holder)
