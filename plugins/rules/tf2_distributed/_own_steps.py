"""Which Keras model classes aggregate their own gradients: the ones whose ``train_step``
NPU068 all-reduces, in whichever file of the repository they are defined. A ``train_step`` that
only calls ``self.optimizer.minimize(...)`` is none: the optimizer the model is compiled with
applies the gradients, and wrapping it at ``compile`` aggregates them.

A class that overrides ``train_step`` and applies gradients there is a custom loop: NPU068
inserts the ``all_reduce`` in its step. Wrapping the optimizer of one of its instances too
(``model.compile(optimizer=...)`` in a training script that imports the class, or the class's
own ``super().compile(optimizer=...)``) would all-reduce every step's gradients twice
(``spec/rules-tf2.md``, NPU068: "never both"). Each file says which of its module-level
classes do (:func:`own_step_facts`, ``npu068-own-step:<module>.<Class>``); a call of one of
them, or of a repository class that derives from one (the ``class:`` facts'
lineage), builds such a model.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Optional

from npu_codemod.api import Base, FileContext, symbols, tokens
from npu_codemod.api._toolkit import (
    KERAS_MODEL_CLASSES,
    LineStarts,
    assigned_values,
    enclosing_scope,
    is_call_trailer,
    module_parts,
    repository_classes,
    subclass_calls,
)

#: Fact: ``npu068-own-step:<module>.<Class>``, a class whose ``train_step`` applies gradients.
OWN_STEP = "npu068-own-step:"


@lru_cache(maxsize=8)
def own_step_classes(text: str) -> frozenset[str]:
    """Module-level classes of ``text`` that override ``train_step`` and apply gradients in it."""
    found = set()
    for match in _CLASS.finditer(text):
        body = text[match.end():]
        following = _NEXT_TOP.search(body)
        body = body[:following.start()] if following else body
        if _TRAIN_STEP.search(body) and (".apply_gradients(" in body
                                         or ".minimize(" in _COMPILED_MINIMIZE.sub("", body)):
            found.add(match.group(1))
    return frozenset(found)


#: ``self.optimizer.minimize(``: a step with the optimizer the model is compiled with, which
#: aggregates once wrapped at ``compile``; no custom loop of NPU068's.
_COMPILED_MINIMIZE = re.compile(r"(?<![\w.])self\s*\.\s*optimizer\s*\.\s*minimize\(")


_CLASS = LineStarts(r"class\s+(\w+)\b[^\n]*:")
_NEXT_TOP = re.compile(r"^\S", re.MULTILINE)
_TRAIN_STEP = re.compile(r"^\s+def\s+train_step\s*\(", re.MULTILINE)


def own_step_facts(path: str, text: str) -> frozenset[str]:
    """The :data:`OWN_STEP` facts of one file."""
    if "train_step" not in text:
        return frozenset()
    module = ".".join(module_parts(path))
    return frozenset(f"{OWN_STEP}{module}.{name}" for name in own_step_classes(text))


def _qualified(ctx: FileContext) -> frozenset[str]:
    """The module-qualified classes of the repository (this file's too) that step themselves."""
    return frozenset(fact[len(OWN_STEP):] for fact in ctx.facts | own_step_facts(ctx.path, ctx.original)
                     if fact.startswith(OWN_STEP))


def builds_own_step_model(receiver: list[Base], ctx: FileContext) -> bool:
    """Is the receiver (a name) bound in its scope to a call of a class that steps itself:
    one of this file (by its name), or a repository class of any file whose lineage holds one
    (:func:`subclass_calls` of the Keras model classes, matched by the call's node)?"""
    if len(receiver) != 1 or receiver[0].type != tokens.NAME:
        return False
    values = assigned_values(receiver[0], receiver[0].value) or []
    calls = [value for value in values if value.type == symbols.power]
    if not calls:
        return False
    local = own_step_classes(ctx.original)
    if any(call.children[0].type == tokens.NAME and call.children[0].value in local for call in calls):
        return True
    stepping = _qualified(ctx)
    if not stepping:
        return False
    for found in subclass_calls(ctx, KERAS_MODEL_CLASSES):
        if any(found.reference.node is call for call in calls) \
                and any(name in stepping for name, _ in found.cls.lineage):
            return True
    return False


def in_own_step_class(receiver: list[Base], ctx: FileContext) -> bool:
    """``super().compile(...)``/``self.compile(...)`` in a method of a class that steps itself
    (this file's, or one deriving from a repository class that does)."""
    if not _is_self(receiver):
        return False
    owner = _class_of(receiver[0])
    if owner is None:
        return False
    name = owner.children[1].value
    if name in own_step_classes(ctx.original):
        return True
    stepping = _qualified(ctx)
    qualified = ".".join((*module_parts(ctx.path), name))
    lineage = _lineage(ctx, qualified)
    return any(part in stepping for part in lineage)


def _is_self(receiver: list[Base]) -> bool:
    """``self`` or ``super()``."""
    if not receiver or receiver[0].type != tokens.NAME:
        return False
    if len(receiver) == 1:
        return bool(receiver[0].value == "self")
    return len(receiver) == 2 and receiver[0].value == "super" and is_call_trailer(receiver[1]) \
        and len(receiver[1].children) == 2


def _class_of(node: Base) -> Optional[Base]:
    """The class whose method ``node`` is in, or None."""
    scope = enclosing_scope(node)
    if scope.type != symbols.funcdef:
        return None
    outer = enclosing_scope(scope)
    return outer if outer.type == symbols.classdef else None


def _lineage(ctx: FileContext, qualified: str) -> tuple[str, ...]:
    """The repository classes from ``qualified`` up to its Keras model base (from the
    ``class:`` facts), or none when it is not known to be one."""
    found = repository_classes(frozenset(ctx.facts)).subclasses(KERAS_MODEL_CLASSES).get(qualified)
    return tuple(name for name, _ in found.lineage) if found is not None else ()
