"""Is a name read only to look at what it names: introspection is no use of the API.

A documentation generator lists a class's members (``tf.keras.layers.Layer.__dict__.items()``,
``inspect.getmembers(tf.compat.v1.train.Optimizer)``, ``dir(X)``, ``X.__name__``): the class is
neither built nor run, so the read needs nothing on the NPU (NPU071 and NPU100 count it as a
type use, ``ReferenceSite.type_use``, as a base class or an ``isinstance`` type) and is no graph
code: no C1/C2 signal of the file (``tf_versions``), so it makes no program mixed
(tensorflow/similarity's ``scripts/gen_api_doc.py``).

One definition for the two readers of a module: CPython's ``ast`` (the analyses,
``ast_references``) and fissix's tree (``qualified``, the rewrite engine's references).
"""

from __future__ import annotations

import ast
from typing import Optional

from .names import ast_dotted_name

#: The attributes Python gives a class (or function, module) to look at it: a name followed by
#: one of them is read, not used (``Layer.__dict__.items()``, ``Optimizer.__name__``).
INTROSPECTION_ATTRIBUTES = frozenset({
    "__dict__", "__name__", "__qualname__", "__doc__", "__module__", "__mro__", "__bases__",
    "__subclasses__", "__annotations__",
})
#: The built-ins whose first argument is only looked at (``dir(X)``, ``vars(X)``, ``help(X)``);
#: every function of the ``inspect`` module is one too (:func:`is_introspection_call`).
INTROSPECTION_BUILTINS = frozenset({"dir", "vars", "help"})
#: The built-ins whose second argument is a class or a tuple of classes.
TYPE_CHECKS = frozenset({"isinstance", "issubclass"})
_INSPECT = "inspect."


def is_introspection_call(spelled: Optional[str]) -> bool:
    """Is a call of the function spelled ``spelled`` one that only looks at its first argument:
    ``dir``, ``vars``, ``help``, or a function of ``inspect`` (``inspect.getmembers``,
    ``inspect.getdoc``...; ``getmembers`` imported alone)?"""
    if not spelled:
        return False
    return spelled in INTROSPECTION_BUILTINS or spelled.startswith(_INSPECT) or spelled == "getmembers"


def introspected_arguments(calls: list[ast.Call]) -> frozenset[int]:
    """The ``id`` of each argument of ``calls`` that is only looked at: the first of an
    introspection call (:func:`is_introspection_call`), the class argument of ``isinstance``/
    ``issubclass`` and each element of a tuple of classes there."""
    found: set[int] = set()
    for call in calls:
        func = call.func
        name = ast_dotted_name(func)
        if name in TYPE_CHECKS and len(call.args) > 1:
            argument = call.args[1]
            found.add(id(argument))
            if isinstance(argument, ast.Tuple):
                found.update(id(element) for element in argument.elts)
        elif call.args and is_introspection_call(name):
            found.add(id(call.args[0]))
    return frozenset(found)


def introspects(spelled: str) -> bool:
    """Does the dotted name ``spelled`` read an introspection attribute
    (``tf.compat.v1.train.Optimizer.__dict__.items``)?"""
    return not INTROSPECTION_ATTRIBUTES.isdisjoint(spelled.split("."))

