"""Does a dataset's structure build an iterator that another dataset also feeds? (NPU002)

A reinitializable iterator is made from one dataset's types and shapes
(``tf.data.Iterator.from_structure(train.output_types, train.output_shapes)``, also
``tf.compat.v1.data.get_output_shapes(train)`` or ``train.element_spec``), then initialised
with several datasets (``it.make_initializer(train)``, ``it.make_initializer(test)``). Once
``train`` is batched with ``drop_remainder=True`` its batch dimension is static, so is the
iterator's, and the first smaller last batch of ``test`` fails at run time ("Incompatible
shapes ... expected [32,4] but got [26,4]"). Such a batch is reported, never rewritten, unless
the iterator is shown to be initialised with that dataset only.

Seen in the file (the iterator is built in the scope where the dataset's name lives, or, for an
attribute such as ``self.train_data``, in the same top-level definition, which the selective
engine parses as one) and, through the ``npu002-use:...|iterator`` facts of
:mod:`._pipeline_uses`, in another module that builds such an iterator from what a function of
this one returns (``train, test = data.get_dataset(n)``), or from an attribute of the
instances of a class of this one (``tr = Gen(...)``, ``from_structure(tr.data.output_types,
...)``, ``make_initializer(te.data)``) whose method keeps the batch in ``self.data``.
"""

from __future__ import annotations

import ast
from typing import Iterable, Iterator, Optional, Sequence

from npu_codemod.api import Base, FileContext, Node, arguments, dotted_name, symbols, tokens
from npu_codemod.api._toolkit import ast_dotted_name as ast_dotted
from npu_codemod.api._toolkit import (
    attribute_name,
    child_fields,
    enclosing_scope,
    is_call_trailer,
    memo,
    node_pre_order,
    spelled_name,
)

from ._datasets import Remote, _key

#: Iterator constructors whose types and shapes come from a dataset.
BUILDERS = frozenset({"from_structure", "from_string_handle"})
#: ``ds.<attribute>`` and ``tf.compat.v1.data.<function>(ds)`` that give a dataset's structure.
STRUCTURE_ATTRIBUTES = frozenset({"output_types", "output_shapes", "output_classes", "element_spec"})
STRUCTURE_FUNCTIONS = frozenset({"get_output_types", "get_output_shapes", "get_output_classes",
                                 "get_structure"})
#: The verdict of an ``npu002-use:`` fact: the function's results build such an iterator.
ITERATOR = "iterator"
WHY = ("shared by training and evaluation through one iterator ({how}): with "
       "drop_remainder=True the iterator's batch dimension becomes static and the other "
       "dataset's last, smaller batch is rejected at run time; add drop_remainder=True to every "
       "dataset that initialises the iterator, or pad their last batches to batch_size (NPU003)")
_BUILT = "npu002.iterators"


def shared_iterator(site: Base, parts: Sequence[Base], ctx: FileContext,
                    remote: Remote) -> Optional[str]:
    """Why batching at ``site`` (the dataset spelled by power children ``parts``) with
    drop_remainder=True would break an iterator that another dataset also initialises, or
    None."""
    names = _dataset_names(site, parts)
    scope = enclosing_scope(site)
    for builder, structure in _iterators(ctx):
        for name in names & set(structure):
            if _same_variable(name, scope, builder, ctx):
                how = _not_training_only(builder, structure[name], name, ctx)
                if how:
                    return WHY.format(how=how)
    return _returned_to_iterator(site, names, remote) or _kept_for_iterator(site, names, remote)


def _dataset_names(site: Base, parts: Sequence[Base]) -> set[str]:
    """The names the batched dataset goes by: those its statement assigns it to, and the
    name it is read from (``dataset.batch(n)``)."""
    statement = site
    while statement.parent is not None and statement.parent.type != symbols.simple_stmt:
        statement = statement.parent
    names = {dotted_name(target) for target in statement.children[:-1:2]} \
        if statement.type == symbols.expr_stmt else set()
    if parts and parts[0].type == tokens.NAME:
        names.add(spelled_name(parts[:1]))
    names.discard(None)
    return names  # type: ignore[return-value]


def _iterators(ctx: FileContext) -> list[tuple[Node, dict[str, Base]]]:
    """Each iterator constructor call of the file (its ``(...)`` trailer) and the datasets
    whose structure it takes: dotted name -> the node that reads it."""
    if _BUILT not in memo(ctx):
        memo(ctx)[_BUILT] = [(call, structure) for call in _builder_calls(ctx.tree)
                             if (structure := _structures(call))]
    return memo(ctx)[_BUILT]


def _builder_calls(tree: Node) -> Iterator[Node]:
    for node in node_pre_order(tree):
        if node.type == symbols.trailer and attribute_name(node) in BUILDERS \
                and is_call_trailer(node.next_sibling):
            yield node.next_sibling


def _structures(call: Node) -> dict[str, Base]:
    """Dotted name -> read, of each dataset whose structure the arguments of ``call`` take."""
    found: dict[str, Base] = {}
    for argument in arguments(call):
        for power in (node for node in node_pre_order(argument.value) if node.type == symbols.power):
            children = power.children
            for index in range(1, len(children)):
                attribute = attribute_name(children[index])
                name = spelled_name(children[:index])
                if attribute in STRUCTURE_ATTRIBUTES and name:
                    found.setdefault(name, power)
                elif attribute in STRUCTURE_FUNCTIONS and index + 1 < len(children) \
                        and is_call_trailer(children[index + 1]):
                    given = arguments(children[index + 1])
                    read = dotted_name(given[0].value) if given else None
                    if read:
                        found.setdefault(read, power)
    return found


def _same_variable(name: str, scope: Node, builder: Node, ctx: FileContext) -> bool:
    """Is ``name`` read at ``builder`` the variable the batching statement in ``scope``
    binds? An attribute counts within one top-level definition only."""
    if "." in name:
        return _top_level(scope) is _top_level(builder)
    return _key(name, scope, ctx) == _key(name, enclosing_scope(builder), ctx)


def _top_level(node: Base) -> Base:
    while node.parent is not None and node.parent.type != symbols.file_input:
        node = node.parent
    return node


def _not_training_only(builder: Node, read: Base, name: str, ctx: FileContext) -> Optional[str]:
    """How the iterator built at ``builder`` from ``name``'s structure may serve another
    dataset, or None when every ``make_initializer(...)`` of it takes ``name`` itself."""
    line = read.get_lineno()
    if attribute_name(builder.prev_sibling) != "from_structure":
        return f"{name}'s structure builds a feedable iterator on line {line}"
    iterator = _bound_to(builder)
    if iterator is None:
        return f"{name}'s structure builds an iterator on line {line} that is not kept in a name"
    initialised = list(_initialised(iterator, builder, ctx))
    for dataset in initialised:
        if dotted_name(dataset) != name:
            return (f"{name}'s structure builds iterator '{iterator}' on line {line}, which "
                    f"{str(dataset).strip()} also initialises on line {dataset.get_lineno()}")
    if not initialised:
        return (f"{name}'s structure builds iterator '{iterator}' on line {line}; no make_initializer() "
                "shows it serves training only")
    return None


def _bound_to(builder: Node) -> Optional[str]:
    """The dotted name the iterator made by ``builder`` is assigned to, or None."""
    power = builder.parent
    statement = power.parent
    if statement is None or statement.type != symbols.expr_stmt or statement.children[-1] is not power \
            or len(statement.children) != 3:
        return None
    return dotted_name(statement.children[0])


def _initialised(iterator: str, builder: Node, ctx: FileContext) -> Iterator[Base]:
    """The datasets passed to ``<iterator>.make_initializer(...)`` for the iterator bound at
    ``builder`` (the same variable, as :func:`_same_variable` says)."""
    scope = enclosing_scope(builder)
    for node in node_pre_order(ctx.tree):
        if node.type != symbols.trailer or attribute_name(node) != "make_initializer" \
                or not is_call_trailer(node.next_sibling):
            continue
        power = node.parent
        receiver = spelled_name(power.children[:power.children.index(node)])
        if receiver == iterator and _same_variable(iterator, scope, node, ctx):
            given = arguments(node.next_sibling)
            if given:
                yield given[0].value


def _returned_to_iterator(site: Base, names: set[str], remote: Remote) -> Optional[str]:
    """Why the dataset batched at ``site`` in a module-level function that returns it feeds
    an iterator in another module that another dataset also initialises, or None."""
    function = _top_level(site)
    if function.type != symbols.funcdef or ITERATOR not in remote.get(function.children[1].value, ()):
        return None
    returned = {leaf.value for node in node_pre_order(function) if node.type == symbols.return_stmt
                for leaf in node.leaves() if leaf.type == tokens.NAME}
    if not names & returned:
        return None
    return WHY.format(how=f"{function.children[1].value}() returns it to another module of the "
                      "repository, which builds an iterator from its structure that another "
                      "dataset also initialises")


def _kept_for_iterator(site: Base, names: set[str], remote: Remote) -> Optional[str]:
    """Why the dataset batched at ``site`` in a method of a module-level class, kept in
    ``self.<attribute>``, feeds an iterator in another module that another instance's
    ``<attribute>`` also initialises (``Iterator.from_structure(tr.data.output_types, ...)``,
    ``it.make_initializer(te.data)``: an ``iterator:<attribute>`` fact of the class), or None."""
    top = _top_level(site)
    if top.type != symbols.classdef:
        return None
    name = top.children[1].value
    attributes = sorted(verdict.partition(":")[2] for verdict in remote.get(name, ())
                        if verdict.startswith(ITERATOR + ":"))
    method = enclosing_scope(site)
    for attribute in attributes:
        if _kept_in(f"self.{attribute}", names, method):
            return WHY.format(how=f"class {name} keeps it in self.{attribute}; another module of "
                              f"the repository builds an iterator from one instance's {attribute} "
                              f"that another instance's {attribute} also initialises")
    return None


def _kept_in(attribute: str, names: set[str], method: Node) -> bool:
    """Is the dataset that goes by ``names`` in ``method`` assigned to ``attribute``
    (``self.data = data.batch(n)``, or ``self.data = data`` after it)?"""
    if attribute in names:
        return True
    for node in node_pre_order(method):
        if node.type == symbols.expr_stmt and len(node.children) == 3 \
                and node.children[1].type == tokens.EQUAL \
                and dotted_name(node.children[0]) == attribute and dotted_name(node.children[2]) in names:
            return True
    return False


def iterator_uses(tree: ast.Module, scopes: Sequence[Sequence[ast.AST]],
                  imports: dict[str, str], calls: Optional[Iterable[ast.AST]] = None) -> Iterator[tuple[str, str]]:
    """(dotted name as spelled, verdict) of the imported functions and classes whose results
    the module builds a shared iterator from: a name bound, in one of ``scopes`` (each as its
    own nodes), from the call of one (``train, test = data.get_dataset(n)``) whose structure
    builds an iterator not shown to be initialised with it only (:data:`ITERATOR`); an
    instance of one (``tr = Gen(...)``) whose attribute's structure does so
    (``from_structure(tr.data.output_types, ...)``, or through ``train = tr.data``:
    ``iterator:data``). ``calls``: every call of the module (its index's), else it is walked."""
    attributes = _ast_initialisers(ast.walk(tree) if calls is None else calls, whole=False)
    for nodes in scopes:
        initialisers = {**attributes, **_ast_initialisers(nodes)}
        for call in (node for node in nodes if isinstance(node, ast.Call)):
            for name in _ast_shared(call, nodes, initialisers):
                head, _, attribute = name.partition(".")
                if "." in attribute:
                    continue
                verdict = f"{ITERATOR}:{attribute}" if attribute else ITERATOR
                yield from ((callee, verdict) for callee in _ast_sources(head, nodes, imports))
                for instance, kept in ([] if attribute else _ast_attributes_read(head, nodes)):
                    yield from ((callee, f"{ITERATOR}:{kept}")
                                for callee in _ast_sources(instance, nodes, imports))


def _ast_shared(call: ast.Call, nodes: Sequence[ast.AST],
                initialisers: dict[str, list[str]]) -> Iterator[str]:
    """Each dataset whose structure ``call`` (if it is an iterator constructor) takes, when
    the iterator is not shown to be fed by that dataset only."""
    if not isinstance(call.func, ast.Attribute) or call.func.attr not in BUILDERS:
        return
    iterator = next((ast_dotted(node.targets[0]) for node in nodes if isinstance(node, ast.Assign)
                     and node.value is call and len(node.targets) == 1), None)
    fed = initialisers.get(iterator or "", [])
    for name in sorted(_ast_structures(call)):
        if call.func.attr != "from_structure" or not fed or any(dataset != name for dataset in fed):
            yield name


def module_nodes(tree: ast.Module) -> list[ast.AST]:
    """The nodes of module-level code, not those inside functions, classes or lambdas, in
    pre-order; not expression contexts and operators (``child_fields``: they hold no code)."""
    found: list[ast.AST] = []
    stack: list[ast.AST] = list(reversed(tree.body))
    while stack:
        node = stack.pop()
        found.append(node)
        if isinstance(node, _SCOPES):
            continue
        for name in child_fields(type(node)):  # the last field first: popped in order
            value = getattr(node, name, None)
            if type(value) is list:
                stack.extend(item for item in reversed(value) if isinstance(item, ast.AST))
            elif isinstance(value, ast.AST):
                stack.append(value)
    return found


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _ast_structures(call: ast.Call) -> set[str]:
    found = set()
    for value in [*call.args, *(keyword.value for keyword in call.keywords)]:
        for node in ast.walk(value):
            if isinstance(node, ast.Attribute) and node.attr in STRUCTURE_ATTRIBUTES \
                    and _ast_instance_attribute(node.value):
                found.add(ast_dotted(node.value) or "")
            elif isinstance(node, ast.Call) and node.args and _ast_instance_attribute(node.args[0]) \
                    and (ast_dotted(node.func) or "").rpartition(".")[2] in STRUCTURE_FUNCTIONS:
                found.add(ast_dotted(node.args[0]) or "")
    return found


def _ast_instance_attribute(node: ast.AST) -> bool:
    """A name, or one attribute of a name (``tr.data``: an instance's dataset)."""
    return isinstance(node, ast.Name) or (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name))


def _ast_initialisers(nodes: Iterable[ast.AST], whole: bool = True) -> dict[str, list[str]]:
    """Iterator dotted name -> what its ``make_initializer(...)`` calls among ``nodes`` pass
    ("" when not a name). Over a whole module, only attributes (``self.iterator``) count: a
    name is one scope's."""
    found: dict[str, list[str]] = {}
    for node in nodes:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "make_initializer" and node.args:
            receiver = ast_dotted(node.func.value)
            if receiver and (whole or "." in receiver):
                found.setdefault(receiver, []).append(ast_dotted(node.args[0]) or "")
    return found


def _ast_sources(name: str, nodes: Sequence[ast.AST], imports: dict[str, str]) -> Iterator[str]:
    """The dotted callee of each call whose result (or one item of it) a scope binds to
    ``name`` (``train, test = data.get_dataset(n)``), when it is an imported name."""
    for node in nodes:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                and any(name in _target_names(target) for target in node.targets):
            callee = ast_dotted(node.value.func) or ""
            if callee.partition(".")[0] in imports:
                yield callee


def _ast_attributes_read(name: str, nodes: Sequence[ast.AST]) -> Iterator[tuple[str, str]]:
    """(instance, attribute) of each ``name = instance.attribute`` among ``nodes``
    (``train_dataset = tr_data.data``)."""
    for node in nodes:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Attribute) \
                and isinstance(node.value.value, ast.Name) \
                and any(isinstance(target, ast.Name) and target.id == name for target in node.targets):
            yield node.value.value.id, node.value.attr


def _target_names(target: ast.AST) -> set[str]:
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        return {name for item in target.elts for name in _target_names(item)}
    return set()
