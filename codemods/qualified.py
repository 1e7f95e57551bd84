"""Matching code by qualified name: which calls and references of a file mean a given API.

A rule names what it looks for as full dotted names of any module (``tensorflow.estimator.
RunConfig``, ``horovod.tensorflow.rank``); the file's imports decide how it is spelled there
(``tf.estimator.RunConfig``, ``tf.compat.v1.estimator.RunConfig``, ``from tensorflow.estimator
import RunConfig as RC``, ``import horovod.tensorflow as hvd``). :func:`name_reference` answers
"what does this expression name?" for one node; the engine uses it to offer each rule exactly
the references it declared (:attr:`Rule.calls`, :attr:`Rule.uses`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import AbstractSet, Iterable, Optional, Sequence

from fissix import pytree
from fissix.pgen2 import token
from fissix.pygram import python_symbols as syms

from .introspection import (
    INTROSPECTION_ATTRIBUTES,
    TYPE_CHECKS,
    is_introspection_call,
    is_type_position,
    is_typing_generic,
    typing_function,
)
from .names import (
    ACCESSOR_CALL,
    ImportNames,
    canonical,
    dotted_name,
    is_attribute_trailer,
    is_call_trailer,
    is_empty_call,
    spelled_name,
)
from .nodes import last_leaf
from .scopes import binding
from .walk import position, post_order

#: Parents under which a NAME leaf is not a reference to what it is bound to.
_NOT_REFERENCES = frozenset({
    syms.import_name, syms.import_from, syms.import_as_name, syms.import_as_names,
    syms.dotted_as_name, syms.dotted_as_names, syms.dotted_name, syms.funcdef, syms.classdef,
    syms.parameters, syms.typedargslist, syms.tname, syms.varargslist, syms.global_stmt,
})
#: Where a NAME is a parameter, unless it follows ``=`` (then it is a default value, read).
_PARAMETER_LISTS = frozenset({syms.parameters, syms.typedargslist, syms.varargslist})


@dataclass(frozen=True)
class Reference:
    """One place where code names an API: ``tf.estimator.RunConfig`` in ``tf.estimator.RunConfig(x)``.

    ``node`` is the expression holding the name: a ``power`` node (``tf.a.b(...)...``) or a bare
    NAME leaf. ``end`` is how many of its children spell the name (1 for a bare name), ``name``
    the qualified name it resolves to (``compat.v1`` folded, internal modules resolved), and
    ``call`` the ``(...)`` trailer right after the name when it is called, else None.
    ``ctx.report(reference, ...)`` reports at its original place even after an edit.
    """

    node: pytree.Base
    end: int
    name: str
    call: Optional[pytree.Node]
    #: Where the reference was before any edit (1-based line, 0-based column).
    line: int = 0
    column: int = 0

    @property
    def spelled(self) -> str:
        """The name as the file spells it here (``tf.compat.v1.estimator.RunConfig``, ``RC``),
        for messages; ask before editing the reference."""
        if self.node.type == syms.power:
            return spelled_name(self.node.children[:self.end], through_calls=True) or self.name
        if self.node.type == syms.dotted_name:  # a decorator's ``@tf.function``
            return dotted_name(self.node) or self.name
        return getattr(self.node, "value", self.name)

    @property
    def site(self) -> ReferenceSite:
        """The reference as a :class:`ReferenceSite`: where it is, without the tree."""
        base_class, called = self._is_base_class(), self.call is not None
        return ReferenceSite(self.line, self.column, self._end_column(), self.name, self.spelled,
                             called, base_class, not called and (
                                 base_class or is_type_argument(self.node) or in_annotation(self.node)
                                 or in_typing_type(self.node) or self._introspected()))

    def _end_column(self) -> int:
        """The column right after the name, on the line the name starts on (else its own)."""
        node = self.node
        last = last_leaf(node.children[self.end - 1]) if node.children else node
        if last is None or last.lineno != self.line:
            return self.column
        return int(last.column) + len(last.value)

    def _introspected(self) -> bool:
        """Is the name only looked at: an introspection attribute follows it
        (``tf.keras.layers.Layer.__dict__``), or it is the first argument of ``dir``,
        ``inspect.getmembers``... (``codemods/introspection``)?"""
        node = self.node
        if node.type == syms.power and self.end < len(node.children):
            trailer = node.children[self.end]
            return is_attribute_trailer(trailer) and trailer.children[1].value in INTROSPECTION_ATTRIBUTES
        return self.end == len(node.children or [node]) and is_introspection_argument(node)

    def _is_base_class(self) -> bool:
        """``tf.estimator.Estimator`` in ``class Classifier(tf.estimator.Estimator):``."""
        parent = self.node.parent
        if parent is not None and parent.type == syms.arglist:
            parent = parent.parent
        return parent is not None and parent.type == syms.classdef


@dataclass(frozen=True)
class ReferenceSite:
    """Where code names an API, as a record that needs no syntax tree: what
    :func:`references_under` (``Reference.site``) and :func:`ast_references` (from CPython's
    ``ast``, for a rule that only reads) both answer, identically.

    ``line`` is 1-based, ``column`` and ``end_column`` 0-based characters: the name spans
    ``column:end_column`` (``end_column`` is ``column`` when the name goes on to another line).
    ``name`` is qualified as :class:`Reference` qualifies it, ``spelled`` as the file spells it
    (``tf.compat.v1.nn.relu``); ``called`` when a ``(...)`` follows the name (not a
    decorator's); ``base_class`` when it is a base of a ``class`` statement; ``type_use`` when
    the name, not called, is used only as a type: a base class, the class argument of
    ``isinstance`` or ``issubclass`` (alone or in a tuple), in an annotation (``def f(x:
    tf.Tensor) -> tf.Tensor``, ``model: tf.keras.Model = ...``), in a subscript of a generic
    type of ``typing`` (``Union[tf.Tensor, tf.SparseTensor]``, ``Mapping[str, tf.RaggedTensor]``:
    a type alias), a type argument of ``typing.cast``, ``TypeVar`` or ``NewType`` (``cast(
    tf.RaggedTensor, x)``, ``TypeVar("T", bound=tf.Module)``), or only looked at: followed
    by an introspection attribute (``tf.keras.layers.Layer.__dict__.items()``: the name stops
    before it) or the first argument of ``dir``/``inspect.getmembers``... (``codemods/introspection``). NPU071 counts such a site as
    needing nothing and reports none (``spec/rules-tf2.md``, NPU071).
    """

    line: int
    column: int
    end_column: int
    name: str
    spelled: str
    called: bool
    base_class: bool
    type_use: bool


#: Where the expression after a token is an annotation: ``x: T`` (a parameter), ``-> T``,
#: ``name: T = value``.
_ANNOTATED_AFTER = {syms.tname: token.COLON, syms.funcdef: token.RARROW, syms.annassign: token.COLON}
#: Where an annotation cannot be above: the statements and what holds parameters and defaults.
_NO_ANNOTATION_ABOVE = frozenset({
    syms.simple_stmt, syms.suite, syms.file_input, syms.classdef, syms.parameters,
    syms.typedargslist, syms.varargslist, syms.decorator, syms.decorated})


def is_type_argument(node: pytree.Base) -> bool:
    """Whether ``node`` is the class argument of ``isinstance(x, node)`` or ``issubclass``,
    alone or in a tuple of them (``isinstance(x, (A, node))``), parentheses allowed."""
    parent = node.parent
    while parent is not None and (parent.type == syms.testlist_gexp or (
            parent.type == syms.atom and parent.children[0].type == token.LPAR)):
        node, parent = parent, parent.parent
    if parent is None or parent.type != syms.arglist:
        return False
    arguments = [child for child in parent.children if child.type != token.COMMA]
    trailer = parent.parent
    call = trailer.parent if trailer is not None else None
    return len(arguments) > 1 and arguments[1] is node and call is not None \
        and call.type == syms.power and len(call.children) > 1 and call.children[1] is trailer \
        and call.children[0].type == token.NAME and call.children[0].value in TYPE_CHECKS


#: What holds several types in a typing subscript or a typing function's argument, around a name:
#: ``(A, B)``, ``[A, B]`` (``Callable[[A], B]``), ``A, B`` (a subscript's list).
_TYPE_GROUPS = frozenset({syms.testlist_gexp, syms.listmaker, syms.subscriptlist})


def in_typing_type(node: pytree.Base) -> bool:
    """Whether ``node`` is a type that ``typing`` reads: in the subscript of a generic type
    (``Union[node, B]``, ``Callable[[node], B]``: :func:`~.introspection.is_typing_generic`),
    alone or grouped, parentheses allowed, or a type argument of ``cast``, ``TypeVar``,
    ``NewType`` (:func:`~.introspection.is_type_position`)."""
    parent = node.parent
    while parent is not None and (parent.type in _TYPE_GROUPS or (
            parent.type == syms.atom and parent.children[0].type in (token.LPAR, token.LSQB))) \
            and not any(child.type == syms.comp_for for child in parent.children):
        node, parent = parent, parent.parent
    if parent is None:
        return False
    if parent.type == syms.trailer and parent.children[0].type == token.LSQB:
        return _trailed_name(parent) is not None and is_typing_generic(_trailed_name(parent))
    keyword = None
    if parent.type == syms.argument and len(parent.children) == 3 and parent.children[2] is node \
            and parent.children[1].type == token.EQUAL:
        keyword, node, parent = str(parent.children[0].value), parent, parent.parent
    index = None
    if parent is not None and parent.type == syms.arglist:
        if keyword is None:
            arguments = [child for child in parent.children if child.type != token.COMMA]
            if any(child.type == syms.argument for child in arguments[:arguments.index(node)]):
                return False
            index = arguments.index(node)
        parent = parent.parent
    elif keyword is None:
        index = 0
    if parent is None or parent.type != syms.trailer or parent.children[0].type != token.LPAR:
        return False
    return is_type_position(typing_function(_trailed_name(parent)), index, keyword)


def _trailed_name(trailer: pytree.Base) -> Optional[str]:
    """The dotted name that ``trailer`` (a ``[...]`` or ``(...)``) directly follows, if any."""
    power = trailer.parent
    if power is None or power.type != syms.power:
        return None
    return spelled_name(power.children[:power.children.index(trailer)])


def is_introspection_argument(node: pytree.Base) -> bool:
    """Whether ``node`` is the first argument of a call that only looks at it (``dir(node)``,
    ``inspect.getmembers(node, ...)``: :func:`~.introspection.is_introspection_call`)."""
    parent = node.parent
    if parent is not None and parent.type == syms.arglist:
        if parent.children[0] is not node:
            return False
        parent = parent.parent
    if parent is None or parent.type != syms.trailer or parent.children[0].type != token.LPAR:
        return False
    call = parent.parent
    if call is None or call.type != syms.power:
        return False
    at = call.children.index(parent)
    return is_introspection_call(spelled_name(call.children[:at]))


def in_annotation(node: pytree.Base) -> bool:
    """Whether ``node`` is in an annotation: a parameter's (``x: node``), a return's (``->
    Optional[node]``), a variable's (``x: node = value``)."""
    parent = node.parent
    while parent is not None and parent.type not in _NO_ANNOTATION_ABOVE:
        after = _ANNOTATED_AFTER.get(parent.type)
        if after is not None:
            previous = node.prev_sibling
            return previous is not None and previous.type == after
        node, parent = parent, parent.parent
    return False


def name_reference(node: pytree.Base, resolvers: Iterable[ImportNames],
                   wanted: AbstractSet[str]) -> Optional[Reference]:
    """The reference to one of ``wanted`` (qualified names) that ``node`` starts with, if any.

    ``node`` is a ``power`` node or a NAME leaf; the longest dotted prefix that resolves to a
    wanted name wins (``tf.train.Saver(...).save`` names ``tensorflow.train.Saver``).
    """
    for resolver in resolvers:
        found = _longest(node, qualified_prefixes(node, resolver), wanted)
        if found is not None:
            return found
    return None


def name_references(node: pytree.Base, resolvers: Sequence[ImportNames],
                    wanted: Sequence[AbstractSet[str]]) -> list[Optional[Reference]]:
    """:func:`name_reference` of ``node`` for each of ``wanted``, in order: each resolver's
    prefixes are worked out once for all of them (qualifying a name is the cost)."""
    prefixes: list[list[tuple[int, str]]] = []
    found: list[Optional[Reference]] = []
    for names in wanted:
        reference = None
        for at, resolver in enumerate(resolvers):
            if at == len(prefixes):
                prefixes.append(qualified_prefixes(node, resolver))
            reference = _longest(node, prefixes[at], names)
            if reference is not None:
                break
        found.append(reference)
    return found


def qualified_prefixes(node: pytree.Base, resolver: ImportNames,
                       stems: Optional[AbstractSet[str]] = None) -> list[tuple[int, str]]:
    """``(end, qualified name)`` of each dotted prefix of ``node`` that ``resolver`` resolves,
    shortest first: ``tf.estimator.RunConfig(x)`` gives ``(1, "tensorflow")``, ``(2,
    "tensorflow.estimator")``, ``(3, "tensorflow.estimator.RunConfig")``. ``end`` counts the
    children of a ``power`` node that spell the prefix (1 for a bare NAME). With ``stems``
    (the names looked for and their dotted prefixes), the walk stops at the first prefix
    that is none of them: no longer one can be looked for."""
    if node.type == syms.power:
        head = node.children[0]
        if head.type != token.NAME or head.value not in resolver.heads:
            return []
        parts, found, children = [head.value], [], node.children
        end = 1
        while True:
            end = _through_accessor(children, end, parts, resolver)
            qualified = resolver.qualify(".".join(parts))
            if qualified is not None:
                found.append((end, qualified))
            if end == len(children) or not is_attribute_trailer(children[end]) \
                    or (stems is not None and qualified not in stems
                        and not resolver.leads_to_accessor(".".join(parts))):
                break
            parts.append(children[end].children[1].value)
            end += 1
        return found
    if node.type != token.NAME or node.value not in resolver.bindings \
            or not _is_plain_reference(node):
        return []
    qualified = resolver.qualify(node.value)
    return [(1, qualified)] if qualified is not None else []


def _through_accessor(children: Sequence[pytree.Base], end: int, parts: list[str],
                      resolver: ImportNames) -> int:
    """Past the ``()`` at ``children[end]`` when ``parts`` spell a module accessor function and
    an attribute follows (``contrib.tpu().X``: its last part becomes ``tpu()``), else ``end``."""
    if end + 1 < len(children) and is_empty_call(children[end]) \
            and is_attribute_trailer(children[end + 1]) and resolver.accessor(".".join(parts)) is not None:
        parts[-1] += ACCESSOR_CALL
        return end + 1
    return end


def _longest(node: pytree.Base, prefixes: list[tuple[int, str]],
             wanted: AbstractSet[str]) -> Optional[Reference]:
    for end, qualified in reversed(prefixes):
        if qualified in wanted:
            call = node.children[end] if node.type == syms.power and end < len(node.children) \
                else None
            return Reference(node, end, qualified, call if is_call_trailer(call) else None,
                             *position(node))
    return None


@dataclass(frozen=True)
class WantedNames:
    """What one rule asks to be offered: the resolvers of its names' root packages, the names
    whose calls it wants and those whose every reference it wants."""

    resolvers: tuple[ImportNames, ...]
    calls: frozenset[str]
    uses: frozenset[str]

    @cached_property
    def names(self) -> frozenset[str]:
        return self.calls | self.uses


_DETOURS = frozenset({"tensorflow.compat", "tensorflow.python", "tensorflow.core"})


class NameIndex:
    """What several rules look for in one file, asked of each of its names at once."""

    def __init__(self, wanted: Sequence[WantedNames]) -> None:
        self.wanted = wanted
        names = frozenset().union(*(one.names for one in wanted))
        #: Every dotted prefix of a wanted name, and the ways to spell TensorFlow's modules that
        #: lead to one through another name (``tf.compat.v1...``, ``tf.python.ops...``).
        self.stems = frozenset(".".join(name.split(".")[:end]) for name in names
                               for end in range(1, name.count(".") + 2)) | _DETOURS

    def references_at(self, node: pytree.Base) -> list[tuple[int, Reference]]:
        """``(index in wanted, reference)`` for each of the wanted that ``node`` (a ``power``
        node or a NAME leaf) is a reference to: a call of one of its ``calls``, any reference
        to one of its ``uses`` (the longest prefix wins, as :func:`name_reference`). Each
        resolver's prefixes are worked out once for all of them."""
        prefixes: dict[int, list[tuple[int, str]]] = {}
        found = []
        for index, one in enumerate(self.wanted):
            for resolver in one.resolvers:
                key = id(resolver)
                if key not in prefixes:
                    prefixes[key] = qualified_prefixes(node, resolver, self.stems)
                reference = _longest(node, prefixes[key], one.names) if prefixes[key] else None
                if reference is not None:
                    if reference.name in one.uses or reference.call is not None:
                        found.append((index, reference))
                    break
        return found


def _is_plain_reference(leaf: pytree.Leaf) -> bool:
    """A NAME that reads what it is bound to: not the head of a ``power`` (that node is asked),
    not an attribute, keyword, parameter, import or definition name, nor a name its statement
    binds (:func:`~npu_codemod.codemods.scopes.binding`: a target, ``del``, a lambda's
    parameter). A bare base class (``class A(Model):``) and a bare annotation (``def f(x:
    Tensor) -> Tensor``) read the name."""
    parent = leaf.parent
    if parent is not None and parent.type in _PARAMETER_LISTS:
        previous = leaf.prev_sibling
        return previous is not None and previous.type == token.EQUAL  # a default: f(x=name)
    if parent is not None and parent.type in _READ_AFTER:
        previous = leaf.prev_sibling
        return previous is not None and previous.type == _READ_AFTER[parent.type]
    if parent is None or parent.type in _NOT_REFERENCES:
        return False
    if parent.type == syms.power:
        return False
    if parent.type == syms.trailer and parent.children[0].type == token.DOT:
        return False  # ``x.name``: an attribute (``f(name)``, ``x[name]`` read the name)
    if parent.type in (syms.argument, syms.namedexpr_test) and leaf is parent.children[0] \
            and len(parent.children) == 3:
        return False  # f(name=...), f(name := ...), (name := ...)
    return binding(leaf) not in _TARGETS


#: Where a NAME right after a token reads its name, though its parent holds a definition:
#: ``x: Tensor`` (a parameter's annotation), ``-> Tensor``, ``class A(Model):`` (a lone base).
_READ_AFTER = {syms.tname: token.COLON, syms.funcdef: token.RARROW, syms.classdef: token.LPAR}
#: The bindings whose name is no reference (:func:`~npu_codemod.codemods.scopes.binding`).
_TARGETS = frozenset({"assigned", "deleted", "parameter"})


def qualified_names(names: Iterable[str]) -> frozenset[str]:
    """``names`` as :func:`name_reference` compares them (``compat.v1`` folded)."""
    return frozenset(canonical(name) for name in names)


def name_roots(names: Iterable[str]) -> tuple[str, ...]:
    """The root packages of ``names``, in first-seen order: whose imports to follow."""
    return tuple(dict.fromkeys(name.split(".")[0] for name in names))


def references_under(tree: pytree.Node, resolvers: Sequence[ImportNames]) -> list[Reference]:
    """Every reference in ``tree`` to a name that one of ``resolvers`` binds, in source order,
    each with the full qualified name it spells: one walk for a rule that needs every use of
    a module rather than a few names (an audit of every TensorFlow API a file uses).

    A reference is the longest dotted name a bound NAME starts: ``tf.train.AdamOptimizer`` in
    ``tf.train.AdamOptimizer(lr).minimize(loss)`` (``node`` the ``power``, ``call`` its call),
    a bare name (``xavier_initializer`` after ``from tensorflow.contrib.layers import
    xavier_initializer``, called or passed as a value), or a decorator's name (``@tf.function``:
    ``node`` is the decorator's ``dotted_name`` or NAME, ``end`` its number of children, no
    ``call``). ``name`` is folded as :meth:`ImportNames.qualify` folds it (``compat.v1``, internal
    modules). Imports, definitions, keywords and the names a statement binds (assignment and
    loop targets, ``with``/``except ... as``, ``del``, a lambda's parameters) are not
    references; a bare base class and a bare annotation are.
    """
    by_head = {name: resolver for resolver in reversed(resolvers) for name in resolver.heads}
    found = []
    for leaf in post_order(tree, {token.NAME: frozenset(by_head)}, frozenset()):
        reference = _reference_at(leaf, by_head[leaf.value])
        if reference is not None:
            found.append(reference)
    return found


def _reference_at(leaf: pytree.Leaf, resolver: ImportNames) -> Optional[Reference]:
    """The reference that the bound NAME ``leaf`` starts, if it starts one."""
    parent = leaf.parent
    if parent is None:
        return None
    if parent.type == syms.power and parent.children[0] is leaf:
        return _dotted_power(parent, resolver)
    decorator = _decorator_name(leaf)
    if decorator is not None:
        return _dotted_decorator(decorator, leaf, resolver)
    if not _is_plain_reference(leaf):
        return None
    qualified = resolver.qualify(leaf.value)
    return Reference(leaf, 1, qualified, None, leaf.lineno, leaf.column) if qualified else None


def _dotted_power(power: pytree.Node, resolver: ImportNames) -> Optional[Reference]:
    """The reference spelled by the NAME and ``.attr`` trailers that ``power`` starts with."""
    children = power.children
    parts = [children[0].value]
    end = _through_accessor(children, 1, parts, resolver)
    while end < len(children) and is_attribute_trailer(children[end]) \
            and children[end].children[1].value not in INTROSPECTION_ATTRIBUTES:
        parts.append(children[end].children[1].value)
        end = _through_accessor(children, end + 1, parts, resolver)
    qualified = resolver.qualify(".".join(parts))
    if not qualified:
        return None
    call = children[end] if end < len(children) and is_call_trailer(children[end]) else None
    head = children[0]
    return Reference(power, end, qualified, call, head.lineno, head.column)


def _decorator_name(leaf: pytree.Leaf) -> Optional[pytree.Base]:
    """The name of the decorator whose first NAME is ``leaf`` (``@tf.function``), if any."""
    parent = leaf.parent
    if parent.type == syms.decorator and parent.children[1] is leaf:
        return leaf
    if parent.type == syms.dotted_name and parent.children[0] is leaf and \
            parent.parent is not None and parent.parent.type == syms.decorator:
        return parent
    return None


def _dotted_decorator(name: pytree.Base, head: pytree.Leaf,
                      resolver: ImportNames) -> Optional[Reference]:
    qualified = resolver.qualify(dotted_name(name))
    if not qualified:
        return None
    end = len(name.children) if name.type == syms.dotted_name else 1
    return Reference(name, end, qualified, None, head.lineno, head.column)


#: A dotted name in the code of an f-string's replacement field.
_DOTTED = re.compile(r"(?<![\w.'\"])[A-Za-z_]\w*(?:[ \t]*\.[ \t]*[A-Za-z_]\w*)*")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")


@dataclass(frozen=True)
class StringReference:
    """A name in an f-string's replacement field (``{hvd.rank()}``), which fissix keeps as one
    STRING leaf: ``leaf.value[start:end]`` spells ``name``."""

    leaf: pytree.Leaf
    start: int
    end: int
    name: str

    @property
    def line(self) -> int:
        return int(self.leaf.lineno) + str(self.leaf.value).count("\n", 0, self.start)

    @property
    def column(self) -> int:
        newline = str(self.leaf.value).rfind("\n", 0, self.start)
        return int(self.leaf.column) + self.start if newline < 0 else self.start - newline - 1


def fstring_references(leaf: pytree.Leaf, resolvers: Iterable[ImportNames],
                       wanted: AbstractSet[str]) -> list[StringReference]:
    """The names among ``wanted`` that the replacement fields of the f-string ``leaf`` use
    (none when it is not an f-string), in order. A rule respells one by replacing
    ``leaf.value[start:end]`` (from the last to the first, so the offsets hold)."""
    text = leaf.value
    opening = next((index for index, char in enumerate(text) if char in "'\""), 0)
    if "f" not in text[:opening].lower():
        return []
    found = []
    for start, end in _fields(text, opening):
        code = _QUOTED.sub(lambda match: " " * len(match.group()), text[start:end])
        for match in _DOTTED.finditer(code):
            spelled = "".join(match.group().split())
            for resolver in resolvers:
                qualified = resolver.qualify(spelled)
                if qualified is not None and qualified in wanted:
                    found.append(StringReference(leaf, start + match.start(), start + match.end(),
                                                 qualified))
                    break
    return found


def _fields(text: str, opening: int) -> list[tuple[int, int]]:
    """(start, end) of the code of each replacement field of an f-string's text, up to its
    ``!conversion`` or ``:format`` (fields nested in a format are fields too; ``{{`` is a
    brace, not a field), in order."""
    found: list[tuple[int, int]] = []
    starts: list[int] = []
    index = opening
    while index < len(text):
        char = text[index]
        if not starts and char in "{}" and text[index + 1:index + 2] == char:
            index += 2
            continue
        if char == "{":
            starts.append(index + 1)
        elif char == "}" and starts:
            start = starts.pop()
            found.append((start, _code_end(text, start, index)))
        index += 1
    return sorted(found)


def _code_end(text: str, start: int, end: int) -> int:
    """Where the expression of a field ``text[start:end]`` ends: at a top-level ``!``/``:``."""
    nesting = 0
    for index in range(start, end):
        char = text[index]
        if char in "([{":
            nesting += 1
        elif char in ")]}":
            nesting -= 1
        elif char in "!:" and nesting == 0 and text[index + 1:index + 2] != "=":
            return index
    return end
