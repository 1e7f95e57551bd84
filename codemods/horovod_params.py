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
wrapper module imported as ``hvd``): reported, not rewritten.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, replace
from typing import AbstractSet, Iterator, Union

from .horovod_holders import HOROVOD_MODULES, held_names
from .modules import ModuleIndex, module_ast, module_index, nearest_name, own_nodes
from .names import ast_dotted_name, module_package, module_parts
from .rule import FileContext

PASSED = "horovod-passed:"
#: The name Horovod's users give the module, and so a parameter that holds it.
CONVENTIONAL = "hvd"
CONVENTIONAL_WHY = "named as Horovod's module is, and used as it"
#: A parameter named ``hvd`` (or an argument: a caller, parsed for nothing), a local assigned.
_CONVENTIONAL_HOLDER = re.compile(r"[(,][ \t\n]*hvd[ \t]*[,)=:]|^[ \t]*hvd[ \t]*=(?!=)", re.MULTILINE)
#: Horovod's API as an attribute of the module (the ones a parameter is taken for).
HOROVOD_PARAMETER_API = frozenset({
    "DistributedOptimizer", "allreduce", "allgather", "broadcast", "broadcast_global_variables",
    "broadcast_variables", "BroadcastGlobalVariablesHook", "rank", "size", "local_rank",
    "local_size", "grouped_allreduce", "alltoall",
})
#: What holds the Horovod module a use goes through: a parameter, a local name, an attribute
#: of ``self`` a method sets, a module variable of the repository.
PARAMETER, NAME, ATTRIBUTE, GLOBAL = "parameter", "name", "attribute", "global"
#: How a message names each holder, and where it may hold something else.
HOLDERS = {PARAMETER: ("parameter", "in some call"),
           NAME: ("name", "(what is assigned to it is not known here)"),
           ATTRIBUTE: ("attribute", "(a subclass, or another method, may set it)"),
           GLOBAL: ("module variable", "(its module may set it to another object: migrate that "
                                       "module's Horovod uses with these)")}
#: The spelling of a site in the facts' third part: a keyword, or ``#<position>``.
POSITION = "#"
_Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]


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
    holder: str = PARAMETER  # what ``parameter`` is: PARAMETER, NAME, ATTRIBUTE or GLOBAL

    @property
    def spelled(self) -> str:
        return f"{self.parameter}.{self.member}{self.call}"

    @property
    def described(self) -> str:
        """What the use is: ``hvd.rank() is Horovod's rank through the parameter hvd (...)``."""
        return (f"{self.spelled} is Horovod's {self.member} through the {HOLDERS[self.holder][0]} "
                f"{self.parameter} ({self.why})")

    def message(self, replacement: str) -> str:
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
    held = [name for name in held_names(ctx.facts) if name.rpartition(".")[2] in ctx.original]
    if not passed and not held and CONVENTIONAL not in ctx.original and "horovod" not in ctx.original:
        return []  # no parameter, name or attribute can hold Horovod: the file is not parsed
    bindings = ctx.names("horovod").bindings
    modules = {name for name, target in bindings.items() if target in HOROVOD_MODULES}
    if not passed and not held and not _may_hold(ctx.original, modules):
        return []
    tree = module_ast(ctx.original)
    if tree is None:
        return []
    index, bound = module_index(tree), set(bindings)
    found: dict[tuple[int, int], ParameterUse] = {}  # a nested function's walked twice
    found.update(((use.line, use.column), use) for use in _scoped_uses(index, passed, bound, modules)
                 if use.member in members)
    for use in _unscoped_uses(index, ctx.path, frozenset(held), bound):  # a surer holder's first
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


def _unscoped_uses(index: ModuleIndex, path: str, held: AbstractSet[str],
                   bound: AbstractSet[str]) -> Iterator[ParameterUse]:
    """The uses through a repository module's variable (``held``)."""
    calls = {id(node.func): "(...)" if node.args or node.keywords else "()" for node in index.nodes(ast.Call)}
    if held:
        yield from _held_uses(index, path, held, bound, calls)


def _held_uses(index: ModuleIndex, path: str, held: AbstractSet[str], bound: AbstractSet[str],
               calls: dict[int, str]) -> Iterator[ParameterUse]:
    """``<imported name>[.<dotted>].<member>`` where the imported name, followed by the dotted
    part, is a module variable of the repository that holds Horovod (``horovod_holders``):
    ``hvd.hvd_global_object.allreduce(...)`` after ``from utils import hvd_wrapper as hvd``."""
    imports = index.imported_names(path)
    package = module_package(path)
    for node in index.nodes(ast.Attribute):
        base = ast_dotted_name(node.value) if isinstance(node.ctx, ast.Load) else None
        head, _, rest = (base or "").partition(".")
        target = imports.get(head)
        if target is None or head in bound:
            continue
        name = nearest_name(f"{target}.{rest}" if rest else target, package, held)
        if name is not None:
            why = f"{name.rpartition('.')[0]} sets it to the Horovod module"
            yield ParameterUse(node.lineno, node.col_offset, str(base), node.attr, calls.get(id(node), ""), why, GLOBAL)


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
    calls = {id(node.func): "(...)" if node.args or node.keywords else "()"
             for node in ast.walk(function) if isinstance(node, ast.Call)}
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
