"""Horovod reached through a parameter: ``create_optimizer(loss, lr, hvd=hvd)`` passes the module
to a file that does not import it, whose ``hvd.DistributedOptimizer(opt)`` and
``hvd.allreduce(x)`` are Horovod's all the same (NVIDIA's BERT). The spec's NPU025 line "every
other ``hvd.*`` use is reported" and NPU023's line hold for them too: each is reported
``unmigrated`` with its replacement, never rewritten (the value is not known to be Horovod in
every call: a caller may pass ``None`` or another module).

A parameter is Horovod's when a caller of the repository passes the Horovod module to it
(``horovod-passed:`` facts, gathered with ``ast`` by :func:`passed_facts`), or when it is named
``hvd``. Only its attribute uses that are Horovod's API (:data:`API`) are reported: what
another object of that name does is no Horovod use.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import AbstractSet, Iterator, Union

from npu_codemod.api import FileContext
from npu_codemod.api._toolkit import (
    HOROVOD_MODULES,
    ModuleIndex,
    ast_dotted_name,
    module_ast,
    module_index,
    module_package,
    module_parts,
)

PASSED = "horovod-passed:"
#: The name Horovod's users give the module, and so a parameter that holds it.
CONVENTIONAL = "hvd"
#: Horovod's API as an attribute of the module (the ones a parameter is taken for).
API = frozenset({
    "DistributedOptimizer", "allreduce", "allgather", "broadcast", "broadcast_global_variables",
    "broadcast_variables", "BroadcastGlobalVariablesHook", "rank", "size", "local_rank",
    "local_size", "grouped_allreduce", "alltoall",
})
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

    @property
    def spelled(self) -> str:
        return f"{self.parameter}.{self.member}{self.call}"

    def message(self, replacement: str) -> str:
        return (f"{self.spelled} is Horovod's {self.member} through the parameter "
                f"{self.parameter} ({self.why}): {replacement}; not rewritten, as the "
                f"parameter may hold something else in some call")


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
    """The uses of :data:`API` names ``members`` through Horovod's parameters of the file's
    functions (not a name the file binds to Horovod itself: the rules see those)."""
    tree = module_ast(ctx.original)
    if tree is None or CONVENTIONAL not in ctx.original and not _passed(ctx.facts):
        return []
    own = ".".join(module_parts(ctx.path))
    passed = _passed_here(ctx.facts, own)
    bound = set(ctx.names("horovod").bindings)
    found: dict[tuple[int, int], ParameterUse] = {}  # a nested function's walked twice
    for function in module_index(tree).nodes(ast.FunctionDef, ast.AsyncFunctionDef):
        assert isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
        for parameter, why in _horovod_parameters(function, passed):
            if parameter not in bound:
                found.update(((use.line, use.column), use) for use in _uses(function, parameter, why)
                             if use.member in members)
    return [found[position] for position in sorted(found)]


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


def _horovod_parameters(function: _Function, passed: dict[str, set[str]]) -> Iterator[tuple[str, str]]:
    """(parameter, why it is Horovod's) of ``function``."""
    positional = [argument.arg for argument in (*function.args.posonlyargs, *function.args.args)]
    names = positional + [argument.arg for argument in function.args.kwonlyargs]
    given = passed.get(function.name, set())
    for parameter in names:
        position = f"{POSITION}{positional.index(parameter)}" if parameter in positional else ""
        if parameter in given or position in given:
            yield parameter, f"a caller passes the Horovod module to {function.name}()"
        elif parameter == CONVENTIONAL:
            yield parameter, "named as Horovod's module is, and used as it"


def _uses(function: _Function, parameter: str, why: str) -> Iterator[ParameterUse]:
    calls = {id(node.func): "(...)" if node.args or node.keywords else "()"
             for node in ast.walk(function) if isinstance(node, ast.Call)}
    for node in ast.walk(function):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id == parameter and isinstance(node.ctx, ast.Load):
            yield ParameterUse(node.lineno, node.col_offset, parameter, node.attr,
                               calls.get(id(node), ""), why)
