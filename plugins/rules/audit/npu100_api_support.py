"""NPU100 api-support: every TensorFlow and Horovod API a file uses, against Ascend's support list.

The uses are collected in :meth:`ApiSupport.start`, before any rule edits the file (a rewrite
replaces ``tf.nn.dropout`` or removes ``hvd.init()``): from the fissix tree when it holds the
whole file, else (a selective parse, where skipped units are placeholders, or a file no other
rule acts on, which the engine does not parse) from the text with CPython's ``ast``
(``site_references``: the same sites), and judged in :meth:`ApiSupport.finish`,
after every other rule (``after = ("*",)``) has reported: a site another rule reported is not
reported again, and a site of an API Ascend migrates that its owner did not cover is. The
sites of the file as the run writes it are counted (:meth:`FileContext.count_api`) for the
reports' API readiness (see ``written``): a rerun over the migrated branch counts the same;
a use inside code a rule removed (``cross_tower_ops=`` NPU026 drops) is neither counted nor
reported (``rewritten_away``).
"""

from __future__ import annotations

import ast
import dataclasses
from collections import defaultdict
from dataclasses import dataclass
from typing import Optional, Sequence

from npu_codemod.api import FileContext, ImportNames, Node, Rule, hookimpl
from npu_codemod.api._toolkit import (
    ESTIMATOR_MODULES,
    HOROVOD_MODULES,
    HOROVOD_OPT_IN,
    HOROVOD_PARAMETER_API,
    HOROVOD_RULES,
    HOROVOD_STAR_IMPORT,
    TF1,
    AliasVerdict,
    ApiStatus,
    Finding,
    ReferenceSite,
    WrittenUse,
    accessor_facts,
    alias_reads,
    alias_repeats,
    api_advice,
    ast_statement_spans,
    distribution,
    horovod_star_imports,
    in_npu_form,
    list_name,
    may_bind_horovod,
    owner_of,
    owner_verdict,
    parameter_uses,
    report_byteps,
    rewritten_away,
    site_references,
    support_list,
    unresolved_accesses,
    value_alias_lines,
    written_uses,
)

#: What ``accessor:`` facts say of a function whose module is not known.
UNRESOLVED = "?"
UNRESOLVED_ACCESS = ("unresolved TensorFlow access: {function}() is a function of the repository "
                     "that returns a TensorFlow module npu-codemod cannot resolve (it picks or looks "
                     "the module up): check {code} against Ascend's API support list by hand")
HOROVOD_SKIPPED = ("Horovod API in a file no rule rewrites ({api}): port the file to graph mode "
                   "(tf.Session or Estimator) first, then {then}")

#: Findings on one line, by line (the rules' own, not NPU100's).
Lines = dict[int, list[Finding]]
#: The uses of the file as it was, and their verdicts, by (line, column).
Judged = dict[tuple[int, int], tuple["ApiUse", "Verdict"]]
#: How Ascend's list (and ``list_name``) spells Horovod's APIs.
HVD = "hvd."


@dataclass(frozen=True)
class ApiUse:
    """One use site: where it is (its line, columns, whether it is called or a base class,
    its spelling), the API as the site names it in the list's spelling
    (``tf.contrib.slim.conv2d``), the listed entry it falls under and that entry's status."""

    site: ReferenceSite
    api: str
    listed: str
    status: str


@dataclass(frozen=True)
class Verdict:
    covered: bool  # a migrated finding (or an owner that covers the API) takes care of the site
    message: str = ""  # the finding to report, "" for none
    level: str = ""
    owned: bool = False  # another rule's finding on the same call says how to migrate the site


class ApiSupport(Rule):
    id = "NPU100"
    name = "api-support"
    pack = "audit"
    audits_apis = True  # its findings count towards API readiness, not rules coverage
    file_kinds = frozenset({TF1})  # TF 2.x files: NPU071, the TF 2.6 list
    description = ("Check every TensorFlow and Horovod API a file uses against Ascend's API "
                   "support list; report what blocks the migration.")
    guide_section = "工具迁移API支持度"  # the column of tf1.15_api_support_list.xlsx
    guide_section_en = "Ascend's TF 1.15 API support list"
    guide_url = Rule.catalog_url(id, name)
    reports = (
        "Every use of an API (a call, a dotted name used as a value, a base class or an "
        "annotation; not a name an assignment, loop, `with`, `except` or `del` binds), in any "
        "spelling (aliases, `from` imports, `compat.v1`, internal modules, `tensorflow_estimator` "
        "as `tf.estimator`), that Ascend's list marks `unsupported` "
        "(replace it), `deprecated` (most of `tf.contrib`: replace it with its public TF 1.15 "
        "equivalent first; contrib's loss scaling, which NPU031/NPU032 migrate to npu_bridge's, "
        "is judged as an API Ascend migrates) or `under-analysis` (test it on the NPU; SARIF level `note`). A name "
        "the list does not have takes the status of its longest listed prefix "
        "(`slim.conv2d` is under `tf.contrib.slim`). A use of an API Ascend migrates "
        "(`tf.Session`, `tf.estimator.Estimator`, `hvd.init`...) that the rule owning it did not "
        "report, or whose rule is disabled: that is a miss to migrate by hand. A site another "
        "rule reported is not reported again, nor a variable an assignment made an alias of an "
        "API (`is_per_host = tf.contrib.tpu.InputPipelineConfig.PER_HOST_V2`) where it is used: "
        "the assignment is its site, reported and counted once, unless a rule covered every use of the name (`Reg = "
        "tf.estimator.BoostedTreesRegressor`, then `Reg(...)` given its config): those uses are "
        "the sites; `supported` APIs never are, nor the NPU form "
        "(`OptimizerOptions.OFF`). Every site of the file as the run writes it counts towards the "
        "reports' API readiness: a use a rule rewrote away (`tf.nn.dropout`) is none (the rule's "
        "finding is the site), nor a use inside code a rule removed (an argument NPU026 drops: "
        "no finding either), nor the tool's own NpuOptimizer lines, so a rerun over the "
        "migrated branch counts the same. In a file no rule rewrites (eager mode), each "
        "Horovod use is still reported, naming the opt-in while the distributed pack is off; "
        "so is, while it is off, Horovod's API used through a parameter, a local `hvd`, an "
        "attribute of `self` that holds the module, any attribute named `hvd` "
        "(`model.hvd.rank()`), a repository module's variable that holds it "
        "(`hvd.hvd_global_object.BroadcastGlobalVariablesHook(0)`), or `from horovod.tensorflow "
        "import *` (the import and its names' uses: what NPU023/NPU025 report). Each "
               "use of BytePS (`byteps.tensorflow`, Horovod's API on a stack the NPU has no "
               "counterpart of), with the NPU form the distributed pack gives Horovod's: no rule "
               "rewrites it.")
    example = """
        import horovod.tensorflow as hvd
        import tensorflow as tf
        from tensorflow.contrib import slim


        def tower(images):
            net = slim.conv2d(images, 64, [3, 3])
            net = hvd.allreduce(tf.layers.flatten(tf.nn.relu(net)))
            return tf.compat.v1.is_finite(net)


        estimator = tf.estimator.Estimator(model_fn=tower)
    """
    #: ``tensorflow_estimator`` too: its names resolve to their ``tf.estimator`` ones.
    modules = (*ESTIMATOR_MODULES, "horovod")
    #: Its uses come from ``ast`` (the file's own text), its verdicts from the other rules'
    #: findings: the fissix tree is not read, so no unit need be parsed for it.
    _scope = "site"
    _reads_tree = False  # nor does it need a fissix parse of a file where no other rule acts
    after = ("*",)  # reads every other rule's findings

    def start(self, tree: Node, ctx: FileContext) -> None:
        ctx.analysis(api_uses)  # before the rules edit anything (it reads ctx.original anyway)

    def finish(self, tree: Node, ctx: FileContext) -> None:
        lines = _lines(ctx.findings, self.id)
        # Horovod's own code: the distributed pack reports each file once as library code (the
        # repository's distribution is looked up only when one of the pack's rules is on).
        library = bool(ctx.enabled_rules.intersection(HOROVOD_RULES)) and distribution(ctx).library
        judged = _judged(ctx, lines)
        repeats = repeated_uses(ctx, judged)
        written = written_api_uses(ctx, judged, repeats)
        removed = rewritten_away(ctx, (use.site for use, _ in judged.values()), written,
                                 (was[0].site for was in (one.was for one in written) if was))
        for key, (use, verdict) in judged.items():
            site = use.site
            if verdict.message and not (library and use.api.startswith(HVD)) \
                    and key not in repeats and key not in removed and not in_npu_form(ctx, site):
                ctx.report_at(site.line, site.column, "unmigrated", verdict.message, verdict.level)
        for use, verdict in counted_uses(ctx, written, lines):
            ctx.count_api(use.listed or use.api, use.status, verdict.covered, verdict.owned)
        if not ctx.enabled_rules.intersection(HOROVOD_RULES):
            for site in horovod_module_values(ctx):
                ctx.report_at(site.line, site.column, "unmigrated", f"the Horovod module is used "
                              f"as a value ({site.spelled}): {HOROVOD_OPT_IN}", "note")
            for line, column, module in horovod_star_imports(ctx):
                ctx.report_at(line, column, "unmigrated",
                              f"{HOROVOD_STAR_IMPORT.format(module=module)}; {HOROVOD_OPT_IN}", "note")
            for held in parameter_uses(ctx, HOROVOD_PARAMETER_API):  # what NPU023/NPU025 report
                ctx.report_at(held.line, held.column, "unmigrated", held.noted(HOROVOD_OPT_IN), "note")
        report_byteps(ctx, tf2=False)  # Horovod's API, which no rule migrates
        _report_unresolved(ctx)

    def skipped(self, tree: Node, ctx: FileContext) -> None:
        _report_horovod(ctx)
        report_byteps(ctx, tf2=False)


def _report_horovod(ctx: FileContext) -> None:
    """Each Horovod use of a file no rule rewrites (eager mode): the distributed pack leaves it
    too, so a person ports it; the message names the opt-in while the pack is off."""
    if ctx.enabled_rules.intersection(HOROVOD_RULES) and distribution(ctx).library:
        return  # Horovod's own code: the distributed pack reports each file once
    then = HOROVOD_OPT_IN if not ctx.enabled_rules.intersection(HOROVOD_RULES) \
        else "the distributed pack migrates it"
    for site in ctx.analysis(_sites):
        api = list_name(site.name)
        if (api or "").startswith(HVD) or site.name in HOROVOD_MODULES:
            ctx.report_at(site.line, site.column, "unmigrated", HOROVOD_SKIPPED.format(
                api=api or site.spelled, then=then))


def _report_unresolved(ctx: FileContext) -> None:
    """A call of a repository function that returns a TensorFlow module npu-codemod cannot
    resolve (``contrib.framework().arg_scope``): counted, and reported for a person."""
    unknown = [spelled for spelled, module in ctx.tf.accessors.items() if module == UNRESOLVED]
    if not may_call(ctx.original, unknown):
        return  # none of them called here: no walk of the file
    for line, column, code in unresolved_accesses(ctx.original, unknown):
        ctx.count_api(code, ApiStatus.UNKNOWN)
        ctx.report_at(line, column, "unmigrated", UNRESOLVED_ACCESS.format(
            code=code, function=code.partition("()")[0]))


def may_call(text: str, spellings: Sequence[str]) -> bool:
    """Whether ``text`` may call an accessor function spelled one of ``spellings``
    (``contrib.framework``): a call spells the function's last name, and ``ast`` names what an
    ASCII text spells (others: letters read NFKC-normalized, so no shortcut)."""
    return any(spelled.rpartition(".")[2] in text for spelled in spellings) or \
        bool(spellings) and not text.isascii()


def _judged(ctx: FileContext, lines: Lines) -> Judged:
    """Every use of the file as it was, with its verdict, by (line, column)."""
    judged: Judged = {}
    first = min(lines, default=None)  # the first line with a finding, looked up once
    #: With no finding near, a verdict depends on the API and whether it is a type only
    #: (a base class, an annotation, an ``isinstance`` type).
    alone: dict[tuple[str, str, str, bool], Verdict] = {}
    for use in ctx.analysis(api_uses):
        site = use.site
        on_line = lines.get(site.line) or (_on_statement(ctx, lines, site.line)
                                           if first is not None and first < site.line else [])
        if on_line:
            verdict = judge(use, on_line, ctx.enabled_rules)
        else:
            key = (use.api, use.listed, use.status, site.type_use)
            verdict = alone.get(key) or alone.setdefault(key, judge(use, (), ctx.enabled_rules))
        owner = owner_of(use.listed, use.status) if verdict.message else None
        if owner is not None and owner.at_site and lines and max(lines) > site.line:
            later = _later_in_statement(ctx, lines, site.line)
            if any(finding.rule_id in owner.rules for finding in later):  # its owner acted below
                verdict = judge(use, [*on_line, *later], ctx.enabled_rules)
        judged[(site.line, site.column)] = (use, verdict)
    return judged


def repeated_uses(ctx: FileContext, judged: Judged) -> frozenset[tuple[int, int]]:
    """The uses that are no site of their own (``codemods/value_aliases``): the reads of a
    variable an assignment made an alias of an API (``is_per_host =
    tf.contrib.tpu.InputPipelineConfig.PER_HOST_V2``, then ``is_per_host`` passed on), whose
    finding would be none or repeat the one on the assignment's line: one site, one finding,
    counted once; or an assignment that only binds a name to an API (``Reg =
    tf.estimator.BoostedTreesRegressor``) whose every use through that name (``Reg(...)``) a
    rule covered: the uses are the sites (the owner acts at the call), counted once per use.
    A binding never used, or used somewhere no rule covered, stays the one site reported."""
    if not judged:
        return frozenset()
    reads = alias_reads((use.site for use, _ in judged.values()), ctx.analysis(value_alias_lines))
    if not reads:
        return frozenset()
    verdicts = {key: AliasVerdict(verdict.message, verdict.covered) for key, (_, verdict) in judged.items()}
    return alias_repeats(verdicts, reads)


def written_api_uses(ctx: FileContext, judged: Judged,
                     repeats: frozenset[tuple[int, int]]) -> list[WrittenUse[tuple[ApiUse, Verdict]]]:
    """The API uses of the file as this run writes it (``written_uses``), each with the use
    of the file as it was that it is, and that use's verdict (None: a use a rule wrote); a
    repeat is none."""
    uses = [(use.site, (use, verdict)) for use, verdict in judged.values()]
    return written_uses(ctx, audited_modules(ctx), uses, repeats)


def counted_uses(ctx: FileContext, written: list[WrittenUse[tuple[ApiUse, Verdict]]],
                 lines: Lines) -> list[tuple[ApiUse, Verdict]]:
    """The API uses of the file as this run writes it (:func:`written_api_uses`), each with
    its verdict: a use as the file had it keeps its verdict; a use a rule wrote (a respelled
    value) is judged by the findings of the lines it replaced. A use a rewrite removed
    (``rewritten_away``) is none, and not reported either."""
    return [use.was or _new_use(use.site, use.replaced, lines, ctx) for use in written]


def _new_use(site: ReferenceSite, block: tuple[int, int], lines: Lines,
             ctx: FileContext) -> tuple[ApiUse, Verdict]:
    """A use the rewrite wrote, judged by the findings of the lines it replaced (a use
    written after the last of them: the line it was written before)."""
    api = list_name(site.name) or site.name
    entry, status = support_list().lookup(api)
    first, end = block
    found = [finding for number in range(first, max(end, first + 1)) for finding in lines.get(number, ())]
    use = ApiUse(site, api, entry, status)
    return use, dataclasses.replace(judge(use, found, ctx.enabled_rules), message="")


def api_uses(ctx: FileContext) -> tuple[ApiUse, ...]:
    """Every use of a TensorFlow or Horovod API in the file as written, in source order, with
    its status. The two finders give the same sites; the tree's costs no ``ast`` parse (none
    is made for a file parsed whole), ``ast``'s needs no fissix parse of the skipped units
    (a selective parse made the file's ``ast`` already); ``ast`` cannot read Python 2 code,
    whose file is always parsed whole."""
    listed = support_list()
    uses = []
    for site in ctx.analysis(_sites):
        found = listed.named(site.name)
        if found is not None:
            uses.append(ApiUse(site, *found))
    return tuple(uses)


def _sites(ctx: FileContext) -> Sequence[ReferenceSite]:
    """Every reference to a TensorFlow or Horovod name in the file as written."""
    return site_references(ctx, audited_modules(ctx))


def audited_modules(ctx: FileContext) -> list[ImportNames]:
    """The bindings the uses are read through: TensorFlow's, and Horovod's where the file may
    bind it (only an import that spells ``horovod`` does, or ``from common import hvd``;
    ``ast`` reads non-ASCII names NFKC-normalized: no shortcut there). Bindings of none read
    nothing: the same uses."""
    if may_bind_horovod(ctx.original) or not ctx.original.isascii():
        return [ctx.names("tensorflow"), ctx.names("horovod")]
    return [ctx.names("tensorflow")]


def horovod_module_values(ctx: FileContext) -> list[ReferenceSite]:
    """The sites that use a module of Horovod for TensorFlow itself as a value
    (``hasattr(hvd, "join")``): no API of the list, but a Horovod use all the same."""
    return [site for site in ctx.analysis(_sites) if site.name in HOROVOD_MODULES]


def judge(use: ApiUse, on_line: Sequence[Finding], enabled: frozenset[str]) -> Verdict:
    """What NPU100 makes of one use, given the other rules' findings on its line: a Horovod
    site's message names the opt-in while the distributed pack is off."""
    verdict = _judge(use, on_line, enabled)
    if verdict.message and use.api.startswith(HVD) and not enabled.intersection(HOROVOD_RULES):
        return Verdict(verdict.covered, f"{verdict.message}; {HOROVOD_OPT_IN}", verdict.level)
    return verdict


def _judge(use: ApiUse, on_line: Sequence[Finding], enabled: frozenset[str]) -> Verdict:
    same_call = [f for f in on_line if use.site.column <= f.column <= use.site.end_column]
    if use.status == ApiStatus.UNKNOWN and use.api.startswith(HVD) and not same_call:
        return Verdict(False, f"Horovod API, not in Ascend's list: {use.api} has no known NPU "
                       "form: remove it, or use the NPU's collective communication", "note")
    if use.status in ApiStatus.READY or use.status == ApiStatus.UNKNOWN:
        return Verdict(_migrated(same_call))
    owner = owner_of(use.listed, use.status)
    if owner is not None:  # covered by its owner (the shared table), or a miss to report
        return Verdict(*owner_verdict(owner, use.api, use.status, use.site, on_line, enabled))
    if same_call:  # at most one finding per site: that rule's instruction stands
        return Verdict(_migrated(same_call), owned=True)
    level = "note" if use.status == ApiStatus.UNDER_ANALYSIS else ""
    return Verdict(False, api_advice(use.status, use.api), level)


def _on_statement(ctx: FileContext, lines: Lines, line: int) -> list[Finding]:
    """The other rules' findings on the other lines of the statement that spans ``line`` (a
    rule reports a statement at its first line: ``x = (`` over ``tf.OptimizerOptions.ON_1)``).
    Asked only for a line below the first finding (above it there is nothing to look up, so
    no parse)."""
    start = ctx.analysis(statement_starts).get(line)
    if start is None:
        return []
    return [finding for number in range(start, line) for finding in lines.get(number, ())]


def _later_in_statement(ctx: FileContext, lines: Lines, line: int) -> list[Finding]:
    """The other rules' findings on the later lines of the statement that starts at ``line``
    (its owner may report the call's argument on the next line: ``tf.GraphOptions(`` over
    ``optimizer_options=tf.OptimizerOptions(global_jit_level=...))``, NPU051)."""
    return [finding for number in ctx.analysis(statement_lines).get(line, ()) for finding in lines.get(number, ())]


def statement_lines(ctx: FileContext) -> dict[int, list[int]]:
    """First line -> the later lines of each simple statement over several lines."""
    found: dict[int, list[int]] = {}
    for number, first in ctx.analysis(statement_starts).items():
        found.setdefault(first, []).append(number)
    return found


def statement_starts(ctx: FileContext) -> dict[int, int]:
    """Line -> the first line of the simple statement that spans it, for the lines after the
    first of statements over several lines (none for a file ``ast`` cannot read)."""
    spans = ast_statement_spans(ctx)  # the analysis's reading, or the file's ast
    if spans is None:
        try:
            ast.parse(ctx.original)  # only to raise what ast.parse raises beyond these
        except (SyntaxError, ValueError):
            return {}
        spans = []
    starts: dict[int, int] = {}
    for first, last in spans:
        for number in range(first + 1, last + 1):
            starts.setdefault(number, first)
    return starts


def _migrated(findings: Sequence[Finding]) -> bool:
    return any(finding.status == "migrated" for finding in findings)


def _lines(findings: Sequence[Finding], own_id: str) -> Lines:
    lines: Lines = defaultdict(list)
    for finding in findings:
        if finding.rule_id != own_id:
            lines[finding.line].append(finding)
    return lines


@hookimpl
def npu_codemod_analyze_file(path: str, text: str) -> Optional[set[str]]:
    """The repository's module accessor functions (``def tpu(): return contrib_tpu``): a call
    ``contrib.tpu().X`` resolves like the module, for every rule (``accessor:`` facts)."""
    return accessor_facts(path, text) or None


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [ApiSupport()]
