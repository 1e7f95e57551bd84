"""Which loops of a scope build multi-GPU towers, and which GPU counts size them (NPU055).

A tower loop is a ``for`` whose body enters ``tf.device(E)`` where ``E`` names one GPU per
iteration: it reads the loop's variable and formats a GPU device string with it (``'/gpu:%d'
% k``, ``'/gpu:{}'.format(k)``, ``f'/gpu:{k}'``, ``'/gpu:' + str(k)``, or a variable given
such a string or such an expression: youtube-8m's ``device_string % i``), or calls a function
named for the GPU it assigns (transformer-xl's ``assign_to_gpu(i, ps_device)``, a device
function), or builds a GPU ``DeviceSpec`` (tf-pose-estimation's ``tf.DeviceSpec(device_type="GPU",
device_index=gpu_id)``), or the loop walks a list of GPUs a probe found (``for d in gpus: with tf.device(d)``).
A device read from the loop's variable with no GPU in sight is a tower's too when the loop computes
gradients (``opt.compute_gradients(...)``, ``tf.gradients(...)``: improved-gan's ``for idx, device
in enumerate(self.devices)``, its GPUs listed by the caller). A fixed device
(``tf.device('/gpu:0')``) or a loop over other devices (``'/cpu:%d' % i``) is no tower.

A probe is a device listing filtered on GPUs (``device_lib.list_local_devices()`` with a
``"GPU"`` test in the statements its result flows through, ``list_physical_devices('GPU')``)
whose result flows, by plain assignments of the same scope, into a tower loop's iterable or
device. What is not proven so (a probe in a helper function, a count only logged) is not
reported: the tower loop is, wherever its count comes from.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Iterator, Optional

from npu_codemod.api import Base, FileContext, Node, Reference, find_argument, symbols, tokens
from npu_codemod.api._toolkit import assigned_values, enclosing_scope, name_references, position, post_order

DEVICE = ("tensorflow.device",)
LOCAL_DEVICES = ("tensorflow.python.client.device_lib.list_local_devices",)
PHYSICAL_DEVICES = ("tensorflow.config.list_physical_devices",
                    "tensorflow.config.experimental.list_physical_devices",
                    "tensorflow.config.list_logical_devices",
                    "tensorflow.config.experimental.list_logical_devices")
PROBES = LOCAL_DEVICES + PHYSICAL_DEVICES
_SCOPES = (symbols.funcdef, symbols.classdef, symbols.file_input)
#: What ``_references`` looks for, in order: the probes, then ``tf.device``.
_WANTED = (frozenset(PROBES), frozenset(DEVICE))
#: The methods and functions whose call computes gradients: ``opt.compute_gradients(loss)``,
#: ``tf.gradients(loss, params)``.
_GRADIENTS = frozenset({"compute_gradients", "gradients"})
#: What a device string names when it names no GPU: a CPU, a job's task (in-graph replication).
_OTHER_DEVICES = ("cpu", "job:", "task:")


@dataclass
class Towers:
    """A file's tower loops and the probes sizing them, by position (line, column)."""

    #: ``tf.device`` call -> the tower loop it is in.
    loops: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
    probes: set[tuple[int, int]] = field(default_factory=set)
    reported: set[tuple[int, int]] = field(default_factory=set)  # loops already reported


def file_towers(ctx: FileContext) -> Towers:
    """The towers of the file (``ctx.analysis(file_towers)``: once per file), scope by scope:
    only the scopes holding a call that may name a device or a probe are worked out."""
    towers = Towers()
    for calls in _candidate_calls(ctx).values():
        _scope_towers(ctx, calls, towers)
    return towers


def _candidate_calls(ctx: FileContext) -> dict[int, list[Node]]:
    """The ``power`` nodes that may call a TensorFlow name, by (the ``id`` of) the scope whose
    own code holds them (the nearest function, class or module around them), in source order. Only such a
    node can be a reference with a call (``name_reference``: a bare NAME has none, and a
    ``power`` must start with a name the file binds), so no other scope has a tower or probe."""
    heads = ctx.tf.heads
    found: dict[int, list[Node]] = {}
    if not heads:
        return found
    for leaf in post_order(ctx.tree, {tokens.NAME: heads}, frozenset()):
        power = leaf.parent
        if power is not None and power.type == symbols.power and power.children[0] is leaf:
            found.setdefault(id(enclosing_scope(power)), []).append(power)
    return found


def _scope_towers(ctx: FileContext, calls: list[Node], towers: Towers) -> None:
    """Add the tower loops among ``calls`` (the candidate calls of one scope's own code) and
    the probes sizing them to ``towers``."""
    probe_refs, devices = _references(ctx, calls)
    tainted = _gpu_counts(probe_refs)
    sizing: set[str] = set()
    for device in devices:
        loop = _tower_loop(device, tainted)
        if loop is not None:
            statement, names = loop
            towers.loops[(device.line, device.column)] = position(statement)
            sizing |= names
    for ref in probe_refs:
        if any(name in sizing for name in tainted.get(id(ref), ())):
            towers.probes.add((ref.line, ref.column))


def _references(ctx: FileContext, calls: list[Node]) -> tuple[list[Reference], list[Reference]]:
    """The calls of a probe, and those of ``tf.device``, among ``calls``."""
    probes: list[Reference] = []
    devices: list[Reference] = []
    for node in calls:
        for ref, found in zip(name_references(node, [ctx.tf], _WANTED), (probes, devices)):
            if ref is not None and ref.call is not None and ref.node is node:
                found.append(ref)
    return probes, devices


def _own_nodes(scope: Node) -> Iterator[Base]:
    """Every node under ``scope`` but those of nested functions and classes."""
    stack = list(reversed(scope.children))
    while stack:
        node = stack.pop()
        yield node
        if node.type not in _SCOPES:
            stack.extend(reversed(node.children))


# -- GPU counts ---------------------------------------------------------------------------


def _gpu_counts(probes: list[Reference]) -> dict[int, set[str]]:
    """For each probe (by ``id``), the names its GPU-filtered result reaches by plain
    assignments of its scope; a probe whose result is never filtered on GPUs reaches none."""
    reached = {}
    for ref in probes:
        statement = _statement(ref.node)
        if statement is None:
            continue
        filtered = _filters_gpus(ref) or _mentions_gpu(statement)
        names = _flow(statement, filtered)
        reached[id(ref)] = names
    return reached


def _flow(start: Node, filtered: bool) -> set[str]:
    """The names ``start`` (an assignment) gives a value, and transitively those assigned
    from them in the same scope; only names whose value has passed a GPU test count."""
    scope = enclosing_scope(start)
    statements = [node for node in _own_nodes(scope) if _assignment(node) is not None]
    gpu: dict[str, bool] = {}
    target, value = _assignment(start) or (None, None)
    for name in _target_names(target):
        gpu[name] = filtered
    changed = True
    while changed:
        changed = False
        for statement in statements:
            target, value = _assignment(statement)  # type: ignore[misc]
            read = _names(value)
            sources = [gpu[name] for name in read if name in gpu]
            if not sources:
                continue
            passed = any(sources) or _mentions_gpu(value)
            for name in _target_names(target):
                if gpu.get(name) is None or (passed and not gpu[name]):
                    gpu[name] = passed
                    changed = True
    return {name for name, passed in gpu.items() if passed}


def _filters_gpus(ref: Reference) -> bool:
    """``list_physical_devices('GPU')`` (or ``device_type='GPU'``): the listing is of GPUs."""
    if ref.name not in PHYSICAL_DEVICES or ref.call is None:
        return False
    argument = find_argument(ref.call, "device_type", 0)
    return argument is not None and _mentions_gpu(argument.value)


# -- tower loops --------------------------------------------------------------------------


def _tower_loop(device: Reference, tainted: dict[int, set[str]]) -> Optional[tuple[Base, set[str]]]:
    """The ``for`` statement whose towers ``device`` (a ``tf.device`` call) places, with the
    names its iterable and device read; None when ``device`` is no tower's."""
    if device.call is None or not _entered(device.node):
        return None
    argument = find_argument(device.call, "device_name", 0)
    if argument is None:
        return None
    expression = argument.value
    gpu_names = set().union(*tainted.values()) if tainted else set()
    for loop in _loops(device.node):
        targets = _target_names(loop.children[1])
        read = _expanded_names(expression, targets)
        if not read & targets:
            continue
        iterable_names = _names(loop.children[3])
        if _formats_gpu(expression, targets) or _calls_gpu_function(expression) \
                or _gpu_device_spec(expression) or iterable_names & gpu_names \
                or _gradients_per_device(loop, expression):
            return loop, iterable_names | read
        return None
    return None


def _calls_gpu_function(expression: Base) -> bool:
    """Does ``expression`` call a function named for a GPU (``assign_to_gpu(i, ps_device)``)?"""
    for node in _walk(expression):
        children = node.children
        for index, child in enumerate(children[:-1]):
            if child.type == tokens.NAME and "gpu" in child.value.lower() \
                    and _is_call(children[index + 1]):
                return True
            if _is_attribute(child) and "gpu" in child.children[1].value.lower() \
                    and _is_call(children[index + 1]):
                return True
    return False


def _gpu_device_spec(expression: Base) -> bool:
    """Does ``expression`` build a ``DeviceSpec`` of device type GPU
    (``tf.DeviceSpec(device_type="GPU", device_index=k)``: tf-pose-estimation's towers)?"""
    for node in _walk(expression):
        children = node.children
        for index, child in enumerate(children[:-1]):
            named = child.value if child.type == tokens.NAME else \
                child.children[1].value if _is_attribute(child) else ""
            if named == "DeviceSpec" and _is_call(children[index + 1]):
                argument = find_argument(children[index + 1], "device_type", 3)
                if argument is not None and _mentions_gpu(argument.value):
                    return True
    return False


def _gradients_per_device(loop: Node, expression: Base) -> bool:
    """Does ``loop`` compute gradients (``.compute_gradients(``, ``tf.gradients(``) while its
    device ``expression`` and what it iterates over name no other device than a GPU (no
    ``'/cpu:%d'``, no ``for d in ['/cpu:0', '/cpu:1']``, no worker task of an in-graph
    replication: ``'/job:worker/task:%d' % task``)?"""
    if _names_other_device(expression) or _names_other_device(loop.children[3]):
        return False
    for node in _walk(loop.children[5]):  # the body (``for t in x: body [else: ...]``)
        children = node.children
        for index, child in enumerate(children[:-1]):
            if _is_attribute(child) and child.children[1].value in _GRADIENTS \
                    and _is_call(children[index + 1]):
                return True
    return False


def _names_other_device(node: Base) -> bool:
    """Does a string of ``node`` name a device that is no GPU (:data:`_OTHER_DEVICES`)?"""
    for leaf in node.leaves():
        value = leaf.value.lower() if leaf.type == tokens.STRING else ""
        if "gpu" not in value and any(other in value for other in _OTHER_DEVICES):
            return True
    return False


def _is_call(node: Base) -> bool:
    """Is ``node`` a call's trailer, ``(...)``?"""
    return node.type == symbols.trailer and node.children[0].type == tokens.LPAR


def _is_attribute(node: Base) -> bool:
    """Is ``node`` an attribute's trailer, ``.name``?"""
    return node.type == symbols.trailer and node.children[0].type == tokens.DOT


def _entered(node: Base) -> bool:
    """Is ``node`` the context expression of a ``with`` (not code in its body)?"""
    child, parent = node, node.parent
    while parent is not None and parent.type != symbols.with_stmt:
        if parent.type in _SCOPES or parent.type in (symbols.suite, symbols.simple_stmt):
            return False
        child, parent = parent, parent.parent
    if parent is None:
        return False
    for item in parent.children:
        if item is child:
            return True
        if item.type == tokens.COLON:
            return False
    return False


def _loops(node: Base) -> Iterator[Node]:
    """The ``for`` statements around ``node``, innermost first, up to its scope."""
    parent = node.parent
    while parent is not None and parent.type not in _SCOPES:
        if parent.type == symbols.for_stmt and node is not parent.children[3]:
            yield parent
        node, parent = parent, parent.parent


def _expanded_names(expression: Base, targets: set[str]) -> set[str]:
    """The names ``expression`` reads, and those read by the values its other names are
    assigned in its scope (``dev = '/gpu:%d' % i`` then ``tf.device(dev)``)."""
    read = _names(expression)
    for name in read - targets:
        for value in assigned_values(expression, name) or ():
            read |= _names(value)
    return read


def _formats_gpu(expression: Base, targets: set[str]) -> bool:
    """Does ``expression`` (or a value assigned to a name it reads) format a GPU device
    string?"""
    if _gpu_format(expression):
        return True
    for name in _names(expression) - targets:
        if any(_gpu_format(value) for value in assigned_values(expression, name) or ()):
            return True
    return False


def _gpu_format(expression: Base) -> bool:
    """``'/gpu:%d' % k``, ``'/gpu:{}'.format(k)``, ``f'/gpu:{k}'``, ``'/gpu:' + str(k)``, or
    a template variable (``device_string = '/gpu:%d'``) formatted so, anywhere in ``expression``."""
    for node in _walk(expression):
        if node.type == tokens.STRING and _is_fstring(node) and _mentions_gpu(node):
            return True
        children = node.children
        if node.type == symbols.term and len(children) >= 3 and children[1].type == tokens.PERCENT:
            if _gpu_template(children[0]):
                return True
        if node.type == symbols.arith_expr and any(
                leaf.type == tokens.PLUS for leaf in children) and any(
                child.type == tokens.STRING and _mentions_gpu(child) for child in children):
            return True
        if node.type == symbols.power and len(children) >= 3 and _gpu_template(children[0]) \
                and str(children[1]).strip() == ".format":
            return True
    return False


def _gpu_template(node: Base) -> bool:
    """A GPU device string, or a name whose assigned values include one."""
    if node.type == tokens.STRING:
        return _mentions_gpu(node)
    if node.type == tokens.NAME:
        return any(value.type == tokens.STRING and _mentions_gpu(value)
                   for value in assigned_values(node, node.value) or ())
    return False


# -- small helpers ------------------------------------------------------------------------


def _is_fstring(leaf: Base) -> bool:
    prefix = str(leaf).strip().split("'")[0].split('"')[0]
    return "f" in prefix.lower() and "{" in str(leaf)


def _fstring_names(code: str) -> set[str]:
    """The names an f-string's fields read (``f'/gpu:{k}'`` reads ``k``)."""
    try:
        tree = ast.parse(code, mode="eval")
    except (SyntaxError, ValueError):
        return set()
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}


def _mentions_gpu(node: Base) -> bool:
    """Does a string literal in ``node`` name GPUs (``"GPU"``, ``'/gpu:%d'``)?"""
    return any(leaf.type == tokens.STRING and "gpu" in leaf.value.lower() for leaf in node.leaves())


def _walk(node: Base) -> Iterator[Base]:
    """``node`` and every node under it, in source order."""
    stack = [node]
    while stack:
        top = stack.pop()
        yield top
        stack.extend(reversed(top.children))


def _names(node: Optional[Base]) -> set[str]:
    """The variable names ``node`` reads (not attributes, nor keyword names)."""
    if node is None:
        return set()
    found = set()
    for parent in _walk(node):
        if parent.type == tokens.STRING and _is_fstring(parent):
            found |= _fstring_names(parent.value)
        children = parent.children
        for index, leaf in enumerate(children):
            if leaf.type != tokens.NAME or (index and children[index - 1].type == tokens.DOT):
                continue
            if index == 0 and parent.type == symbols.argument and len(children) == 3 \
                    and children[1].type == tokens.EQUAL:
                continue
            found.add(leaf.value)
    if node.type == tokens.NAME:
        found.add(node.value)
    return found


def _target_names(target: Optional[Base]) -> set[str]:
    """The names a loop or assignment target binds (``i``, ``i, d``, ``(i, d)``)."""
    if target is None:
        return set()
    if target.type == tokens.NAME:
        return {target.value}
    if target.type in (symbols.exprlist, symbols.testlist_star_expr, symbols.atom, symbols.testlist_gexp):
        return set().union(*(_target_names(child) for child in target.children))
    return set()


def _assignment(node: Base) -> Optional[tuple[Base, Base]]:
    """``(target, value)`` of ``target = value`` (an ``expr_stmt``), else None."""
    children = node.children
    if node.type != symbols.expr_stmt or len(children) != 3 or children[1].type != tokens.EQUAL:
        return None
    return children[0], children[2]


def _statement(node: Base) -> Optional[Node]:
    """The assignment whose value holds ``node``, or None."""
    parent = node.parent
    while parent is not None and parent.type not in _SCOPES:
        if _assignment(parent) is not None:
            return parent
        if parent.type in (symbols.simple_stmt, symbols.suite):
            return None
        parent = parent.parent
    return None
