"""Parameter servers an Estimator takes from ``TF_CONFIG``: NPU026's sites that call no API.

An Estimator starts its ps and worker roles from the ``TF_CONFIG`` environment variable (its
RunConfig reads the cluster there), so a program set up for parameter servers may build no
``ClusterSpec`` or ``Server`` at all. What shows it in the code is a session config that keeps
each worker to the ps devices and its own (``device_filters=['/job:ps', '/job:worker/task:%d'
% index]``, Cloud ML's pattern), or, in a file that reads or writes ``TF_CONFIG``, the ``"ps"``
job of its cluster (``cluster["ps"]``, ``cluster.get("ps")``, ``{"ps": hosts}``). Left as they
are, each NPU worker trains alone, as with the explicit cluster NPU026 reports.
"""

from __future__ import annotations

import ast
import re
from typing import Iterator, Optional

from npu_codemod.api import Base, Node, symbols, tokens

DEVICE_FILTERS = "device_filters"
TF_CONFIG = "TF_CONFIG"
PS = "ps"
#: The unit layout's word for a node that names the ``"ps"`` job (``Rule._ast_sites``).
PS_WORD = "ps-job"
#: A ``device_filters`` keyword, an assignment to one, or a call that adds filters to one.
DEVICE_FILTERS_PATTERN = (
    f"argument< '{DEVICE_FILTERS}' '=' value=any >"
    f" | expr_stmt< power< any* trailer< '.' '{DEVICE_FILTERS}' > > ('=' | '+=') value=any >"
    f" | power< any* trailer< '.' '{DEVICE_FILTERS}' >"
    " trailer< '.' ('extend' | 'append' | 'insert') > trailer< '(' value=any ')' > >"
)
_PS_DEVICE = re.compile(r"/job:ps(?![\w-])")
_QUOTED_PS = re.compile(r"""[rRuU]?(['"])ps\1""")


def names_ps_device(value: Base) -> bool:
    """Does ``value`` (device filters) hold a string literal naming the ps job's devices
    (``'/job:ps'``, ``"/job:ps/task:0"``)?"""
    return any(leaf.type == tokens.STRING and _PS_DEVICE.search(leaf.value) is not None
               for leaf in value.leaves())


def ps_job_sites(tree: Node) -> Iterator[Base]:
    """The string literals ``"ps"`` of ``tree`` that name the job of a cluster: a subscript
    (``cluster["ps"]``), the key ``.get`` looks up, a dict's key."""
    for leaf in tree.leaves():
        if leaf.type == tokens.STRING and _QUOTED_PS.fullmatch(leaf.value) and _names_a_job(leaf):
            yield leaf


def _names_a_job(leaf: Base) -> bool:
    parent = leaf.parent
    if parent is None:
        return False
    if parent.type == symbols.trailer:
        if parent.children[0].type == tokens.LSQB:
            return True  # cluster["ps"]
        return parent.children[0].type == tokens.LPAR and _is_get(parent)
    if parent.type == symbols.arglist and parent.children[0] is leaf:
        return parent.parent is not None and _is_get(parent.parent)
    following = leaf.next_sibling
    return parent.type == symbols.dictsetmaker and following is not None \
        and following.type == tokens.COLON


def _is_get(trailer: Optional[Base]) -> bool:
    """Is ``trailer`` the ``(...)`` of a ``.get(...)`` call?"""
    before = trailer.prev_sibling if trailer is not None else None
    return before is not None and before.type == symbols.trailer \
        and len(before.children) == 2 and before.children[1].value == "get"


def names_ps_job(node: ast.AST) -> bool:
    """The ``ast`` form of :func:`ps_job_sites` (``Rule._ast_sites``): a subscript, ``.get``
    call or dict with the constant ``"ps"`` as its key."""
    if isinstance(node, ast.Subscript):
        return _is_ps(node.slice)
    if isinstance(node, ast.Call):
        return isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
            and bool(node.args) and _is_ps(node.args[0])
    return isinstance(node, ast.Dict) and any(key is not None and _is_ps(key) for key in node.keys)


def _is_ps(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value == PS
