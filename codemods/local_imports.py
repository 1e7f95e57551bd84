"""The imports rules ask for, in a file that imports TensorFlow only inside functions.

A cluster launcher (TensorFlowOnSpark's ``TFCluster.run(sc, main_fun, ...)``, Ray, a
``multiprocessing`` pool) ships a function to the processes that train, and a script written
for it imports TensorFlow inside that function only (``codemods/function_tf``): the module's
top runs in the launching process too (a Spark driver), which may have no ``npu_bridge``, and a
library module's top runs on its TF 2.x path as well. There the imports the rewrites need go
into the function that holds the rewritten code, right after its own first TensorFlow import
(code above it, such as ``os.environ`` settings TensorFlow reads, keeps running first), with
the names that function uses: ``from npu_bridge.npu_init import *`` becomes ``from
npu_bridge.npu_init import npu_run_config_init, npu_hooks_append`` (a star import cannot stand
in a function), or ``import npu_bridge.npu_init`` where no name is used (the import loads the
adapter, which the ``NpuOptimizer`` of a session config needs).

Only when that is exact, for every import the file needs: each use of an imported name lies in
a function (or a function nested in it, which reads it as a closure) whose body starts its
TensorFlow imports with a plain statement, and the file binds none of those names itself.
Otherwise (a use at module level or in a function without TensorFlow import, a TensorFlow
import under ``if``/``try`` in the function, a name the file binds) every import stays at the
module's top, as in any other file, and :attr:`Localized.problem` says why: NPU001 reports it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Iterator, Optional

from fissix import pytree
from fissix.pgen2 import token
from fissix.pygram import python_symbols as syms

from .edits import insert_after
from .findings import rewrite_instruction
from .function_tf import Function, is_tf_module, tf_import_functions
from .imports import NPU_INIT_IMPORT, normalized, place_imports
from .modules import module_ast
from .names import NPU_INIT_NAMES
from .nodes import block_statements, compound_body, is_inside
from .rule import FileContext

NPU_INIT = "npu_bridge.npu_init"
#: What a function that uses no name of ``npu_bridge.npu_init`` imports: the adapter itself.
PLAIN_NPU_INIT = f"import {NPU_INIT}"
_IMPORTS = (syms.import_name, syms.import_from)
#: A TensorFlow import at the start of a line (module level), or indented (maybe in a function).
_TOP_TF = re.compile(r"^(?:import|from)[ \t]+tensorflow\b(?!\.core\.protobuf\.rewriter_config_pb2)", re.MULTILINE)
_INDENTED_TF = re.compile(r"^[ \t]+(?:import|from)[ \t]+tensorflow\b", re.MULTILINE)
_REWRITER_CONFIG = ast.dump(ast.parse(
    "from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig").body[0])


@dataclass(frozen=True)
class Placed:
    """The imports put into one function, and where its TensorFlow import was written."""

    function: str
    line: int
    column: int
    statements: tuple[str, ...]


@dataclass(frozen=True)
class Localized:
    """What :func:`localize_imports` did: the imports it put into functions, or (``problem``)
    why the file's imports stay at the module's top although it imports TensorFlow only
    inside functions ("" when that is not so, or nothing was asked for)."""

    placed: tuple[Placed, ...] = ()
    problem: str = ""


@dataclass
class _Host:
    """A function that gets imports: its ``funcdef``, its ``ast``, the names used in it."""

    node: pytree.Node
    function: Function
    names: set[str]


def localize_imports(tree: pytree.Node, ctx: FileContext) -> Localized:
    """Put the imports asked for (``ctx.imports``) into the functions that use them when the
    file imports TensorFlow only inside functions and that is exact (see the module's text);
    the imports placed leave ``ctx.imports``, the others stay for the module's top."""
    module = module_ast(ctx.original) if ctx.imports and tf_imported_in_functions_only(ctx) else None
    functions = _tf_functions(module) if module is not None else None
    if module is None or functions is None:
        return Localized()
    outer = {function.lineno: function for function in _outer_functions(module)}
    importing = {function.lineno for function, _ in functions}
    exports = {statement: _bound_names(statement) for statement in ctx.imports}
    hosts, problem = _hosts(tree, ctx, outer, exports)
    problem = problem or _host_problem(module, hosts, importing, list(exports))
    if problem or not hosts:
        return Localized(problem=problem or "no function holds the rewritten code")
    placed = tuple(_place(host, exports, ctx.newline) for host in sorted(hosts.values(), key=_line))
    ctx.imports.clear()
    return Localized(tuple(item for item in placed if item.statements))


def tf_imported_in_functions_only(ctx: FileContext) -> bool:
    """Does the file import TensorFlow, and only inside functions (``function_tf``)?"""
    return ctx.analysis(_in_functions_only)


def _in_functions_only(ctx: FileContext) -> bool:
    text = ctx.original
    if not _INDENTED_TF.search(text) or _TOP_TF.search(text):
        return False  # no TensorFlow import in a block, or one at the module's top: no parse
    module = module_ast(text)
    return module is not None and _tf_functions(module) is not None


def _tf_functions(module: ast.Module) -> Optional[list[tuple[Function, ast.stmt]]]:
    """``tf_import_functions``, but for the one TensorFlow import the rules put at the module's
    top beside ``npu_bridge.npu_init`` (NPU007's ``RewriterConfig``): a file an earlier run
    left so still imports TensorFlow in functions only."""
    body = [statement for statement in module.body if ast.dump(statement) != _REWRITER_CONFIG]
    return tf_import_functions(module if len(body) == len(module.body) else ast.Module(body, []))


def place_asked_imports(tree: pytree.Node, ctx: FileContext) -> None:
    """Place the imports the rules asked for once they are done: in functions
    (:func:`localize_imports`), the others at the module's top (``imports.place_imports``)."""
    localize_imports(tree, ctx)
    place_imports(tree, ctx.imports, ctx.newline)


def _host_problem(module: ast.Module, hosts: dict[int, _Host], importing: set[int], asked: list[str]) -> str:
    """Why the imports cannot go into ``hosts`` (functions that hold no plain TensorFlow
    import, names the file binds itself), or ""."""
    for host in sorted(hosts.values(), key=_line):
        if host.function.lineno not in importing or _tf_import(host) is None:
            return f"{host.function.name}() holds rewritten code but no plain TensorFlow import"
    taken = _own_bindings(module, set().union(*(host.names for host in hosts.values())), asked)
    return f"the file binds {', '.join(sorted(taken))} itself" if taken else ""


def npu_init_imports(tree: pytree.Node) -> list[tuple[pytree.Base, str]]:
    """The first import of ``npu_bridge.npu_init`` in the body of each function that has one
    (an earlier run's :func:`localize_imports`), with the function's name."""
    found = []
    for function in _outer_defs(tree):
        for statement in block_statements(compound_body(function)):
            small = statement.children[0] if statement.type == syms.simple_stmt else statement
            if small.type in _IMPORTS and _imports_npu_init(small):
                found.append((statement, str(function.children[1].value)))
                break
    return found


def _imports_npu_init(node: pytree.Base) -> bool:
    text = normalized(node)
    return text == "import" + NPU_INIT or text.startswith(f"from{NPU_INIT}import")


def _line(host: _Host) -> int:
    return host.function.lineno


def _hosts(tree: pytree.Node, ctx: FileContext, outer: dict[int, Function],
           exports: dict[str, Optional[frozenset[str]]]) -> tuple[dict[int, _Host], str]:
    """The functions that get imports, by line, and the first reason not to place any."""
    if any(names is None for names in exports.values()):
        return {}, "an import cannot be placed in a function (" + \
            ", ".join(s for s, names in exports.items() if names is None) + ")"
    wanted = set().union(*(names for names in exports.values() if names is not None))
    nodes = {_def_line(node): node for node in _outer_defs(tree)}
    hosts: dict[int, _Host] = {}
    for leaf in _references(tree, wanted):
        node = _outermost_def(leaf)  # its parameters' defaults and decorators run outside it
        function = outer.get(_def_line(node)) if node is not None else None
        if node is None or function is None or not is_inside(leaf, compound_body(node)):
            return {}, f"{leaf.value} is used outside functions (line {leaf.lineno})"
        hosts.setdefault(function.lineno, _Host(node, function, set())).names.add(leaf.value)
    rewritten = {f.line for f in ctx.findings if f.path == ctx.path and rewrite_instruction(f)}
    for line, function in outer.items():
        end = function.end_lineno or line
        if line not in hosts and any(line <= at <= end for at in rewritten) and line in nodes:
            hosts[line] = _Host(nodes[line], function, set())
    return hosts, ""


def _place(host: _Host, exports: dict[str, Optional[frozenset[str]]], newline: str) -> Placed:
    """Insert the imports ``host`` needs after its first TensorFlow import."""
    anchor = _tf_import(host)
    assert anchor is not None  # checked by the caller
    body = [stmt for stmt in host.function.body if isinstance(stmt, (ast.Import, ast.ImportFrom))]
    present = {ast.dump(stmt) for stmt in body}
    loaded = {alias.asname or alias.name for stmt in body if isinstance(stmt, ast.ImportFrom)
              and stmt.module == NPU_INIT for alias in stmt.names}  # an earlier run's
    host.names -= loaded
    statements = [code for code in _statements(host, exports) if ast.dump(ast.parse(code).body[0]) not in present
                  and not (code == PLAIN_NPU_INIT and loaded)]
    if statements:
        insert_after(anchor, "\n".join(statements) + "\n", newline)
    first = _first_tf_import(host.function)
    assert first is not None
    return Placed(host.function.name, first.lineno, first.col_offset, tuple(statements))


def _statements(host: _Host, exports: dict[str, Optional[frozenset[str]]]) -> Iterator[str]:
    """The imports of ``exports`` that ``host`` needs, star imports first."""
    ordered = sorted(exports, key=lambda statement: not statement.rstrip().endswith("*"))
    for statement in ordered:
        used = sorted(host.names & (exports[statement] or frozenset()))
        if statement == NPU_INIT_IMPORT:
            yield f"from {NPU_INIT} import {', '.join(used)}" if used else PLAIN_NPU_INIT
        elif used:
            yield statement


def _tf_import(host: _Host) -> Optional[pytree.Base]:
    """The ``funcdef``'s statement of its first TensorFlow import, when that import is a
    statement of the function's body itself (not under ``if``/``try``/``with``)."""
    first = _first_tf_import(host.function)
    if first is None or first not in host.function.body:
        return None
    body = compound_body(host.node)
    if body.type != syms.suite:
        return None
    return next((stmt for stmt in block_statements(body) if _line_of(stmt) == first.lineno), None)


def _first_tf_import(function: Function) -> Optional[ast.stmt]:
    """The function's first TensorFlow import in the file's order, at any depth."""
    found = [node for node in ast.walk(function) if isinstance(node, ast.stmt) and _is_tf_import(node)]
    return min(found, key=lambda node: (node.lineno, node.col_offset)) if found else None


def _is_tf_import(node: ast.AST) -> bool:
    if isinstance(node, ast.Import):
        return any(is_tf_module(alias.name) for alias in node.names)
    return isinstance(node, ast.ImportFrom) and not node.level and is_tf_module(node.module)


def _bound_names(statement: str) -> Optional[frozenset[str]]:
    """The names ``statement`` (an import) binds; None for one no function can hold."""
    if statement == NPU_INIT_IMPORT:
        return NPU_INIT_NAMES
    try:
        parsed = ast.parse(statement).body
    except SyntaxError:
        return None
    if len(parsed) != 1 or not isinstance(parsed[0], (ast.Import, ast.ImportFrom)):
        return None
    aliases = parsed[0].names
    if any(alias.name == "*" for alias in aliases):
        return None
    if isinstance(parsed[0], ast.Import):
        return frozenset(alias.asname or alias.name.split(".")[0] for alias in aliases)
    return frozenset(alias.asname or alias.name for alias in aliases)


def _own_bindings(module: ast.Module, names: set[str], asked: list[str]) -> set[str]:
    """Which of ``names`` the file binds itself, but for imports from ``npu_bridge`` (an
    earlier run's) and the import statements ``asked`` for again."""
    again = {ast.dump(ast.parse(statement).body[0]) for statement in asked if statement != NPU_INIT_IMPORT}
    taken: set[str] = set()
    for node in ast.walk(module):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("npu_bridge") \
                    or ast.dump(node) in again:
                continue
            bound = {alias.asname or alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound = {node.name}
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound = {node.id}
        elif isinstance(node, ast.arg):
            bound = {node.arg}
        else:
            continue
        taken |= bound & names
    return taken


def _outer_functions(module: ast.Module) -> Iterator[Function]:
    """The functions no other function holds (module-level ones and methods)."""
    stack: list[ast.AST] = [module]
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield child
            else:
                stack.append(child)


def _outer_defs(tree: pytree.Base) -> Iterator[pytree.Node]:
    """The ``funcdef`` nodes no other ``funcdef`` holds."""
    for child in tree.children:
        if child.type == syms.funcdef:
            assert isinstance(child, pytree.Node)
            yield child
        elif isinstance(child, pytree.Node):
            yield from _outer_defs(child)


def _outermost_def(leaf: pytree.Base) -> Optional[pytree.Node]:
    found = None
    node = leaf.parent
    while node is not None:
        if node.type == syms.funcdef:
            found = node
        node = node.parent
    return found


def _def_line(node: pytree.Node) -> int:
    """The line of the ``def`` (``async def``) as written: ``ast``'s line of the function."""
    parent = node.parent
    first = parent if parent is not None and parent.type in (syms.async_funcdef, syms.async_stmt) else node
    return _line_of(first)


def _line_of(node: pytree.Base) -> int:
    leaf = next(node.leaves())
    return int(leaf.lineno)


def _references(tree: pytree.Base, names: set[str]) -> Iterator[pytree.Leaf]:
    """The leaves that read one of ``names`` (not attributes, keywords or imports)."""
    for leaf in tree.leaves():
        if leaf.type != token.NAME or leaf.value not in names:
            continue
        before, parent = leaf.prev_sibling, leaf.parent
        if before is not None and before.type == token.DOT:
            continue
        if parent is not None and parent.type == syms.argument and leaf.next_sibling is not None \
                and leaf.next_sibling.type == token.EQUAL:
            continue
        if any(node.type in _IMPORTS for node in _ancestors(leaf)):
            continue
        yield leaf


def _ancestors(leaf: pytree.Base) -> Iterator[pytree.Base]:
    node = leaf.parent
    while node is not None and node.type not in (syms.file_input, syms.suite):
        yield node
        node = node.parent
