"""The contract between a migration rule and the engine: :class:`Rule` and :class:`FileContext`.

A rule selects nodes with one lib2to3 pattern and edits them in place in ``visit``; it never
sees Bowler, files or processes. Everything a rule reports goes through the context, so the
engine can attribute, isolate and count it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, ClassVar, FrozenSet, Optional, TypeVar

from fissix import pytree

from .findings import Finding, Status
from .tfnames import TfNames
from .walk import tree_text

T = TypeVar("T")

Capture = dict

#: The project's repository (``[project.urls] Homepage`` of pyproject.toml).
PROJECT_URL = "https://github.com/npu-codemod/npu-codemod"
#: The rule catalog, generated from the rules' metadata by ``orchestrator/rule_catalog.py``.
RULE_CATALOG = "docs/rules.md"


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
    #: The section of the migration guide the rule implements, titled as the guide titles it
    #: (the built-in rules: the Chinese Ascend guide).
    guide_section: ClassVar[str] = ""
    #: The same section's title in English, when :attr:`guide_section` is in another language.
    guide_section_en: ClassVar[str] = ""
    #: Where a person reads how to finish a site by hand (your wiki page, for third parties;
    #: the rule's entry in the rule catalog, :meth:`catalog_url`, for the built-in rules).
    guide_url: ClassVar[str] = ""
    #: What the rule rewrites, in Markdown, for the rule catalog and SARIF help ("" if nothing).
    rewrites: ClassVar[str] = ""
    #: What the rule reports ``unmigrated`` and what a person does about it, in Markdown.
    reports: ClassVar[str] = ""
    #: A short source file the rule acts on (indented as you like: it is dedented); the rule
    #: catalog shows it, what ``npu-codemod run --rules <id>`` makes of it and the rule's
    #: findings, worked out by running the rule when the catalog is made, so they cannot drift.
    example: ClassVar[str] = ""
    #: Ids of other rules the example runs with (NPU001 only acts where another rule rewrote).
    example_with: ClassVar[tuple[str, ...]] = ()
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

    @staticmethod
    def catalog_url(rule_id: str, name: str) -> str:
        """The entry of built-in rule ``rule_id`` in the project's rule catalog: the
        :attr:`guide_url` of the built-in rules (``guide_url = Rule.catalog_url(id, name)``)."""
        return f"{PROJECT_URL}/blob/main/{RULE_CATALOG}#{catalog_anchor(rule_id, name)}"


def catalog_heading(rule_id: str, name: str) -> str:
    """The heading of a rule's entry in the rule catalog."""
    return f"{rule_id} {name}"


def catalog_anchor(rule_id: str, name: str) -> str:
    """The fragment GitHub gives that heading: lower case, spaces to dashes, and punctuation
    other than ``-`` and ``_`` dropped."""
    heading = catalog_heading(rule_id, name).lower()
    return re.sub(r"[^\w\- ]", "", heading).replace(" ", "-")


def guide_title(section_en: str, section: str) -> str:
    """A guide section as reports name it: ``Data preprocessing (数据预处理)``; the one title
    there is when the other is missing or the same."""
    if section_en and section and section_en != section:
        return f"{section_en} ({section})"
    return section_en or section


def guide_note(rule: Rule) -> str:
    """What each ``unmigrated`` message of ``rule`` ends with: its guide section (in English
    when it has an English title) and its guide URL, or '' when it has neither."""
    parts = [part for part in (rule.guide_section_en or rule.guide_section, rule.guide_url) if part]
    return f" (guide: {', '.join(parts)})" if parts else ""


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
        if status == "unmigrated":
            message += guide_note(rule)
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
