"""The rule engine: the one place that talks to Bowler (rules read fissix trees, parsed by
:mod:`.parser`).

All enabled rules are compiled into one Bowler query, so a file is parsed once whatever the
number of rules. Files are read, decoded and written by us, not by Bowler (whose ``write=True``
loses CRLF and encodings): :meth:`Engine.process` takes bytes and returns bytes.
"""

from __future__ import annotations

import gc
import logging
import re
import sys
import traceback
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import lru_cache, partial
from pathlib import Path
from typing import Any, Callable, FrozenSet, Iterator, Optional, Sequence

from bowler import Query
from bowler.tool import BowlerTool
from fissix import pygram, pytree
from fissix.pgen2 import token
from fissix.pygram import python_symbols as syms
from fissix.refactor import _get_headnode_dict

from . import ast_handover
from .accessors import file_accessors, repository_accessors
from .api_sites import ApiSites, uncovered
from .ast_handover import Handover
from .ast_names import ast_import_names
from .dead_sites import settle_dead
from .file_kinds import EAGER, eager_call, may_enable_eager
from .findings import Finding, Status
from .local_imports import place_asked_imports
from .modules import forget_trees, module_ast
from .names import TF, UNRESOLVED_ACCESSOR, imports_module_text
from .parser import Parser
from .prematch import SELF, Check, leaf_key, quick_check
from .qualified import NameIndex, WantedNames, name_roots, qualified_names
from .reexports import accessor_reexports
from .rule import Capture, FileContext, Rule, reference_names, rules_in_order
from .source import SourceText, UndecodableSource, decode_source
from .text_search import AnyOf
from .tf_aliases import HOROVOD, may_bind_horovod
from .tf_model_idioms import signals_in
from .tf_programs import (
    COMPAT_RULE,
    ENTRY_FACT,
    ENTRY_RULE,
    MIXED_PART,
    SCRIPT_BYTES,
    RepositoryMessage,
    mixed_entry,
    tf1_side,
)
from .tf_versions import (
    CONFLICT,
    NON_TF,
    TF1,
    TF2,
    TF2_CODE,
    TF2_COMPAT,
    TF2_ENTRY_RULE,
    file_kind,
    runtime_of,
    runtime_why,
    signals_of,
    treatment,
)
from .units import (
    MODULE,
    Layout,
    ParsePlan,
    RuleNeed,
    has_site,
    may_have_no_site,
    may_skip,
    module_layout,
    plan_parse,
)
from .walk import position, post_order, tree_text

#: Modules whose imports rules report on, though an import is no unit's site (``units``): the
#: NPU adapters (what the rules wrote, or a person did: NPU001's "npu_bridge.npu_init is
#: imported", NPU061's init already there) and Horovod (NPU025's imports nothing uses any more).
#: A file that names one is never run unparsed while a rule that reads the tree is active (with
#: none, the same rules run either way).
_ADAPTER = AnyOf(r"\bnpu_bridge\b", r"\bnpu_device\b", r"\bhorovod\b")

#: Pseudo-rule of file-level findings: failures (decode, parse, compile) and files no rule may
#: rewrite (eager mode, symlinks: see ``file_kinds``).
FILE_RULE_ID = "NPU000"
FILE_RULE_NAME = "source-file"
FILE_RULE = (FILE_RULE_ID, FILE_RULE_NAME)
#: Larger files are reported, not parsed: fissix needs about 40 s and 350 MB per MiB of
#: TensorFlow code, so one generated or vendored giant must not stall or exhaust a worker.
MAX_SOURCE_BYTES = 1024 * 1024
#: Larger files (counted in words, symbols and lines: about the parser's tokens) are reported,
#: not parsed: the tree takes about 1 KB per token, so a 1 MB file of 250,000 statements
#: would take a gigabyte; at this limit a worker stays under about 300 MB.
MAX_SOURCE_TOKENS = 200_000
#: A token, about as the parser sees them: a comment or a string literal is one.
_TOKEN = re.compile(r'''#[^\n]*|"""(?:[^\\]|\\.)*?"""|''\'(?:[^\\]|\\.)*?''\'|"(?:[^"\\\n]|\\.)*"'''
                    r"""|'(?:[^'\\\n]|\\.)*'|\w+|[^\w\s]""", re.DOTALL)
#: A file nested deeper than Python's recursion limit lets the parser or the compiler go.
TOO_DEEP = ("file nested too deeply to migrate automatically (Python's recursion limit was "
            "reached parsing or compiling it): migrate it by hand")
#: How :class:`Engine` parses a file (``--engine``): ``full`` parses it whole; ``selective``
#: parses only the top-level statements the active rules can act on (see ``units``) and
#: keeps the rest of the bytes as they are. Both give the same bytes and findings.
SELECTIVE, FULL = "selective", "full"
#: Shorter files are parsed whole in the selective mode too: their ``ast`` pass would cost
#: more than the part of the parse it can spare (measured: ``bench/run_bench.py``).
SELECTIVE_MIN_LINES = 200
MODES = (SELECTIVE, FULL)
DEFAULT_MODE = SELECTIVE

for _name in ("RefactoringTool", "bowler", "fissix"):
    logging.getLogger(_name).setLevel(logging.CRITICAL)


@dataclass(frozen=True)
class FileOutcome:
    """What processing one file gave: findings, the new bytes when the file changed, and the
    API use sites an audit rule counted (``FileContext.count_api``; see ``api_sites``)."""

    path: str
    findings: tuple[Finding, ...] = ()
    new_data: Optional[bytes] = None
    rule_ids: tuple[str, ...] = ()  # rules that changed the file
    api_sites: tuple[ApiSites, ...] = ()
    kind: str = ""  # the file's kind (``tf_versions.KINDS``); "" for a file no rule looked at


#: Grammars tried in order: Python 3 (``print``/``exec`` are names), then Python 2 (statements).
GRAMMARS = (
    pygram.python_grammar_no_print_and_exec_statement,
    pygram.python_grammar,
)


class _RuleCrashed(Exception):
    def __init__(self, rule: Rule, error: BaseException, where: tuple[int, int]) -> None:
        super().__init__(f"{type(error).__name__}: {error}")
        self.rule = rule
        self.line, self.column = where
        self.frames = traceback.extract_tb(error.__traceback__)[1:]  # from the rule's call on
        self.trace = "".join(traceback.format_exception(type(error), error, error.__traceback__))

    def where_in_rule(self) -> str:
        """``file.py:12 in visit``: the innermost frame of the rule's own module, else the
        innermost frame (a helper the rule called)."""
        module = sys.modules.get(type(self.rule).__module__)
        source = getattr(module, "__file__", None)
        frames = [f for f in self.frames if source and f.filename == source] or self.frames
        if not frames:
            return ""
        frame = frames[-1]
        return f"{Path(frame.filename).name}:{frame.lineno} in {frame.name}"


def _listed_words(listed: Sequence[Rule]) -> Optional[tuple[bytes, ...]]:
    """The strings one of which a file named by a fact for the rules ``listed``
    (``Rule.script_fact``) holds: their ``_tokens``; None when one has none (any file may be)."""
    if any(not rule._tokens for rule in listed):
        return None
    return tuple(word.encode() for rule in listed for word in rule._tokens)


class Engine:
    """Runs a fixed set of rules over file contents. Build once per process, reuse per file."""

    def __init__(self, rules: Sequence[Rule], mode: str = DEFAULT_MODE,
                 plan_every_file: bool = False) -> None:
        """``plan_every_file``: in the selective mode, plan a selective parse of every file,
        however short, and whatever a first look says it would spare (the tests: they
        compare both modes on every golden case)."""
        if mode not in MODES:
            raise ValueError(f"engine mode must be one of {', '.join(MODES)}, not {mode!r}")
        self.mode = mode
        self.plan_every_file = plan_every_file
        self.rules = rules_in_order(rules)
        self._enabled = frozenset(rule.id for rule in self.rules)
        self._modules = tuple(dict.fromkeys(m for rule in self.rules for m in rule.modules))
        self._module_bytes = tuple(module.encode() for module in self._modules)
        self._imports = {module: imports_module_text(module) for module in self._modules}
        #: Rules that also act on scripts importing no TensorFlow (NPU061: an entry script).
        self._scripts = [rule for rule in self.rules if NON_TF in rule.file_kinds]
        #: Rules that act on the files a fact names though they import none of their modules
        #: (``Rule.script_fact``), and the strings one of which such a file holds (their
        #: ``_tokens``; None: any file may be one).
        self._listed = [rule for rule in self.rules if rule.script_fact]
        self._listed_words = _listed_words(self._listed)
        self._ctx: Optional[FileContext] = None
        self._active: FrozenSet[str] = frozenset()
        query = Query()
        for rule in self.rules:
            if rule.pattern:
                query.select(rule.pattern).modify(self._callback(rule))
        fixers = query.compile() if query.transforms else []
        for fixer, rule in zip(fixers, [rule for rule in self.rules if rule.pattern]):
            fixer.rule_id = rule.id
        tool = BowlerTool(fixers, interactive=False, silent=True)
        self._fixers = tool.pre_order + tool.post_order
        flagged = {rule.id for rule in self.rules if rule._bare_calls_of_tf_names}
        self._tf_bound: dict[str, str] = {}
        self._checks = {}
        #: The fixers whose check is :meth:`_tf_call_check`'s (see :class:`_Dispatch`).
        self._tf_calls = frozenset(fixer for fixer in self._fixers if fixer.rule_id in flagged)
        for fixer in self._fixers:
            check = quick_check(fixer.pattern) or _anything
            self._checks[fixer] = self._tf_call_check(check) if fixer in self._tf_calls else check
        self._dispatch: dict[FrozenSet[str], _Dispatch] = {}
        #: The last part of each name a rule declared (``Estimator`` of ``tensorflow.estimator.
        #: Estimator``): a file that spells none of them holds no reference for it.
        self._last_names = {rule.id: reference_names(rule) for rule in self.rules}
        self._needs: dict[tuple[str, FrozenSet[str]], RuleNeed] = {}
        #: Every rule's ``_ast_sites``: the marks a layout handed over (``ast_handover``) has.
        self._marks = tuple(dict.fromkeys(mark for rule in self.rules for mark in rule._ast_sites))
        #: Files parsed ``whole`` and ``selective``ly, and the ``skipped_lines`` of the latter
        #: (for the bench and the tests: a selective mode that never skips is a bug).
        self.counts: Counter[str] = Counter()

    @property
    def enabled(self) -> FrozenSet[str]:
        """The ids of the rules the engine runs."""
        return self._enabled

    @property
    def reads_programs(self) -> bool:
        """Does a rule need the repository's programs (NPU061: every Python file's imports)?"""
        return bool(self._scripts) or any(rule.reads_programs for rule in self.rules)

    def wants(self, data: bytes) -> bool:
        """Cheap prefilter on raw bytes: could any rule act on this file?"""
        return any(module in data for module in self._module_bytes) \
            or bool(self._scripts and any(word in data for word in SCRIPT_BYTES)) \
            or bool(self._listed and (self._listed_words is None or any(word in data for word in self._listed_words)))

    def hand_over(self, path: str, text: str) -> None:
        """Keep what this engine will read from the ``ast`` of the file ``path`` (source
        ``text``) that the repository analysis has just parsed (``ast_handover``): the engine
        then parses it with ``ast`` no more. Nothing in the full mode (no layout is made)."""
        if self.mode == SELECTIVE:
            ast_handover.hand_over(path, text, self._marks)

    def process(
        self, data: bytes, path: str, repo: str = "", facts: FrozenSet[str] = frozenset()
    ) -> FileOutcome:
        """Apply every rule to one file's bytes. Never raises for bad input: it reports."""
        if not self.wants(data):
            return FileOutcome(path)
        if len(data) > MAX_SOURCE_BYTES:
            message = (f"file too large to migrate automatically ({len(data):,} bytes, the "
                       f"limit is {MAX_SOURCE_BYTES:,}): migrate it by hand")
            return FileOutcome(path, (_file_error(repo, path, 1, message),))
        try:
            source = decode_source(data)
        except UndecodableSource as exc:
            error = _file_error(repo, path, exc.line, f"cannot read file: {exc}")
            return FileOutcome(path, (error,))
        text = source.text
        handover = ast_handover.take(path, text)  # the analysis's reading, if it kept one
        too_large = size_problem(text)
        if too_large is not None:
            return FileOutcome(path, (_file_error(repo, path, 1, too_large),))
        # The pattern spells the module's name: most files lack most modules' (no regex run).
        imported = {module for module, pattern in self._imports.items()
                    if module in text and pattern.found(text)}
        active = [r for r in self.rules if imported.intersection(r.modules)]
        if ENTRY_FACT + path in facts:  # an entry script of a TF 2.x program (it may import no TF)
            active += [rule for rule in self._scripts if rule not in active]
        active += [rule for rule in self._listed if rule.script_fact + path in facts and rule not in active]
        if not active:
            return FileOutcome(path)
        return self._by_kind(source, path, repo, facts, active, handover)

    def _by_kind(self, source: SourceText, path: str, repo: str, facts: FrozenSet[str],
                 active: list[Rule], handover: Optional[Handover] = None) -> FileOutcome:
        """The rules that run on the file's kind (``tf_versions``): none on a ``conflict``
        file (one finding), only those of the TF 2.x packs on TF 2.x code."""
        kind = file_kind(signals_in(signals_of(source.text, path), path, facts), runtime_of(facts, path),
                         runtime_why(facts, path))
        if kind.kind == CONFLICT:
            at = kind.at
            finding = file_finding(repo, path, "unmigrated", kind.message,
                                   at.line if at else 1, at.column if at else 0)
            return FileOutcome(path, (finding,), kind=CONFLICT)
        mixed = mixed_entry(facts, path)
        if mixed is not None:  # a file of a program that mixes eager and compat.v1 code
            rule = COMPAT_RULE if kind.kind == TF2_COMPAT else ENTRY_RULE
            part = () if mixed == path else (RepositoryMessage(path, MIXED_PART.format(entry=mixed), rule=rule),)
            return FileOutcome(path, tuple(message.finding(repo, FILE_RULE) for message in part),
                               kind="" if kind.kind == NON_TF else kind.kind)
        treated = treatment(kind.kind, runtime_of(facts, path), tf1_side(facts, path, kind.kind))
        scripts = [rule for rule in active if NON_TF in rule.file_kinds] if kind.kind == NON_TF else []
        active = [rule for rule in active if treated in rule.file_kinds and _may_act(rule, source.text)]
        if not active and scripts:
            active, treated = scripts, NON_TF
        elif scripts and ENTRY_FACT + path in facts:  # an entry importing other rules' modules
            active = [rule for rule in self.rules if rule in active or rule in scripts]
        notes: tuple[Finding, ...] = ()
        if treated == TF2 and TF2_ENTRY_RULE not in self._enabled:
            notes = (file_finding(repo, path, "unmigrated", TF2_CODE),)
        named = "" if kind.kind == NON_TF else kind.kind  # a file of other modules: no TF kind
        if not active:
            return FileOutcome(path, notes, kind=named)
        with collector_paused():
            try:
                outcome = self._apply(source, path, repo, facts, active, treated, handover)
            except RecursionError:  # the parser's, a rule's walk or compile()'s own limit
                return FileOutcome(path, notes + (_file_error(repo, path, 1, TOO_DEEP),), kind=named)
        return replace(outcome, findings=notes + outcome.findings, kind=named)

    def _apply(self, source: SourceText, path: str, repo: str, facts: FrozenSet[str],
               active: list[Rule], treated: str = TF1, handover: Optional[Handover] = None) -> FileOutcome:
        """The rules over one decoded file; a rule that crashes is reported and the file
        redone without it. ``handover``: what the analysis read from the file's ``ast``."""
        text = source.text
        body = text if text.endswith("\n") or not text else text + "\n"
        layout = self._layout(body, path, active, facts, handover)
        crashed: list[Finding] = []
        while active:
            unparsed = layout is not None and not any(
                rule._reads_tree and has_site(layout, self._need(rule, facts)) for rule in active) \
                and not (_ADAPTER.found(body) and any(rule._reads_tree for rule in active))
            run = self._run_unparsed if unparsed else self._run
            try:
                ctx = run(body, source.newline, path, repo, facts, active, layout, treated, handover)
            except _PlanFailed:
                layout = None  # the file is redone whole
                continue
            except _ParseFailed as exc:
                error = _file_error(repo, path, exc.line, exc.message_for(body), exc.column)
                return FileOutcome(path, (error,))
            except _RuleCrashed as exc:
                # Isolate the rule: report it and redo the file without it.
                crashed.append(_rule_error(repo, path, exc))
                active = [rule for rule in active if rule is not exc.rule]
                continue
            return self._outcome(ctx, source, tuple(crashed))
        return FileOutcome(path, tuple(crashed))

    def _layout(self, body: str, path: str, active: list[Rule], facts: FrozenSet[str],
                handover: Optional[Handover] = None) -> Optional[Layout]:
        """The file cut into units for a selective parse (or none: see :meth:`_run_unparsed`),
        or None to parse it whole: the full mode, an eager file, one that binds a name through
        a module accessor (see :func:`binds_through_accessors`), a short one, or one where a
        cheap look says the rules need nearly all of it anyway (see ``units.may_skip``),
        unless another says no rule reading the tree may have a site in it. A layout the
        analysis handed over costs no parse (less than those looks): every such file has it."""
        if self.mode != SELECTIVE or may_enable_eager(body) \
                or binds_through_accessors(body, path, facts, handover):
            return None
        marks = [mark for rule in active for mark in rule._ast_sites]
        if handover is not None:
            return handover.layout(body, marks)
        needs = [self._need(rule, facts) for rule in active]
        # A word a mark gives (an ``assert`` that may count) is the layout's to decide: the text
        # cannot tell which nodes the mark's test accepts, so the first look leaves it out. A
        # mark's ``@name`` (``@dropout``) it reads as the name its nodes spell: a file that
        # spells it is laid out, or not, as without the mark (a layout costs an ``ast`` parse).
        marked = frozenset(word for _, word, _ in marks if not word.startswith("@"))
        looks = [RuleNeed(need.scope, frozenset(name.lstrip("@") for name in need.site_names))
                 for need in needs]
        if self.plan_every_file or may_have_no_site(body, [
                RuleNeed(look.scope, look.site_names - marked) for rule, look in zip(active, looks)
                if rule._reads_tree]):
            return module_layout(body, marks)
        if body.count("\n") < SELECTIVE_MIN_LINES or not may_skip(body, looks):
            return None
        return module_layout(body, marks)

    def _run(self, body: str, newline: str, path: str, repo: str, facts: FrozenSet[str],
             active: list[Rule], layout: Optional[Layout], treated: str = TF1,
             handover: Optional[Handover] = None) -> FileContext:
        """The rules over one file: parsed whole, or (with a ``layout``) only the units the
        rules need (:class:`_PlanFailed` when that does not work out: redo it whole)."""
        plan = plan_parse(layout, [self._need(rule, facts) for rule in active]) if layout else None
        parsed = plan.text() if plan is not None else body
        self.counts["selective" if plan is not None else "whole"] += 1
        self.counts["skipped_lines"] += plan.skipped_lines if plan is not None else 0
        try:
            tree = _parse(parsed)
        except _ParseFailed:
            if plan is not None:
                raise _PlanFailed() from None  # the whole file's parse reports the error
            raise
        if plan is not None:
            plan.mark(tree)
        ctx = FileContext(repo=repo, path=path, original=body, newline=newline, tree=tree,
                          facts=facts, enabled_rules=self._enabled, parsed=parsed,
                          file_kind=treated)
        ctx._handover = handover
        # The whole file parsed, with a layout (ast reads it as fissix does): its modules' bindings
        # are the handed-over reading's until a rule runs (``FileContext._pristine_whole``).
        ctx._pristine_whole = plan is None and layout is not None and handover is not None
        bound = {module for module in self._modules if may_bind(module, body) and ctx.names(module).bindings}
        ctx._pristine_whole = False
        entry = ENTRY_FACT + path in facts  # NPU061 runs on an entry that binds no TF too
        active = [rule for rule in active if bound.intersection(rule.modules) or treated == NON_TF
                  or (entry and rule in self._scripts) or (rule.script_fact and rule.script_fact + path in facts)]
        if not active or (treated == TF1 and self._eager(ctx, body)):
            for rule in active:  # none when the file binds no module of theirs
                self._guarded(rule, ctx, partial(rule.skipped, tree, ctx))
            self._restore(plan, ctx)
            return ctx
        self._ctx, self._active = ctx, frozenset(rule.id for rule in active)
        self._tf_bound = ctx.tf.bindings
        try:
            for rule in active:
                self._guarded(rule, ctx, partial(rule.start, tree, ctx))
            self._traverse(tree, path)
            self._visit_references(ctx, [rule for rule in active if self._may_reference(rule, ctx.original)])
            for rule, edit in ctx.deferred:
                self._guarded(rule, ctx, edit)
            for rule in active:
                self._guarded(rule, ctx, partial(rule.finish, tree, ctx))
            place_asked_imports(tree, ctx)
        finally:
            self._ctx, self._active, self._tf_bound = None, frozenset(), {}
        self._restore(plan, ctx)
        return ctx

    def _run_unparsed(self, body: str, newline: str, path: str, repo: str, facts: FrozenSet[str],
                      active: list[Rule], layout: Optional[Layout], treated: str = TF1,
                      handover: Optional[Handover] = None) -> FileContext:
        """The rules over a file that no rule reading the tree has a site in (by their
        ``_scope`` and site names, on the ``layout``): no fissix parse; only the rules that read
        no tree (``Rule._reads_tree``: the API audits) run, with the file's text as the tree
        (an empty module whose end marker's prefix it is) and its bindings read from ``ast``.
        Such rules do not edit (:class:`_PlanFailed` if one did: the file is redone)."""
        self.counts["unparsed"] += 1
        tree = pytree.Node(syms.file_input, [pytree.Leaf(token.ENDMARKER, "", prefix=body)])
        ctx = FileContext(repo=repo, path=path, original=body, newline=newline, tree=tree, facts=facts,
                          enabled_rules=self._enabled, parsed=body, file_kind=treated)
        ctx._unparsed = True
        ctx._handover = handover
        bound = {module for module in self._modules if may_bind(module, body) and ctx.names(module).bindings}
        active = [rule for rule in active
                  if not rule._reads_tree and (bound.intersection(rule.modules) or treated == NON_TF)]
        for rule in active:
            self._guarded(rule, ctx, partial(rule.start, tree, ctx))
        for rule, edit in ctx.deferred:
            self._guarded(rule, ctx, edit)
        for rule in active:
            self._guarded(rule, ctx, partial(rule.finish, tree, ctx))
        if ctx.imports or tree_text(tree) != body:
            raise _PlanFailed()
        ctx._rewrite = body  # the outcome need not render it again
        return ctx

    def _need(self, rule: Rule, facts: FrozenSet[str]) -> RuleNeed:
        """What ``rule`` needs parsed in the selective mode (see ``units``), once per repo."""
        key = (rule.id, facts)
        need = self._needs.get(key)
        if need is None:
            if len(self._needs) > 4096:
                self._needs.clear()
            try:
                names = frozenset(rule._site_names_for(facts))
            except Exception:  # a plugin's bug: read the whole file for it, as --engine full
                need = self._needs[key] = RuleNeed(MODULE, frozenset())
            else:
                need = self._needs[key] = RuleNeed(rule._scope, names)
        return need

    @staticmethod
    def _restore(plan: Optional[ParsePlan], ctx: FileContext) -> None:
        """The skipped units' own bytes back into the tree (see :meth:`ParsePlan.restore`), once
        every rule has run, and the tree's text rendered once: each top-level statement's, joined
        for the compile check (the parsed units'), then with the restored units' text in place of
        their placeholders' for the outcome (:attr:`FileContext._rewrite`)."""
        if plan is None:
            return
        pieces = [tree_text(statement) for statement in ctx.tree.children]
        ctx._parsed_rewrite = "".join(pieces)  # what the compile check needs
        restored = plan.restore(ctx.tree)
        if restored is None:
            raise _PlanFailed()
        children = ctx.tree.children
        for at in restored:
            pieces[at] = tree_text(children[at])
        ctx._rewrite = "".join(pieces)

    @staticmethod
    def _eager(ctx: FileContext, text: str) -> bool:
        """An eager-mode file is not sess.run code: one finding, and no rule runs on it."""
        found = eager_call(ctx.tree, ctx.tf) if may_enable_eager(text) else None
        if found is None:
            return False
        call, spelled = found
        line, column = position(call)
        ctx.findings.append(file_finding(ctx.repo, ctx.path, "unmigrated",
                                         EAGER.format(call=f"{spelled}()"), line, column))
        return True

    def _traverse(self, tree: pytree.Node, path: str) -> None:
        """One post-order walk offering each node to the active rules' fixers for its type.

        Replaces ``refactor_tree``, which also walks the tree in pre-order and runs the bottom
        matcher over every leaf although no Bowler fixer uses either. A fixer whose pattern
        needs a given name at a given child (``trailer< '.' 'dropout' >``) is looked up by
        that child's value, so most nodes are offered to no fixer at all.
        """
        dispatch = self._dispatch.get(self._active)
        if dispatch is None:
            dispatch = self._dispatch[self._active] = _Dispatch(
                [fixer for fixer in self._fixers if fixer.rule_id in self._active], self._checks,
                self._tf_calls)
        if not dispatch.heads:
            return
        for fixer in self._fixers:
            fixer.start_tree(tree, path)
        heads, tf_bound = dispatch.heads, self._tf_bound
        for node in post_order(tree, dispatch.leaves, dispatch.nodes):
            head = heads.get(node.type)
            if head is None:
                continue
            candidates, keyed, untf = head
            if untf is not None:  # a power node: its call through a name not bound to TF is
                first = node.children[0]  # offered to no rule that wants TF calls only
                if first.type != token.NAME or first.value not in tf_bound:
                    candidates = untf
            for index, by_value in keyed:
                if index == SELF:
                    leaf = node
                else:
                    children = node.children
                    if index >= len(children):
                        continue
                    leaf = children[index]
                found = by_value.get(getattr(leaf, "value", ""))  # a node: no key (names are non-empty)
                if found:
                    candidates = tuple(sorted(candidates + found, key=_first)) if candidates else found
            for _, check, fixer in candidates:
                if not check(node):
                    continue
                results = fixer.match(node)
                if results:
                    new = fixer.transform(node, results)
                    if new is not None:
                        node.replace(new)

    def _may_reference(self, rule: Rule, text: str) -> bool:
        """Can the file ``text`` name one of the rule's :attr:`Rule.calls`/:attr:`Rule.uses`?
        Any reference spells the name's last part somewhere in the file (where it is used, or
        in the import or assignment that binds it under another name), so a file without one
        needs no walk for the rule."""
        return any(name in text for name in self._last_names[rule.id])

    def _visit_references(self, ctx: FileContext, rules: Sequence[Rule]) -> None:
        """Offer each rule the calls and references of the qualified names it declared
        (:attr:`Rule.calls`, :attr:`Rule.uses`), innermost first; one walk for all rules."""
        if not rules:
            return
        wanted = [WantedNames(tuple(ctx.names(root) for root in name_roots(rule.calls + rule.uses)),
                              qualified_names(rule.calls), qualified_names(rule.uses))
                  for rule in rules]
        heads = {name for one in wanted for resolver in one.resolvers for name in resolver.heads}
        index, found = NameIndex(wanted), []
        for node in post_order(ctx.tree, {token.NAME: frozenset(heads)}, frozenset({syms.power})):
            head = node.children[0] if node.type == syms.power else node
            if head.type != token.NAME or head.value not in heads:
                continue
            found += [(rules[at], reference) for at, reference in index.references_at(node)]
        for rule, reference in found:
            self._guarded(rule, ctx, partial(rule.visit_reference, reference, ctx), reference.node)

    def _tf_call_check(self, check: Callable[[pytree.Base], bool]) -> Callable[[pytree.Base], bool]:
        """``check``, and for a ``power`` node, that it calls a name bound to TensorFlow
        (see ``Rule._bare_calls_of_tf_names``): most calls of a file are not."""
        def tf_call(node: pytree.Base) -> bool:
            if node.type == syms.power:
                head = node.children[0]
                if head.type != token.NAME or head.value not in self._tf_bound:
                    return False
            return check(node)

        return tf_call

    def _outcome(self, ctx: FileContext, source: SourceText, crashed: tuple[Finding, ...]) -> FileOutcome:
        """What the rules made of the file of ``ctx``; the file's tree is released (:func:`released`)
        before the compile check of a changed file, which would otherwise hold both at once."""
        own = tuple(settle_dead(ctx.findings, partial(ast_handover.file_dead_lines, ctx)))
        findings = crashed + own
        sites = tuple(sorted(ApiSites.of_key(key, count) for key, count in ctx.api_sites.items()))
        new_text = ctx._rewrite if ctx._rewrite is not None else tree_text(ctx.tree)
        path, repo, original, parsed, parsed_rewrite = ctx.path, ctx.repo, ctx.original, ctx.parsed, ctx._parsed_rewrite
        released(ctx)
        if new_text == original:
            return FileOutcome(path, findings, api_sites=sites)
        if not source.text.endswith("\n"):  # the "\n" the parse needed, or a rule's own newline
            crlf = new_text.endswith("\r\n") and not source.text.endswith("\r")
            new_text = new_text[:-2] if crlf else new_text[:-1]
        changed_by = tuple(sorted({f.rule_id for f in own if f.status == "migrated"}))
        # A selective parse's check compiles the parsed units only (a compile error is one of
        # a scope; the placeholders hold the other lines, so an error's line is the file's).
        problem = _compile_regression(source.text, new_text, path) if parsed_rewrite is None \
            else _compile_regression(parsed, parsed_rewrite, path)
        if problem:
            message = f"file left unchanged: the rewrite by {', '.join(changed_by)} {problem}"
            kept = tuple(f for f in findings if f.status != "migrated")
            return FileOutcome(path, kept + (_file_error(repo, path, 1, message),),
                               api_sites=uncovered(sites))  # no rewrite covers them now
        return FileOutcome(path, findings, source.encode(new_text), changed_by, sites)

    def _callback(self, rule: Rule) -> Callable[[pytree.Base, Capture, str], None]:
        def callback(node: pytree.Base, capture: Capture, filename: str) -> None:
            ctx = self._ctx
            if ctx is not None and rule.id in self._active:
                self._guarded(rule, ctx, lambda: rule.visit(node, capture, ctx), node)

        return callback

    @staticmethod
    def _guarded(
        rule: Rule, ctx: FileContext, action: Callable[[], None], node: Optional[pytree.Base] = None
    ) -> None:
        """Run a rule's code; any exception becomes :class:`_RuleCrashed` (never into Bowler).

        The crash is placed at ``node`` (else line 1), computed only on a crash: most visits
        end without a finding, and looking a position up costs a walk to the first leaf.
        """
        ctx.rule = rule
        try:
            action()
        except Exception as exc:
            raise _RuleCrashed(rule, exc, position(node) if node is not None else (1, 0)) from None
        finally:
            ctx.rule = None


@lru_cache(maxsize=len(GRAMMARS))
def _parser(grammar: Any) -> Parser:
    """The parser of one of :data:`GRAMMARS`, built when first needed (Python 2's, only for
    a file Python 3's cannot read)."""
    return Parser(grammar)


def _parse(body: str) -> pytree.Node:
    """Parse as Python 3, else as Python 2; report the error of the grammar that read
    further (Python 3's on a tie: the likelier intent)."""
    errors = []
    for grammar in GRAMMARS:
        try:
            return _parser(grammar).parse_string(body)
        except Exception as exc:  # fissix raises ParseError, TokenError, IndentationError
            errors.append(exc)
    raise _ParseFailed(max(errors, key=_error_position))


def size_problem(text: str) -> Optional[str]:
    """Why ``text`` is too large to parse (over :data:`MAX_SOURCE_TOKENS` tokens), or None.
    A token takes at least one character, so only a file longer than the limit is counted,
    and the count stops at the limit."""
    if len(text) <= MAX_SOURCE_TOKENS:
        return None
    lines = text.count("\n")
    for count, _ in enumerate(_TOKEN.finditer(text), start=lines + 1):
        if count > MAX_SOURCE_TOKENS:
            return (f"file too large to migrate automatically (over {MAX_SOURCE_TOKENS:,} tokens "
                    f"and lines, {lines + 1:,} lines): migrate it by hand")
    return None


def parse_module(text: str) -> Optional[pytree.Node]:
    """``text`` parsed as :meth:`Engine.process` parses a file, or None when it does not
    parse: for a repository-wide analysis that needs to resolve names before the rules run
    (:func:`unlink` the tree when done with it: the collector need not trace it)."""
    try:
        return _parse(text if text.endswith("\n") or not text else text + "\n")
    except (_ParseFailed, RecursionError):
        return None


def module_parses(text: str) -> bool:
    """Does ``text`` parse as :meth:`Engine.process` parses a file (is :func:`parse_module`'s
    answer a tree)? Answered without building the tree."""
    body = text if text.endswith("\n") or not text else text + "\n"
    for grammar in GRAMMARS:
        try:
            _parser(grammar).check_string(body)
        except Exception:  # fissix's ParseError, TokenError, IndentationError, as _parse
            continue
        return True
    return False


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while one file is worked on.

    The file's tree (hundreds of thousands of objects) is alive throughout, so each
    collection meanwhile only re-scans it: a fifth of the parse time. Once the file is done
    its tree is garbage, and goes at the first collection after. The repository analysis
    pauses it over all its files (``LoadedRules.files_facts``, a young collection every 64
    files): a file's ``ast`` has no cycles and is freed as soon as it is dropped, but young
    collections would scan the cached trees meanwhile.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def released(ctx: FileContext) -> None:
    """Break the cycles of a file that is done, so that reference counting frees its tree at
    once and the collector does not trace hundreds of thousands of nodes first (a third less
    CPU than collecting them): the parent link of every node of the tree, and the context's
    own state (the rules' analyses and deferred edits, closures that refer back to it); and
    drop the file's ``ast`` (:func:`~.modules.forget_trees`)."""
    tree = ctx.tree
    vars(ctx).clear()
    unlink(tree)
    forget_trees()  # the file's ``ast`` too (the unit layout's, the audit's)


def unlink(tree: pytree.Base) -> None:
    """Drop the parent link of every node of ``tree``, which nothing is to read any more:
    reference counting frees it then, without the collector (see :func:`released`)."""
    stack = [tree]
    pop, push = stack.pop, stack.extend
    while stack:
        node = pop()
        node.parent = None
        push(node.children)


def binds_through_accessors(body: str, path: str, facts: FrozenSet[str],
                            handover: Optional[Handover] = None) -> bool:
    """Does the file ``body`` bind a name to the module a repository's accessor function
    returns (``nn = compat.nn()``), or to an alias of one (``layers = tf_lib.layers``)?
    ``ImportNames`` binds such a name for every unit, wherever the assignment is (at module
    level, in an ``if``, in a function that declares it ``global``), while a selective parse
    knows only the bindings of the units it parses (``units``: imports and their aliases are
    always parsed, an accessor's call is not): the file is parsed whole. Seen as a difference
    between the file's bindings read with and without its accessors (both from ``ast``)."""
    accessors = repository_accessors(facts)
    if all(target == UNRESOLVED_ACCESSOR for target in accessors.values()):
        return False  # a module not known binds no name (nor does no accessor at all)
    imported = handover.imported_names() if handover is not None else None
    spelled = file_accessors(path, body, accessors, imported, accessor_reexports(facts))
    if all(target == UNRESOLVED_ACCESSOR for target in spelled.values()):
        return False
    if handover is not None:
        return handover.import_names(TF, spelled).bindings != handover.import_names(TF).bindings
    through, without = ast_import_names(body, TF, spelled), ast_import_names(body, TF)
    return through is not None and without is not None and through.bindings != without.bindings


def may_bind(module: str, text: str) -> bool:
    """Can the file ``text`` bind ``module`` (a root package)? Only an import that spells its
    name binds a module other than TensorFlow (an alias assignment starts from a bound
    name), or Horovod's conventional name imported from a repository module (``tf_aliases``);
    TensorFlow may also be bound through the repository's accessor functions."""
    return module == TF or module in text or module == HOROVOD and may_bind_horovod(text)


def _anything(node: pytree.Base) -> bool:
    return True


#: A fixer as :class:`_Dispatch` offers nodes to it: (its order, its quick check, the fixer).
_Candidate = tuple[int, Check, Any]


def _first(candidate: _Candidate) -> int:
    return candidate[0]


class _Dispatch:
    """Which fixers a node of each type is offered to, for one set of active fixers.

    ``heads`` maps a node type to ``(fixers tried on every such node, keyed, untf)``, where
    ``keyed`` is ``((child index, {name: fixers}), ...)``; a fixer is ``(order, check,
    fixer)`` and candidates are tried in the fixers' order. For ``power``, ``untf`` is the
    first without the ``tf_calls`` fixers, for a call through a name not bound to TensorFlow
    (their checks reject it: :meth:`Engine._tf_call_check`), else None. ``leaves`` says which leaves the
    walk yields: the leaf types fixers head on, with the names they need (None: any value);
    ``nodes``, which other node types it yields.
    """

    def __init__(self, fixers: Sequence[Any], checks: dict[Any, Check], tf_calls: FrozenSet[Any]) -> None:
        self.heads: dict[int, tuple[tuple[_Candidate, ...],
                                    tuple[tuple[int, dict[str, tuple[_Candidate, ...]]], ...],
                                    Optional[tuple[_Candidate, ...]]]] = {}
        self.leaves: dict[int, Optional[FrozenSet[str]]] = {}
        order = {fixer: number for number, fixer in enumerate(fixers)}
        for kind, of_kind in (_get_headnode_dict(fixers) if fixers else {}).items():
            if not of_kind:
                continue
            plain: list[_Candidate] = []
            keyed: dict[int, dict[str, list[_Candidate]]] = {}
            for fixer in of_kind:
                candidate = (order[fixer], checks[fixer], fixer)
                key = leaf_key(fixer.pattern, kind)
                if key is None:
                    plain.append(candidate)
                    continue
                for value in key[1]:
                    keyed.setdefault(key[0], {}).setdefault(value, []).append(candidate)
            untf = tuple(candidate for candidate in plain if candidate[2] not in tf_calls) \
                if kind == syms.power and any(candidate[2] in tf_calls for candidate in plain) else None
            self.heads[kind] = (tuple(plain), tuple(
                (index, {value: tuple(found) for value, found in by_value.items()})
                for index, by_value in keyed.items()), untf)
            if kind < 256:  # a token type: the walk yields only the leaves asked for
                self.leaves[kind] = None if plain else frozenset(keyed.get(SELF, ()))
        self.nodes: FrozenSet[int] = frozenset(kind for kind in self.heads if kind >= 256)


def _may_act(rule: Rule, text: str) -> bool:
    """The ``Rule._tokens`` prefilter: whether the file's text holds one of the rule's tokens
    (a speed hint, applied once the file's kind is known: a file no rule's tokens match keeps
    its kind and file findings; only a parse or eager-mode finding needs a rule that runs)."""
    return not rule._tokens or any(token in text for token in rule._tokens)


class _PlanFailed(Exception):
    """A selective parse did not work out (see ``units``): the file is redone whole."""


class _ParseFailed(Exception):
    """fissix could not parse the file; the message names the place and the likely cause."""

    def __init__(self, error: Exception) -> None:
        self.line, self.column = _error_position(error)
        self.where = f"cannot parse line {self.line}, column {self.column}: {_error_detail(error)}"
        super().__init__(
            f"{self.where}. The parser (fissix) reads Python 2 and Python 3 but not some newer "
            "syntax: match statements, positional-only '/' parameters, except*, parenthesised "
            "context managers; migrate this file by hand"
        )

    def message_for(self, text: str) -> str:
        """The message for the file ``text``: one the running Python cannot compile either
        has a syntax error (a placeholder left in, a merge conflict), not newer syntax."""
        if module_ast(text) is not None:
            return str(self)
        return (f"{self.where}. Python {sys.version_info[0]}.{sys.version_info[1]} cannot compile "
                "this file either: fix its syntax error, then run npu-codemod again")


def _error_position(error: Exception) -> tuple[int, int]:
    """(line, column) of a fissix ParseError/TokenError or a SyntaxError-like exception."""
    context = getattr(error, "context", None)  # ParseError: (prefix, (line, column))
    if context and len(context) == 2 and isinstance(context[1], tuple):
        return context[1]
    args: tuple[Any, ...] = getattr(error, "args", ())
    if len(args) == 2 and isinstance(args[1], tuple) and len(args[1]) == 2:  # TokenError
        return args[1]
    return getattr(error, "lineno", None) or 1, getattr(error, "offset", None) or 0


def _error_detail(error: Exception) -> str:
    value = getattr(error, "value", None)
    if value is not None:  # ParseError: the token fissix did not expect
        return f"unexpected {value!r}" if value else "unexpected end of file"
    return str(error.args[0] if error.args else error).split("\n")[0]


def _compile_regression(old: str, new: str, path: str) -> Optional[str]:
    """Why ``new`` is worse than ``old`` (no longer compiles), or None."""
    try:
        compile(new, path, "exec", dont_inherit=True)
        return None
    except (SyntaxError, ValueError) as exc:
        # Not str(exc): its line number is one of the rewritten file, not of the original.
        new_error = f"{type(exc).__name__}: {getattr(exc, 'msg', exc)}"
    try:
        compile(old, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return None  # Python 2 source: it never compiled, the parse check is all we have
    return f"does not compile ({new_error})"


def file_finding(repo: str, path: str, status: Status, message: str, line: int = 1,
                 column: int = 0) -> Finding:
    """A finding about a whole file (rule :data:`FILE_RULE_ID`): why it was not migrated."""
    return Finding(repo, path, line, column, FILE_RULE_ID, FILE_RULE_NAME, status, message)


def _file_error(repo: str, path: str, line: int, message: str, column: int = 0) -> Finding:
    return file_finding(repo, path, "error", message, line, column)


def _rule_error(repo: str, path: str, crash: _RuleCrashed) -> Finding:
    rule = crash.rule
    where = crash.where_in_rule()
    at = f" (at {where})" if where else ""
    message = f"rule crashed: {crash}{at}; the file was migrated without this rule"
    return Finding(repo, path, crash.line, crash.column, rule.id, rule.name, "error", message,
                   trace=crash.trace)
