"""The API reference, ``docs/api.md``: every name of ``npu_codemod.api.__all__`` with its kind,
signature and documentation, grouped as the comments inside ``__all__`` group them.

The documentation is read from the code, so the page cannot drift from it: a name's ``#:``
comment in ``npu_codemod/api/__init__.py`` (above an assignment, or above the name in an import list),
else its own docstring, else the ``#:`` comment where the module it is imported from assigns
it; a class of npu-codemod also gets its commented class attributes (as Sphinx reads ``#:``
comments) and its public methods and properties. ``python -m
npu_codemod.orchestrator.api_reference [--check] [FILE]`` writes the page, or checks that the
committed one is current.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import io
import re
import sys
import textwrap
import tokenize
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from types import ModuleType
from typing import Any, Optional

from npu_codemod import api
from npu_codemod.orchestrator.generated_docs import write_or_check

#: The file the repository commits.
API_REFERENCE = "docs/api.md"
#: The command that regenerates it.
REGENERATE = "python -m npu_codemod.orchestrator.api_reference"
#: Signatures longer than this get one parameter a line.
WIDTH = 88
#: A ``#:`` comment's target: ``name = ...``, ``name: type``, ``name,`` in an import list, or
#: a one-name ``from module import name``.
_TARGET = re.compile(r"^(?:from\s+[\w.]+\s+import\s+)?(\w+)(?:\s+as\s+(\w+))?\s*(?:[:=,]|$)")
_ROLE = re.compile(r":(class|func|meth|attr|data|mod|exc|obj):`(~?)([\w.]+)`")
_LITERAL = re.compile(r"``(.+?)``", re.DOTALL)
_CONSTANTS = (str, int, float, bool, tuple, frozenset)


@dataclass(frozen=True)
class Member:
    """A documented part of a class: an attribute, a method or a property."""

    heading: str
    code: str
    doc: str


@dataclass(frozen=True)
class Entry:
    """One name of ``__all__`` as the page shows it."""

    name: str
    kind: str
    origin: str
    code: str
    doc: str
    attributes: tuple[Member, ...] = ()
    methods: tuple[Member, ...] = ()


def groups(source: str) -> list[tuple[str, list[str]]]:
    """The names of ``__all__`` in ``source``, under the comment that precedes each run of them."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    found: list[tuple[str, list[str]]] = []
    inside = False
    for token in tokens:
        if not inside:
            inside = token.type == tokenize.NAME and token.string == "__all__"
        elif token.type == tokenize.COMMENT:
            found.append((token.string.lstrip("#").strip(), []))
        elif token.type == tokenize.STRING:
            if not found:
                found.append(("", []))
            found[-1][1].append(ast.literal_eval(token.string))
        elif token.type == tokenize.OP and token.string == "]":
            break
    return found


def comment_docs(source: str) -> dict[str, str]:
    """``#:`` comments by the name they document (the statement or import name right below)."""
    docs: dict[str, str] = {}
    pending: list[str] = []
    for line in source.splitlines():
        stripped = line.strip()
        if stripped.startswith("#:"):
            pending.append(stripped[2:].strip())
            continue
        match = _TARGET.match(stripped) if pending else None
        if match:
            docs[match.group(2) or match.group(1)] = " ".join(pending)
        pending = []
    return docs


def import_origins(source: str) -> dict[str, tuple[str, str]]:
    """For each name ``source`` imports: (the module it comes from, its name there)."""
    origins = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                origins[alias.asname or alias.name] = (node.module, alias.name)
    return origins


@cache
def _module_comments(module_name: str) -> dict[str, str]:
    module = sys.modules.get(module_name)
    try:
        return comment_docs(inspect.getsource(module)) if module else {}
    except (OSError, TypeError):  # a module without source (a compiled one)
        return {}


class ApiPage:
    """The page being built: ``npu_codemod.api`` read through its source."""

    def __init__(self, module: ModuleType = api) -> None:
        self.module = module
        self.source = inspect.getsource(module)
        self.comments = comment_docs(self.source)
        self.origins = import_origins(self.source)

    @cached_property
    def names(self) -> set[str]:
        return {name for _, names in groups(self.source) for name in names}

    def doc(self, name: str) -> str:
        """The documentation of ``name`` ('' when it has none), in the order of the module doc."""
        if name in self.comments:
            return self.comments[name]
        obj = getattr(self.module, name)
        if _has_own_doc(obj):
            return inspect.getdoc(obj) or ""
        module, original = self.origins.get(name, ("", ""))
        return _module_comments(module).get(original, "") if module else ""

    def origin(self, name: str) -> str:
        """The module that defines ``name`` (for a value: the one ``api`` imports it from)."""
        obj = getattr(self.module, name)
        if inspect.ismodule(obj):
            return obj.__name__
        if (inspect.isclass(obj) or inspect.isroutine(obj)) and obj.__module__ != "builtins":
            return obj.__module__
        return self.origins.get(name, (self.module.__name__, ""))[0]

    def undocumented(self) -> list[str]:
        """The names of ``__all__`` without any documentation."""
        return [name for _, names in groups(self.source) for name in names if not self.doc(name)]

    def entry(self, name: str) -> Entry:
        obj = getattr(self.module, name)
        ours = (inspect.isclass(obj) and obj.__name__ == name  # an alias: see the class
                and obj.__module__.startswith("npu_codemod."))
        return Entry(name, kind(name, obj), self.origin(name), code(name, obj), self.doc(name),
                     class_attributes(obj) if ours else (), methods(obj) if ours else ())

    def page(self) -> str:
        """The Markdown of ``docs/api.md``."""
        parts = [f"# API reference: `{self.module.__name__}`\n",
                 (f"<!-- Generated by `{REGENERATE}` from the source of "
                  f"{self.module.__name__}: do not edit. -->\n"),
                 markdown(inspect.getdoc(self.module) or "", self.names) + "\n", "## Contents\n"]
        sections = groups(self.source)
        for title, names in sections:
            listed = ", ".join(f"[`{name}`](#{anchor(name)})" for name in names)
            parts.append(f"- [{title}](#{anchor(title)}): {listed}")
        parts.append("")
        for title, names in sections:
            parts.append(f"## {title}\n")
            parts += [render(self.entry(name), self.names) for name in names]
        return "\n".join(parts).rstrip() + "\n"


def _has_own_doc(obj: Any) -> bool:
    """A docstring that describes ``obj`` itself: a class, function or module of a library,
    not a builtin type standing in for something else (``Capture = dict``)."""
    if not (inspect.isclass(obj) or inspect.isroutine(obj) or inspect.ismodule(obj)):
        return False
    return getattr(obj, "__module__", None) != "builtins" and bool(inspect.getdoc(obj))


def kind(name: str, obj: Any) -> str:
    """What ``name`` is, in a few words: ``class``, ``dataclass``, ``function``, ``alias of ...``."""
    if inspect.ismodule(obj):
        return "module"
    if inspect.isclass(obj):
        what = ("exception" if issubclass(obj, BaseException)
                else "dataclass" if dataclasses.is_dataclass(obj) else "class")
        if obj.__name__ != name:
            return f"{what}, alias of `{_qualified(obj)}`"
        return what
    if inspect.isroutine(obj):
        return "function"
    if typing.get_origin(obj) is not None:
        return "type"
    if isinstance(obj, _CONSTANTS):
        return "constant"
    return f"`{type(obj).__name__}` object"


def _qualified(obj: Any) -> str:
    module = obj.__module__
    return obj.__qualname__ if module == "builtins" else f"{module}.{obj.__qualname__}"


def code(name: str, obj: Any) -> str:
    """How ``name`` is called or what it holds: a signature, ``NAME = value``, or ''."""
    if inspect.isclass(obj) and obj.__name__ != name and obj.__module__ == "builtins":
        return f"{name} = {obj.__name__}"
    if inspect.isclass(obj) and issubclass(obj, BaseException):
        return ""
    if inspect.isclass(obj) or inspect.isroutine(obj):
        return signature(name, obj, drop_self=False)
    if typing.get_origin(obj) is not None or isinstance(obj, _CONSTANTS):
        return f"{name} = {_constant(obj)}"
    return ""


def _constant(obj: Any) -> str:
    """``repr`` of a constant; a set's items sorted, so the page is the same in every process
    (string hashing, and so set order, changes between interpreters)."""
    if isinstance(obj, frozenset):
        return f"frozenset({{{', '.join(map(repr, sorted(obj, key=repr)))}}})" if obj else "frozenset()"
    return repr(obj)


class _Raw:
    """An annotation written as a string (``from __future__ import annotations``), shown as
    written rather than quoted."""

    def __init__(self, text: str) -> None:
        quoted = len(text) > 1 and text[0] == text[-1] and text[0] in "'\""
        self.text = text[1:-1] if quoted else text  # ``ctx: "FileContext"``

    def __repr__(self) -> str:
        return self.text


def signature(name: str, obj: Any, drop_self: bool) -> str:
    """``name(parameters) -> return``, one parameter a line when that is too long for one."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):  # builtins without a signature
        return ""
    parameters = [p.replace(annotation=_raw(p.annotation)) for p in sig.parameters.values()]
    if drop_self and parameters and parameters[0].name in ("self", "cls"):
        parameters = parameters[1:]
    returns = sig.return_annotation
    if inspect.isclass(obj) or returns is inspect.Signature.empty:
        returns = inspect.Signature.empty
    else:
        returns = _raw(returns)
    sig = sig.replace(parameters=parameters, return_annotation=returns)
    text = f"{name}{sig}"
    if len(text) <= WIDTH or not parameters:
        return text
    arrow = f" -> {inspect.formatannotation(returns)}" if returns is not inspect.Signature.empty else ""
    lines = [f"    {_parameter_text(sig, p)}," for p in parameters]
    return f"{name}(\n" + "\n".join(lines) + f"\n){arrow}"


def _raw(annotation: Any) -> Any:
    return _Raw(annotation) if isinstance(annotation, str) else annotation


def _parameter_text(sig: inspect.Signature, parameter: inspect.Parameter) -> str:
    """One parameter as the one-line signature spells it (``*``, ``/`` markers included)."""
    single = sig.replace(parameters=[parameter], return_annotation=inspect.Signature.empty)
    return str(single)[1:-1]


def class_attributes(cls: type) -> tuple[Member, ...]:
    """The attributes the class body gives a ``#:`` comment, as written there."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return ()
    docs = comment_docs(source)
    members = []
    definition = ast.parse(source).body[0]
    for node in definition.body if isinstance(definition, ast.ClassDef) else ():
        if isinstance(node, (ast.AnnAssign, ast.Assign)):
            target = node.target if isinstance(node, ast.AnnAssign) else node.targets[0]
            if isinstance(target, ast.Name) and target.id in docs:
                text = ast.get_source_segment(source, node) or target.id
                members.append(Member(target.id, text, docs[target.id]))
    return tuple(members)


def methods(cls: type) -> tuple[Member, ...]:
    """The public methods and properties the class defines itself, in definition order."""
    members = []
    for name, value in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(value, (property, cached_property)):
            getter = value.fget if isinstance(value, property) else value.func
            if getter is None:  # a property without a getter shows nothing
                continue
            returns = inspect.signature(getter).return_annotation
            shown = "" if returns is inspect.Signature.empty else f": {_raw(returns)!r}"
            members.append(Member(f"{cls.__name__}.{name} (property)", f"{name}{shown}",
                                  inspect.getdoc(getter) or ""))
        elif isinstance(value, (staticmethod, classmethod)) or inspect.isfunction(value):
            function = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
            members.append(Member(f"{cls.__name__}.{name}",
                                  signature(name, function, drop_self=True),
                                  inspect.getdoc(function) or ""))
    return tuple(members)


def render(entry: Entry, names: set[str]) -> str:
    """One name's section of the page."""
    parts = [f"### `{entry.name}`", f"*{entry.kind}*, defined in `{entry.origin}`"]
    if entry.code:
        parts.append(f"```python\n{entry.code}\n```")
    if entry.doc:
        parts.append(markdown(entry.doc, names))
    if entry.attributes:
        parts.append("Class attributes:\n\n" + "\n".join(
            f"- `{member.code}`: {markdown(member.doc, names)}" for member in entry.attributes))
    for member in entry.methods:
        parts += [f"#### `{member.heading}`", f"```python\n{member.code}\n```"]
        if member.doc:
            parts.append(markdown(member.doc, names))
    return "\n\n".join(parts) + "\n"


def markdown(doc: str, names: set[str]) -> str:
    """A docstring (reStructuredText as the project writes it) as Markdown: double backquotes
    as single ones, roles as code (linked when the name is on the page), ``::`` blocks fenced."""
    lines, out, text, index = doc.splitlines(), [], [], 0
    while index < len(lines):
        line = lines[index].rstrip()
        index += 1
        if not line.endswith("::"):
            text.append(line)
            continue
        head = line[:-2].rstrip()
        text += [head + ":", ""] if head else []
        out.append(_inline("\n".join(text), names))
        text, block = [], []
        while index < len(lines) and (not lines[index].strip() or lines[index].startswith(" ")):
            block.append(lines[index])
            index += 1
        code = textwrap.dedent("\n".join(block)).strip("\n")
        out.append(f"```python\n{code}\n```\n")
    out.append(_inline("\n".join(text), names))
    return "\n".join(out).strip()


def _inline(text: str, names: set[str]) -> str:
    """Roles and literals of running text as Markdown code."""
    def role(match: re.Match[str]) -> str:
        kind, tilde, target = match.groups()
        shown = f"`{target.split('.')[-1] if tilde else target}`"
        parts = target.split(".")
        if kind in ("attr", "meth"):  # of a class: link it when the class is on the page
            linked = [parts[0]] if len(parts) > 1 and parts[0] in names else []
        else:
            linked = [part for part in (parts[0], parts[-1]) if part in names]
        return f"[{shown}](#{anchor(linked[0])})" if linked else shown

    return _LITERAL.sub(lambda match: f"`{match.group(1)}`", _ROLE.sub(role, text))


def anchor(heading: str) -> str:
    """The fragment GitHub gives a heading: lower case, spaces to dashes, punctuation dropped."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def main(argv: Optional[Sequence[str]] = None) -> int:
    return write_or_check(argv, REGENERATE, "API reference", API_REFERENCE, lambda: ApiPage().page())


if __name__ == "__main__":
    raise SystemExit(main())
