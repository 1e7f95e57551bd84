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


#: The generic types of ``typing`` (and ``collections.abc``): what their subscript holds is a type,
#: ``Union[tf.Tensor, tf.SparseTensor]``, ``Mapping[str, tf.RaggedTensor]``, even outside an
#: annotation (a type alias bound to a name).
TYPING_GENERICS = frozenset({
    "Union", "Optional", "List", "Dict", "Mapping", "MutableMapping", "Sequence",
    "MutableSequence", "Tuple", "Set", "FrozenSet", "AbstractSet", "MutableSet", "Iterable",
    "Iterator", "Collection", "Container", "Callable", "Type", "Generator", "AsyncGenerator",
    "AsyncIterable", "AsyncIterator", "Awaitable", "Coroutine", "DefaultDict", "OrderedDict",
    "Deque", "ClassVar", "Final", "Annotated", "Reversible", "TypeGuard",
})
#: The built-in classes that are generic types when subscripted (``list[tf.Tensor]``), bare only.
BUILTIN_GENERICS = frozenset({"list", "dict", "tuple", "set", "frozenset", "type"})
#: The functions of ``typing`` whose arguments (some of them) are types: ``cast(T, x)``'s first,
#: ``TypeVar("T", A, B, bound=C)``'s after the name, ``NewType("N", T)``'s second.
CAST, TYPE_VAR, NEW_TYPE = "cast", "TypeVar", "NewType"
_TYPING_MODULES = ("typing.", "typing_extensions.")


def is_typing_generic(spelled: Optional[str]) -> bool:
    """Is the dotted name ``spelled`` a generic type of ``typing`` (``Union``, ``typing.Union``,
    ``t.Mapping``) or a built-in one (``list``), whose subscript holds types?"""
    if not spelled:
        return False
    return spelled.rpartition(".")[2] in TYPING_GENERICS or spelled in BUILTIN_GENERICS


def typing_function(spelled: Optional[str]) -> Optional[str]:
    """``cast``, ``TypeVar`` or ``NewType`` when ``spelled`` names that function of ``typing``
    (alone, as ``from typing import cast`` binds it, or ``typing.cast``), else None
    (``tf.cast`` casts a tensor: its first argument is a value)."""
    if not spelled:
        return None
    for module in ("", *_TYPING_MODULES):
        if spelled.startswith(module) and spelled[len(module):] in (CAST, TYPE_VAR, NEW_TYPE):
            return spelled[len(module):]
    return None


def is_type_position(function: Optional[str], index: Optional[int], keyword: Optional[str]) -> bool:
    """Is the argument at ``index`` (positional) or named ``keyword`` of a call of the
    ``typing`` function ``function`` (:func:`typing_function`) a type?"""
    if function == CAST:
        return index == 0
    if function == TYPE_VAR:
        return keyword == "bound" or (index is not None and index > 0)
    if function == NEW_TYPE:
        return index == 1
    return False


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

