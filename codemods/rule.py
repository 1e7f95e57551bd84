"""The contract between a migration rule and the engine: :class:`Rule` and :class:`FileContext`.

A rule says what it looks for: qualified names it calls or uses (:attr:`Rule.calls`,
:attr:`Rule.uses`; each reference comes to :meth:`Rule.visit_reference`) or a lib2to3
:attr:`Rule.pattern` (each match comes to :meth:`Rule.visit`). It edits the nodes in place and
may look at the whole tree in :meth:`Rule.finish`; it never sees Bowler, files or processes.
Everything a rule reports goes through the context, so the engine can attribute, isolate and
count it.
"""

from __future__ import annotations

import copy
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, ClassVar, FrozenSet, Iterable, Optional, Sequence, TypeVar

from fissix import pytree

from .accessors import file_accessors, repository_accessors
from .api_sites import site_key
from .ast_names import ast_import_names
from .findings import Finding, Status
from .modules import imported_names, module_ast
from .names import TF, ImportNames
from .qualified import Reference
from .reexports import accessor_reexports
from .tf_aliases import HOROVOD, file_aliases, repository_aliases
from .tf_versions import TF1, TF1_CODE
from .units import Mark
from .walk import position, tree_text

T = TypeVar("T")

Capture = dict[str, Any]

#: The project's repository (``[project.urls] Homepage`` of pyproject.toml).
PROJECT_URL = "https://github.com/npu-codemod/npu-codemod"
#: The rule catalog, generated from the rules' metadata by ``orchestrator/rule_catalog.py``.
RULE_CATALOG = "docs/rules.md"


class Rule:
    """Base class of every migration rule, built-in or third-party.

    Subclasses set the class attributes and override :meth:`visit` (called for every node that
    matches :attr:`pattern`) and/or :meth:`finish` (called once per file after the traversal);
    :meth:`start` sees the file before any rule edits it.
    """

    #: Stable id used in reports, CSV columns, CLI flags (``NPU004``; third parties: own prefix).
    id: ClassVar[str]
    #: Short kebab-case name (``nn-dropout``).
    name: ClassVar[str]
    #: One line saying what the rule does.
    description: ClassVar[str]
    #: The rule pack it belongs to: the rules for one kind of code, as ``plugins/rules/<pack>/``
    #: holds the built-in ones (``"sess-run"``: NPU001-NPU010, TF 1.x ``sess.run`` scripts);
    #: "" for none.
    pack: ClassVar[str] = ""
    #: Whether the rule runs when the selection does not name it (no ``--rules``): False for
    #: an opt-in rule, such as the ``distributed`` pack's (moving off Horovod changes how the
    #: job is launched), which runs only when ``--rules`` names it.
    default_on: ClassVar[bool] = True
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
    #: lib2to3 pattern selecting the nodes :meth:`visit` gets; None for finish-only rules.
    pattern: ClassVar[Optional[str]] = None
    #: Root modules whose import makes a file this rule's business (``("horovod",)`` for a rule
    #: on Horovod files that may not import TensorFlow). The engine offers the rule only
    #: files that import one of them.
    modules: ClassVar[tuple[str, ...]] = ("tensorflow",)
    #: Qualified names (any module: ``tensorflow.estimator.RunConfig``) whose *calls* the engine
    #: hands to :meth:`visit_reference`, however the file spells them (aliases, ``from``
    #: imports, ``compat.v1``, internal ``tensorflow.python.*`` modules). No pattern to write.
    calls: ClassVar[tuple[str, ...]] = ()
    #: Qualified names whose every reference, called or not (``hvd.rank``, ``RunConfig``), goes
    #: to :meth:`visit_reference`.
    uses: ClassVar[tuple[str, ...]] = ()
    #: Ids of the rules whose edits this rule reads: it visits and finishes after them. ``"*"``
    #: means after every other rule (NPU001, which adds its import to files others changed).
    after: ClassVar[tuple[str, ...]] = ()
    #: False for a rule whose findings only follow other rules' edits and are no sites of their
    #: own (NPU001's ``npu_init`` import line): runs and reports leave them out of every count.
    counts_sites: ClassVar[bool] = True
    #: True for an API audit (NPU100, NPU071): a rule that looks every API use up in a support
    #: list and counts it (:meth:`FileContext.count_api`). Its findings count towards API
    #: readiness, not towards rules coverage (which is over the migration rules' sites), and
    #: towards what is left, as every rule's do.
    audits_apis: ClassVar[bool] = False
    #: The kinds of file the rule runs on (``tf1``, ``tf2``, ``tf2-compat``, ``tf-neutral`` in
    #: a TF 2.x repository): TF 1.x code (:data:`TF1_CODE`) unless it says otherwise; a rule
    #: for TF 2.x code says :data:`TF2_NATIVE`; the TF 1.x rules that must not run on TF 1.x
    #: code on TF 2.x (``tf2-compat``) say ``{"tf1"}``.
    file_kinds: ClassVar[FrozenSet[str]] = TF1_CODE
    #: A prefix of the repository's facts that names files the rule runs on though they import
    #: none of :attr:`modules` (``<script_fact><path>``, decided by the repository's analysis:
    #: NPU041's scripts that import no TensorFlow but train a ``tf.keras`` model of the
    #: repository's), when their kind is one of :attr:`file_kinds`; "" for none.
    script_fact: ClassVar[str] = ""
    #: True for a rule that reads the repository's TF 2.x programs (which files an entry script
    #: reaches: ``codemods/tf_programs``), so that the analysis reads every Python file's
    #: imports, as for NPU061, even when NPU061 is off (an entry importing no TensorFlow
    #: still links its program).
    reads_programs: ClassVar[bool] = False
    #: A dataclass of typed per-rule settings read from ``[tool.npu-codemod.rules.<id>]``,
    #: built as ``Settings(**section)``; every field needs a default. None: no settings.
    Settings: ClassVar[Optional[type]] = None

    # Speed hints: private, for the built-in rules only; a third-party rule leaves them alone
    # (the defaults are always correct). The suite proves the built-in rules give the same
    # output without them (tests/test_rule_hints.py).
    #
    # _tokens: the rule runs only on files whose text holds one of these strings (empty:
    # every file that imports one of :attr:`modules`).
    _tokens: ClassVar[tuple[str, ...]] = ()
    # _bare_calls_of_tf_names: :meth:`visit` ignores a match at a ``power`` node (a call
    # ``f(...)`` through a bare name) unless ``f`` is bound to TensorFlow in the file
    # (``ctx.tf``): the engine then offers it only those calls, not every call of the file.
    _bare_calls_of_tf_names: ClassVar[bool] = False
    # _scope: what the rule reads and edits, so the engine parses only that (``--engine
    # selective``): ``"module"`` (the default) the whole file whenever the rule is active;
    # ``"site"`` only the top-level ``def``\ s and ``class``\ es whose code spells one of the
    # rule's site names (:meth:`_site_names_for`: :attr:`_site_names`, the last parts of
    # :attr:`calls` and :attr:`uses`, and any name the file binds to one of them);
    # ``"linked"`` those and, transitively, the file's functions and classes they use and the
    # statements that use theirs. For either, a site in module-level code (outside any
    # ``def``/``class``) means the whole file. The file's imports and alias assignments are
    # always parsed. Declare ``site`` or ``linked`` only when the rule's output would be the
    # same with the rest of the file replaced by placeholders: the suite runs every golden
    # case in both modes.
    _scope: ClassVar[str] = "module"
    # _site_names: identifiers one of which every site of the rule spells, beside the last
    # parts of :attr:`calls` and :attr:`uses` (see ``_scope``): a name (``"map_and_batch"``)
    # or an attribute (``".batch"``: ``x.batch``, not a variable ``batch``).
    _site_names: ClassVar[tuple[str, ...]] = ()
    # _reads_tree: False for a rule that reads no fissix tree, only the file's text and
    # ``ast`` (its uses through ``site_references``, the bindings through ``ctx.names``) and
    # the other rules' findings (the API audits): a file where no rule that reads the tree
    # has a site (by their ``_scope`` and site names) is not parsed with fissix at all, and
    # only such rules run on it, with ``ctx.tree`` an empty module holding the text.
    _reads_tree: ClassVar[bool] = True
    # _ast_sites: site names no identifier spells, given by the unit layout to each unit holding
    # a node the rule may act on: ``((ast.Assert, "assert", test), ...)`` makes ``"assert"`` a
    # word of every unit with an ``assert`` statement ``test`` accepts (``test`` gets the
    # ``ast`` node; it must accept every node the rule's sites can be, or the rule misses one).
    # A test may return a name instead of True: the word is then given only where the file
    # binds that name (``x`` of ``x.dropout``, which the rule resolves through the bindings).
    # A word that starts with ``@`` (``@dropout``) also makes a site name of every name the
    # file binds to something one of whose dotted parts it names (``units.spelled_names``),
    # and its test accepts only nodes that spell that name (``x.dropout``, ``tanh(x)``): the
    # layout does not ask it of a unit whose code spells no ``dropout``.
    _ast_sites: ClassVar[tuple[Mark, ...]] = ()

    def __init__(self, settings: Any = None) -> None:
        if settings is None and self.Settings is not None:
            settings = self.Settings()
        self.settings = settings

    def start(self, tree: pytree.Node, ctx: "FileContext") -> None:
        """Called once per file before any rule visits or edits it: for a rule that needs the
        file as written (the API audit counts the uses other rules then rewrite)."""

    def visit(self, node: pytree.Base, capture: Capture, ctx: "FileContext") -> None:
        """Inspect/edit one matched node. Structural edits around it go through ``ctx.defer``."""

    def visit_reference(self, reference: Reference, ctx: "FileContext") -> None:
        """Called for each call of a name in :attr:`calls` and each reference to a name in
        :attr:`uses` (``reference.call`` is the ``(...)`` trailer when it is called)."""

    def _site_names_for(self, facts: FrozenSet[str]) -> Iterable[str]:
        """A speed hint (private, see ``_scope``): the identifiers every site of the rule
        spells in a repository with these repository-wide ``facts``: ``_site_names`` and the
        last parts of :attr:`calls` and :attr:`uses` (:func:`reference_names`), and for a rule
        that acts on the repository's own subclasses of an API class, their names. A rule
        that does nothing with some of them in such a repository may leave those out. One
        that raises with no facts makes its plugin broken; with a repository's facts, the
        engine reads the whole file for the rule (as ``--engine full``) instead."""
        return (*self._site_names, *reference_names(self))

    def finish(self, tree: pytree.Node, ctx: "FileContext") -> None:
        """Called once per file after every rule visited it."""

    def skipped(self, tree: pytree.Node, ctx: "FileContext") -> None:
        """Called instead of the others for a file no rule may rewrite (eager mode), after its
        file finding: a rule that audits may still report its sites; it must not edit."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.id}>"

    @staticmethod
    def catalog_url(rule_id: str, name: str) -> str:
        """The entry of built-in rule ``rule_id`` in the project's rule catalog: the
        :attr:`guide_url` of the built-in rules (``guide_url = Rule.catalog_url(id, name)``)."""
        return f"{PROJECT_URL}/blob/main/{RULE_CATALOG}#{catalog_anchor(rule_id, name)}"


#: The speed hints of :class:`Rule` (private): none may change a rule's output.
SPEED_HINTS = ("_tokens", "_bare_calls_of_tf_names", "_scope", "_site_names", "_reads_tree",
               "_ast_sites")


def without_hints(rule: Rule) -> Rule:
    """A shallow copy of ``rule`` with every speed hint at :class:`Rule`'s default: the same
    rule as a third party would write it. The golden helpers run every case with both."""
    bare = copy.copy(rule)
    for hint in SPEED_HINTS:
        setattr(bare, hint, getattr(Rule, hint))
    vars(bare)["_site_names_for"] = _no_site_names  # an instance attribute shadows the method
    return bare


def _no_site_names(facts: FrozenSet[str]) -> tuple[str, ...]:
    return ()


def reference_names(rule: Rule) -> tuple[str, ...]:
    """The last part of each name in ``rule``'s :attr:`Rule.calls` and :attr:`Rule.uses`
    (``dropout`` of ``tensorflow.nn.dropout``): every reference to one spells it, or a name
    the file binds to it."""
    return tuple(dict.fromkeys(name.rpartition(".")[2] for name in rule.calls + rule.uses))


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
    #: The text ``tree`` was parsed from: :attr:`original`, or (selective parsing) the file
    #: with the units no active rule needs replaced by placeholders on the same lines.
    parsed: str = ""
    findings: list[Finding] = field(default_factory=list)
    imports: list[str] = field(default_factory=list)
    deferred: list[tuple[Rule, Callable[[], None]]] = field(default_factory=list)
    rule: Optional[Rule] = None
    #: Ids of every rule the run enabled (set by the engine), whether or not it acts on this
    #: file: a rule that covers another's API can tell "disabled" from "found nothing here".
    enabled_rules: FrozenSet[str] = frozenset()
    #: API use sites counted with :meth:`count_api`, by ``api_sites.site_key``.
    api_sites: Counter[tuple[str, str, bool, bool]] = field(default_factory=Counter)
    #: The file's kind as the rules treat it (:attr:`Rule.file_kinds`): ``tf1``, ``tf2``,
    #: ``tf2-compat`` or ``tf-neutral`` (in a repository that runs TF 2.x).
    file_kind: str = TF1
    # Private. The one per-file cache: :meth:`analysis` results, by (factory, *key).
    _analyses: dict[tuple[Any, ...], Any] = field(default_factory=dict, init=False, repr=False)
    # Private, the engine's: the rewrite of the parsed units' text (selective parsing), for
    # the compile check.
    _parsed_rewrite: Optional[str] = field(default=None, init=False, repr=False)
    # Private, the engine's: the rewritten file's text, rendered once the rules are done and the
    # skipped units are back (selective parsing: from the pieces of ``_parsed_rewrite``); None:
    # the outcome renders the tree. Never set earlier: rules edit leaf values in place up to the end.
    _rewrite: Optional[str] = field(default=None, init=False, repr=False)
    # Private, the engine's: True when the file was not parsed with fissix (``tree`` holds
    # its text as the end marker's prefix; ``Rule._reads_tree``): bindings come from ``ast``.
    _unparsed: bool = field(default=False, init=False, repr=False)
    # Private, the engine's: True while the tree is the whole file's parse, not edited yet, and
    # the analysis handed the file's ``ast`` reading over (see ``_handover``): the bindings
    # read from either are the same (``ast_names``), the handed-over ones cost no walk.
    _pristine_whole: bool = field(default=False, init=False, repr=False)
    # Private, the engine's: what the repository analysis read from the file's ``ast``
    # (an ``ast_handover.Handover``, which reads contexts itself: not imported here), for the
    # readers that would parse it again; None when it kept none.
    _handover: Any = field(default=None, init=False, repr=False)

    @cached_property
    def tf(self) -> ImportNames:
        """The file's TensorFlow bindings (``ctx.tf.alias`` is the name to write code with)."""
        return self.names("tensorflow")

    def names(self, module: str) -> ImportNames:
        """The file's bindings of ``module`` (a root package: ``horovod``), computed once."""
        return self.analysis(_module_names, module)

    def analysis(self, factory: Callable[..., T], *key: Any) -> T:
        """``factory(self, *key)``, computed once per file and shared by every rule that asks:
        a typed analysis (a function or class taking the context) instead of a string key.
        The context's one cache (:meth:`names` and :attr:`tf` are kept in it too)."""
        index = (factory, *key)
        if index not in self._analyses:
            self._analyses[index] = factory(self, *key)
        result: T = self._analyses[index]
        return result

    @property
    def changed(self) -> bool:
        """True when any rule edited the tree or asked for a header import."""
        return bool(self.imports) or tree_text(self.tree) != (self.parsed or self.original)

    def report(self, node: "pytree.Base | Reference", status: Status, message: str,
               level: str = "") -> None:
        """Record a finding of the current rule at ``node``'s original position (a
        :class:`Reference` keeps the position it had before any edit).

        A ``migrated`` message opens with a past-tense verb ("added drop_remainder=True")
        exactly when the rule rewrote the site, and states a fact otherwise
        ("drop_remainder=True is set"): ``check`` lists the first kind as fixable (see
        :func:`findings.rewrite_instruction`). ``level="note"`` marks an ``unmigrated`` site that
        may need nothing (SARIF level ``note`` instead of ``warning``).
        """
        line, column = (node.line, node.column) if isinstance(node, Reference) else position(node)
        self.report_at(line, column, status, message, level)

    def report_at(self, line: int, column: int, status: Status, message: str,
                  level: str = "") -> None:
        """:meth:`report` at a ``line`` (1-based) and ``column`` (0-based) of the file as
        written, for a site no node stands for."""
        rule = self.rule
        assert rule is not None, "report() outside a rule callback"
        if status == "unmigrated":
            message += guide_note(rule)
        self.findings.append(Finding(self.repo, self.path, line, column, rule.id, rule.name,
                                     status, message, level=level))

    def count_api(self, api: str, status: str, covered: bool = False, owned: bool = False) -> None:
        """Count one use site of a TensorFlow or Horovod API for the reports' API readiness:
        ``api`` as Ascend's support list names it, its support ``status`` there (``unknown``
        for a name the list does not know), whether a rule's ``migrated`` finding covers
        the site, and whether a rule's ``unmigrated`` finding there says how to migrate it
        (``owned``). Every site is counted, with a finding or without (see ``api_sites``)."""
        self.api_sites[site_key(api, status, covered, owned)] += 1

    def tf_module(self, spelled: Optional[str] = None) -> str:
        """How code a rule writes spells the TensorFlow module: ``spelled`` (a spelling taken
        from the file, ``tf.compat.v1``), else the file's alias. A file that binds no public
        alias (it imports TensorFlow only through internal modules or names) gets
        ``import tensorflow as tf`` for it (see :meth:`add_import`)."""
        if self.tf.public_alias is not None:
            return spelled or self.tf.alias
        self.add_import(f"import {TF} as {self.tf.alias}")
        return self.tf.alias

    def add_import(self, statement: str) -> None:
        """Ask for a module-level import (``from x import y``) that code this rule wrote needs.

        The engine places every import asked for once the rules are done, whatever rules run
        (``--disable-rule NPU001`` included): star imports (``from npu_bridge.npu_init import
        *``) after the docstring and ``__future__`` imports, before the file's own imports;
        the others right after them. One already in the file is not added again."""
        if statement not in self.imports:
            self.imports.append(statement)

    def defer(self, edit: Callable[[], None]) -> None:
        """Run ``edit`` after the traversal: inserting statements mid-traversal revisits nodes."""
        assert self.rule is not None, "defer() outside a rule callback"
        self.deferred.append((self.rule, edit))


def fact_names(facts: Iterable[str], prefixes: Sequence[str]) -> tuple[str, ...]:
    """The last parts of the dotted names that the ``facts`` with one of ``prefixes`` name
    (``create_config_proto`` of ``npu007-config:models.benchmark.create_config_proto``):
    for ``Rule._site_names_for`` of a rule that acts where such functions are called."""
    return tuple(sorted({fact.rpartition(".")[2] for fact in facts
                         if fact.startswith(tuple(prefixes))}))


def _module_names(ctx: FileContext, module: str) -> ImportNames:
    handover = ctx._handover
    accessors = repository = None
    if module in (TF, HOROVOD):  # names a repository module binds to it (``tf_aliases``)
        imported = handover.imported_names() if handover is not None else None
        repository = _repository_aliases(ctx, imported, module)
        if module == TF:
            functions = repository_accessors(ctx.facts)
            accessors = file_accessors(ctx.path, ctx.original, functions, imported,
                                       accessor_reexports(ctx.facts) if functions else None)
    if ctx._unparsed or ctx._pristine_whole:  # the same bindings, from the file's ast
        names = handover.import_names(module, accessors, repository) if handover is not None else \
            ast_import_names(ctx.original, root=module, accessors=accessors, repository=repository)
        assert names is not None, "an unparsed file's ast reads"
        return names
    return ImportNames(ctx.tree, root=module, accessors=accessors, repository=repository)


def _repository_aliases(ctx: FileContext, imported: Optional[dict[str, str]],
                        module: str) -> Optional[dict[str, str]]:
    """The names the file imports from a repository module that binds them to ``module``
    (TensorFlow: ``from mylib.compat import tfv1 as tf``; Horovod: ``from common import hvd``;
    ``tf_aliases``) -> that module's name."""
    aliases = {name: target for name, target in repository_aliases(ctx.facts).items()
               if (target.split(".")[0] == HOROVOD) == (module == HOROVOD)}
    if not aliases:
        return None
    if imported is None:
        tree = module_ast(ctx.original)
        imported = imported_names(tree, ctx.path) if tree is not None else {}
    return file_aliases(ctx.path, aliases, imported) or None


def rules_in_order(rules: Sequence[Rule]) -> list[Rule]:
    """``rules`` so that each comes after the rules it names in :attr:`Rule.after` (``"*"``:
    after every rule that does not say ``"*"`` itself); rules with no dependency between them
    by id. A cycle is broken at the first pending rule in that order."""
    pending = sorted(rules, key=lambda rule: rule.id)
    last = {rule.id for rule in pending if "*" in rule.after}
    ids = {rule.id for rule in pending}
    placed: list[Rule] = []
    done: set[str] = set()
    while pending:
        def ready(rule: Rule) -> bool:
            needed = ids - last if rule.id in last else set(rule.after) & ids
            return needed - {rule.id} <= done
        chosen = next((rule for rule in pending if ready(rule)), pending[0])
        pending.remove(chosen)
        placed.append(chosen)
        done.add(chosen.id)
    return placed
