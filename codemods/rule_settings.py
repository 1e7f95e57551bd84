"""Typed per-rule settings: a rule's ``Settings`` dataclass built from a config section.

Like all-repos, a section is validated by building ``Settings(**section)``; before that every
value is checked against the field's annotation, so a typo or a wrong type is one clear line
instead of a crash deep inside a worker.
"""

from __future__ import annotations

import dataclasses
import sys
import typing
from typing import Any, Literal, Mapping, Union

from .rule import Rule

if sys.version_info >= (3, 10):
    from types import UnionType

    _UNIONS: tuple[Any, ...] = (Union, UnionType)
else:  # pragma: no cover - Python 3.9
    _UNIONS = (Union,)


class SettingsError(ValueError):
    """A rule's settings section has an unknown key or a value of the wrong type."""


def build_settings(rule: Rule, section: Mapping[str, Any]) -> Any:
    """``rule.Settings(**section)`` after checking every key and value against its fields."""
    cls = rule.Settings
    if cls is None:
        raise SettingsError(f"rule {rule.id} takes no settings")
    hints = typing.get_type_hints(cls)
    known = [field.name for field in dataclasses.fields(cls)]
    for key, value in section.items():
        if key not in known:
            raise SettingsError(f"unknown setting {key!r} for rule {rule.id} "
                                f"(known: {', '.join(known) or 'none'})")
        if not matches(value, hints[key]):
            raise SettingsError(f"setting {key!r} of rule {rule.id} must be "
                                f"{describe(hints[key])}, got {value!r}")
    try:
        return cls(**section)
    except (TypeError, ValueError) as exc:  # __post_init__ checks of the rule's own
        raise SettingsError(f"rule {rule.id}: {exc}") from None


def settings_fields(rule: Rule) -> list[dict[str, Any]]:
    """Name, type, default and current value of each setting, for ``npu-codemod rules``."""
    if rule.Settings is None:
        return []
    hints = typing.get_type_hints(rule.Settings)
    defaults = rule.Settings()
    return [{"name": field.name, "type": describe(hints[field.name]),
             "default": getattr(defaults, field.name), "value": getattr(rule.settings, field.name)}
            for field in dataclasses.fields(rule.Settings)]


def matches(value: Any, hint: Any) -> bool:
    """Does a TOML value fit the annotation? Covers the types TOML can express."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return True
    if origin is Literal:
        return any(value == arg and type(value) is type(arg) for arg in args)
    if origin in _UNIONS:
        return any(matches(value, arg) for arg in args)
    if hint is type(None):
        return value is None
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if origin in (list, tuple, typing.Sequence):
        item = args[0] if args else Any
        return isinstance(value, list) and all(matches(element, item) for element in value)
    if origin is dict:
        return isinstance(value, dict)
    return isinstance(value, hint) if isinstance(hint, type) else True


def describe(hint: Any) -> str:
    """A reader's name for an annotation: ``one of 'inline', 'helper'``, ``str or None``."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is Literal:
        return "one of " + ", ".join(repr(arg) for arg in args)
    if origin in _UNIONS:
        return " or ".join(describe(arg) for arg in args)
    if hint is type(None):
        return "None"
    if origin in (list, tuple, typing.Sequence):
        return f"a list of {describe(args[0]) if args else 'values'}"
    return getattr(hint, "__name__", str(hint))
