"""Types that ``typing`` reads, found in CPython's ``ast``: ``qualified.in_typing_type``'s
answer for the ``ast`` reference finder (``ast_references``) and the module-level bindings read
only as types (``type_aliases``)."""

from __future__ import annotations

import ast

from .introspection import is_type_position, is_typing_generic, typing_function
from .names import ast_dotted_name

#: Each node's parent and the field of the parent that holds it.
Parents = dict[ast.AST, tuple[ast.AST, str]]


def in_typing_type(node: ast.expr, parents: Parents) -> bool:
    """fissix's ``in_typing_type``: ``node`` is in the subscript of a generic type of
    ``typing`` (``Union[node, B]``, ``Callable[[node], B]``), alone or in a tuple or list, or a
    type argument of ``cast``, ``TypeVar``, ``NewType`` (``parents``: each node's parent and
    field)."""
    parent, field = parents[node]
    while isinstance(parent, (ast.Tuple, ast.List)):  # ``ast`` drops the parentheses
        node = parent
        parent, field = parents[node]
    if isinstance(parent, ast.Subscript):
        return field == "slice" and is_typing_generic(ast_dotted_name(parent.value))
    keyword, index = None, None
    if isinstance(parent, ast.keyword):
        if parent.arg is None:
            return False  # ``**node``
        keyword = parent.arg
        parent, field = parents[parent]
    if not isinstance(parent, ast.Call) or field not in ("args", "keywords"):
        return False
    if keyword is None:
        index = parent.args.index(node)
        if any(isinstance(argument, ast.Starred) for argument in parent.args[:index]):
            return False
    return is_type_position(typing_function(ast_dotted_name(parent.func)), index, keyword)
