"""The contract between a migration rule and the engine: :class:`Rule` and :class:`FileContext`.

A rule selects nodes with one lib2to3 pattern and edits them in place in ``visit``; it never
sees Bowler, files or processes. Everything a rule reports goes through the context, so the
engine can attribute, isolate and count it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, ClassVar, FrozenSet, Optional, TypeVar

from fissix import pytree

from .findings import Finding, Status
from .tfnames import TfNames
from .walk import tree_text

T = TypeVar("T")

Capture = dict


class Rule:
    """Base class of every migration rule, built-in or third-party.

    Subclasses set the class attributes and override :meth:`visit` (called for every node that
    matches :attr:`pattern`) and/or :meth:`finish` (called once per file after the traversal).
    """

    #: Stable id used in reports, CSV columns, CLI flags (``NPU004``; third parties: own prefix).
    id: ClassVar[str]
    #: Short kebab-case name (``nn-dropout``).
    name: ClassVar[str]
    #: One line saying what the rule does.
    description: ClassVar[str]
    #: The section of the migration guide the rule implements (shown next to each finding).
    guide_section: ClassVar[str] = ""
    #: Where a person reads how to finish a site by hand (your wiki page, for third parties).
    guide_url: ClassVar[str] = ""
    #: Cheap prefilter: the rule only runs on files whose text contains one of these strings.
    #: Empty means every file that imports TensorFlow.
    tokens: ClassVar[tuple[str, ...]] = ()
    #: lib2to3 pattern selecting the nodes :meth:`visit` gets; None for finish-only rules.
    pattern: ClassVar[Optional[str]] = None
    #: True when :meth:`visit` ignores a match at a ``power`` node (a call ``f(...)`` through a
    #: bare name) unless ``f`` is bound to TensorFlow in the file (``ctx.tf``): the engine then
    #: offers it only those calls, not every call of the file.
    bare_calls_of_tf_names: ClassVar[bool] = False
    #: Rules finish in ascending order (NPU001, which depends on every other rule, runs last).
    order: ClassVar[int] = 50
    #: A dataclass of typed per-rule settings read from ``[tool.npu-codemod.rules.<id>]``,
    #: built as ``Settings(**section)``; every field needs a default. None: no settings.
    Settings: ClassVar[Optional[type]] = None

    def __init__(self, settings: Any = None) -> None:
        if settings is None and self.Settings is not None:
            settings = self.Settings()
        self.settings = settings

    def visit(self, node: pytree.Base, capture: Capture, ctx: "FileContext") -> None:
        """Inspect/edit one matched node. Structural edits around it go through ``ctx.defer``."""

    def finish(self, tree: pytree.Node, ctx: "FileContext") -> None:
        """Called once per file after every rule visited it."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.id}>"


@dataclass
class FileContext:
    """What the engine knows about the file being rewritten, and where rules report to."""

    repo: str
    path: str
    original: str
    newline: str
    tree: pytree.Node
    facts: FrozenSet[str] = frozenset()
    findings: list[Finding] = field(default_factory=list)
    imports: list[str] = field(default_factory=list)
    deferred: list[tuple[Rule, Callable[[], None]]] = field(default_factory=list)
    rule: Optional[Rule] = None
    #: Per-file caches of shared helpers (e.g. which names hold datasets), keyed by helper.
    memo: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def tf(self) -> TfNames:
        return TfNames(self.tree)

    @property
    def changed(self) -> bool:
        """True when any rule edited the tree or asked for a header import."""
        return bool(self.imports) or tree_text(self.tree) != self.original

    def report(self, node: pytree.Base, status: Status, message: str) -> None:
        """Record a finding of the current rule at ``node``'s original position.

        A ``migrated`` message opens with a past-tense verb ("added drop_remainder=True")
        exactly when the rule rewrote the site, and states a fact otherwise
        ("drop_remainder=True is set"): ``check`` lists the first kind as fixable (see
        :func:`findings.rewrite_instruction`).
        """
        line, column = position(node)
        self.report_at(line, column, status, message)

    def report_at(self, line: int, column: int, status: Status, message: str) -> None:
        rule = self.rule
        assert rule is not None, "report() outside a rule callback"
        guide = ", ".join(part for part in (rule.guide_section, rule.guide_url) if part)
        if status == "unmigrated" and guide:
            message = f"{message} (guide: {guide})"
        self.findings.append(
            Finding(self.repo, self.path, line, column, rule.id, rule.name, status, message)
        )

    def per_node(self, key: str, node: pytree.Base, compute: Callable[[Any], T]) -> T:
        """``compute(node)``, worked out once per file and kept in ``memo[key]`` (a dict of
        id -> (node, value): nodes are not hashable, so the id is checked against the node)."""
        kept = self.memo.setdefault(key, {})
        entry = kept.get(id(node))
        if entry is None or entry[0] is not node:
            entry = kept[id(node)] = (node, compute(node))
        return entry[1]

    def add_import(self, statement: str) -> None:
        """Ask for a header import (``from x import y``), placed after the NPU001 import."""
        if statement not in self.imports:
            self.imports.append(statement)

    def defer(self, edit: Callable[[], None]) -> None:
        """Run ``edit`` after the traversal: inserting statements mid-traversal revisits nodes."""
        assert self.rule is not None, "defer() outside a rule callback"
        self.deferred.append((self.rule, edit))


def position(node: pytree.Base) -> tuple[int, int]:
    """(line, column) of the first original leaf of ``node`` (new leaves have no position)."""
    for leaf in node.leaves():
        if leaf.lineno:
            return leaf.lineno, leaf.column
    return 1, 0
