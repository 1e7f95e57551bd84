"""NPU071 tf2-api-support: every TensorFlow API a TF 2.x file uses, against Ascend's TF 2.6 list.

NPU100's counterpart for ``tf2``, ``tf2-compat`` and (in a TF 2.x repository) ``tf-neutral``
files, where NPU100 does not run: the list is a different one (``api_support_tf2.csv``, which
names the ``tf.compat.v1.*`` APIs themselves; in a ``tf2-compat`` file ``tf.estimator.X`` is
looked up as the ``tf.compat.v1.estimator.X`` the compat route runs). Every site counts towards
the reports' API readiness, but a use inside code a rule removed (``rewritten_away``: no site,
no finding). A name used only as a type (``ReferenceSite.type_use``: a base class, the class
argument of ``isinstance``/``issubclass``, an annotation, a ``typing`` alias or type argument
(``Union[tf.Tensor, ...]``, ``cast(tf.RaggedTensor, x)``), a class or tuple of classes bound to a
name read only as a type (``codemods/type_aliases``), a class only looked at:
``Layer.__dict__``, ``dir(Layer)``, ``codemods/introspection``) is counted as a site that needs
nothing (``covered``) and not reported: the anchor looks the list up for call chains only, and
the list marks ``tf.keras.layers.Layer`` unsupported, yet every Keras layer it supports
(``Dense``, ``Wrapper``, ``tf.keras.Model``) subclasses it; a site no finding names must not
keep the repository from ``ready`` (or block it: ``merge_verdict``). Every other site that is
not ready is reported unless another rule reported it (``under-analysis`` once per API per
file), so that none is left without a finding that names it. The tool's dtype restriction:
``float64``/``complex`` are not supported.

An API the list marks ``supported-after-migration`` or ``trains-after-migration`` in a ``tf2``
or ``tf-neutral`` file (no TF1 owner runs there) that no other rule reported is a miss:
``tf.distribute.MirroredStrategy``, which NPU070 owns, with NPU070's words and, while NPU070 is
off, its pack; the others (``tf.distribute.OneDeviceStrategy``,
``tf.config.set_soft_device_placement``, a ``set_memory_growth`` NPU052 did not cover) with
NPU100's owner-miss words; ``tf.compat.v1.data.Dataset`` (``import tensorflow.compat.v1 as tf``
in eager code) is NPU064's, as its ``tf.data.Dataset`` spelling is (``api_owners.eager_owner``).
A use a rule rewrote away (a GELU formula's ``tf.tanh``, NPU006) is no site: neither counted
nor reported (``written.rewritten_away``), so the first run and a rerun say the same. In ``tf2-compat`` files the TF1 rules run and own them: such a
site is judged as NPU100 judges it, with NPU100's owner table (``api_owners``, the list's
``tf.compat.v1.X`` read as the table's ``tf.X``): covered by an enabled owner that acts
elsewhere (``tf.compat.v1.ConfigProto`` through its session, NPU007; ``tf.data.Dataset`` at its
batch calls, NPU002) or by its owner's finding on the site's line or statement (a ``Session``,
NPU007), else a miss in NPU100's words (naming the opt-in while the owner is off). An API that
table owns and the TF 2.6 list marks ``unsupported`` (the TPU estimator's ``RunConfig``,
``TPUConfig``, ``InputPipelineConfig``, ``TPUEstimatorSpec``) is judged so too: the compat route
migrates it as in TF 1.x code, so a site its owner did not cover is work left (``owned``), never
a block. In any file a site another rule's finding names (NPU012's "remove TPUClusterResolver")
is that rule's, as NPU100 counts it: ``owned``, work left counted once, no block.

Horovod, which the TF 2.6 list does not name and TF Adapter 2.x supports only in compat.v1
scripts: each use in a ``tf2`` or ``tf-neutral`` file that no other rule reported (NPU070 of the
opt-in ``tf2-distributed`` pack) is reported with NPU070's instruction, and while that rule is
off the message names the pack, as NPU100 does for the ``distributed`` pack in TF 1.x code: a
file still training with Horovod is never ``ready``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Optional, Sequence

from npu_codemod.api import FileContext, Node, Rule, hookimpl
from npu_codemod.api._toolkit import (
    COMPAT_SITE,
    ESTIMATOR_MODULES,
    HOROVOD_RULES,
    HOROVOD_TF2_OPT_IN,
    HOROVOD_TF2_RULE,
    MIRRORED_TF2,
    STRATEGY_TF2,
    TF2,
    TF2_COMPAT,
    TF_NEUTRAL,
    AliasVerdict,
    ApiStatus,
    Finding,
    ReferenceSite,
    WrittenUse,
    alias_reads,
    alias_repeats,
    api_advice,
    ast_statement_spans,
    compat_owner,
    eager_owner,
    horovod_tf2_advice,
    in_graph_only_code,
    is_horovod_tf2_name,
    list_name,
    may_bind_horovod,
    owner_verdict,
    report_byteps,
    rewritten_away,
    site_references,
    support_list_tf2,
    value_alias_lines,
    written_uses,
)

from ._dtype_strings import dtype_strings
from ._migrated_advice import migrated_advice

DEPRECATED = ("deprecated in TF 2.6: replace {api} with its current TF 2.x equivalent before "
              "migrating, or the migration may fail")
DTYPE = "float64/complex dtypes are not supported on the NPU: {spelled}"
#: The tool's restriction (TF 2.6 guide, tool introduction): these dtypes do not run.
UNSUPPORTED_DTYPES = frozenset({"tensorflow.float64", "tensorflow.double", "tensorflow.complex64",
                                "tensorflow.complex128"})
#: NPU070's strategy as the TF 2.6 list names it.
MIRRORED_LISTED = list_name(MIRRORED_TF2)
#: The Estimator as TF 2.x names it, and as the compat route runs it.
ESTIMATOR_TF2, ESTIMATOR_COMPAT = "tensorflow.estimator.", "tensorflow.compat.v1.estimator."
#: The TF 2.6 list marks ``tf.device`` unsupported and suggests pinning to the CPU [L26 r3116].
DEVICE = "tf.device"
DEVICE_ADVICE = ("tf.device is not supported on Ascend: pin the ops to the CPU (tf.device(\"/cpu:0\")), "
                 "as Ascend's TF 2.6 list suggests, or remove tf.device and let the NPU place them")
#: The call after ``tf.device`` with one string naming the host CPU: ``("/cpu:0")``, ``("CPU")``,
#: ``("/device:CPU:0")``, ``("/job:localhost/replica:0/task:0/device:CPU:0")``.
_CPU_DEVICE = re.compile(r"\s*\(\s*(['\"])(?:/job:[\w-]+)?(?:/replica:\d+)?(?:/task:\d+)?/?(?:device:)?"
                         r"cpu(?::\d+)?\1\s*,?\s*\)", re.IGNORECASE)


@dataclass(frozen=True)
class Use:
    site: ReferenceSite
    api: str  # as the list spells it (tf.compat.v1 kept)
    listed: str
    status: str


class ApiSupportTf2(Rule):
    id = "NPU071"
    name = "tf2-api-support"
    pack = "tf2"
    audits_apis = True  # as NPU100: towards API readiness, not rules coverage
    file_kinds = frozenset({TF2, TF2_COMPAT, TF_NEUTRAL})
    description = ("Check every TensorFlow API a TF 2.x file uses against Ascend's TF 2.6 API "
                   "support list; report what blocks the migration.")
    guide_section = "TF2.6 API支持度"
    guide_section_en = "Ascend's TF 2.6 API support list"
    guide_url = Rule.catalog_url(id, name)
    reports = ("Each use of an API (a call, or a name used as a value) that Ascend's TF 2.6 list "
               "marks `unsupported` (replace it: `tf.py_function`, `tf.numpy_function`, `tf.einsum`, "
               "TPU APIs...) or `deprecated`, and once per file each API it marks `under-analysis` "
               "(most of `tf.compat.v1.*`; SARIF level `note`), unless another rule reported that "
               "use (NPU065, NPU052, NPU051); in a TF 2.x file, each use of an API it marks "
               "`supported-after-migration` or `trains-after-migration` that no rule reported "
               "(`tf.distribute.OneDeviceStrategy`, `tf.config.set_soft_device_placement`: the "
               "API and what to do with it in eager code, e.g. drop the one-device strategy, keep "
               "soft placement on; `tf.distribute.MirroredStrategy` with NPU070's words, "
               "naming its pack while NPU070 is off; `tf.compat.v1.data.Dataset` is NPU064's, as "
               "`tf.data.Dataset`: covered while it is on); in a `tf2-compat` file, each use of such an API "
               "that its TF1 owner in NPU100's table did not cover, in NPU100's words "
               "(`tf.compat.v1.ConfigProto` is NPU007's through its session, "
               "`tf.compat.v1.data.Dataset` NPU002's: covered while it is on; "
               "`tf.compat.v1.Session` NPU007's at its site; an owner that is off is named), "
               "and the same for each API that table owns and the TF 2.6 list marks `unsupported` "
               "(the TPU estimator's `tf.compat.v1.estimator.tpu.RunConfig`, `TPUConfig`, "
               "`InputPipelineConfig`, `TPUEstimatorSpec`: NPU012's and NPU013's), whose sites "
               "then are work left, never a block; "
               "`tf.device(...)` of a TF 2.x file with the list's suggestion (pin the ops to the "
               "CPU, or remove it), and not when it pins them to the CPU already "
               "(`tf.device(\"/cpu:0\")`, `tf.device(\"CPU\")`: counted as needing nothing); "
               "a dunder attribute of a module (`tf.__version__`) is no use; "
               "`tf.float64`/`tf.complex64`/`tf.complex128` "
               "and `dtype=\"float64\"` strings, or such a string a TensorFlow call takes "
               "positionally (`set_floatx(\"float64\")`), not those of numpy or pandas (host "
               "arrays) (the NPU does not support them); each use of "
               "Horovod (`hvd.init`, `hvd.DistributedGradientTape`...: TF Adapter 2.x supports it "
               "only in compat.v1 scripts) in a TF 2.x file that no other rule reported, with the "
               "NPU call that replaces it, naming the `tf2-distributed` pack while NPU070 is off; "
               "in a `tf2-compat` file, while the `distributed` pack (NPU021-NPU025) is off, each "
               "use of Horovod, naming that pack (TF Adapter 2.x runs Horovod in compat.v1 code); "
               "each use of BytePS (`byteps.tensorflow`, Horovod's API, which no rule migrates), "
               "with the NPU form of Horovod's in that code. "
               "A variable an assignment made an alias of an API value (`is_per_host = "
               "tf_estimator.tpu.InputPipelineConfig.PER_HOST_V2`) is one use, at the assignment, "
               "not one per read (as NPU100 counts it). "
               "Every use, called or not, of the file as the run writes it counts towards the "
               "reports' API readiness (a use a rule rewrote away, a GELU formula's `tf.tanh`, is "
               "none and is not reported: a rerun over the "
               "migrated branch counts the same); a use another rule's finding names (NPU012's "
               "\"remove TPUClusterResolver\") is that rule's: counted once, as work left, "
               "not a block; a use inside code a rule removed (an argument NPU026 drops) is "
               "none; a name used only as a type (a base class, "
               "`class L(tf.keras.layers.Layer)`, the class of `isinstance`/`issubclass`, an "
               "annotation, a `typing` alias such as `Union[tf.Tensor, tf.SparseTensor]` or "
               "`Mapping[str, tf.RaggedTensor]`, the type of `typing.cast`/`TypeVar`/`NewType`, "
               "a class or tuple of classes bound to a name the module reads only so: "
               "`NextState = tf.keras.layers.Layer`, `TYPES = (tf.Tensor, tf.Variable)` for "
               "`isinstance(x, TYPES)`) or only looked at (`tf.keras.layers.Layer.__dict__`, `.__name__`, "
               "`dir(...)`, `inspect.getmembers(...)`: a documentation generator's) counts as a site "
               "that needs nothing and is not reported, as does a use in "
               "a TF 2.x file's graph-mode or TF 1.x-only code (the `else` of `if tf.executing_eagerly():` "
               "or of `if compat.get_tf_behavior() == 2:` or `if tf.__version__ >= \"2.0.0\":`, the code "
               "after an early `return` under such a test), which the eager program never runs. In a "
               "`tf2-compat` file `tf.estimator.X` is the `tf.compat.v1.estimator.X` the compat "
               "route runs (the list marks it supported): no \"no migration path\" for an "
               "Estimator, `RunConfig`, `EstimatorSpec` or `train_and_evaluate`.")
    example = """
        import tensorflow as tf


        @tf.function
        def step(x):
            y = tf.numpy_function(lambda v: v * 2, [x], tf.float32)
            return tf.cast(y, tf.float64)
    """
    modules = ESTIMATOR_MODULES
    _scope = "site"
    _reads_tree = False  # its uses come from ast (``site_references``), as NPU100's
    after = ("*",)  # reads every other rule's findings

    def start(self, tree: Node, ctx: FileContext) -> None:
        ctx.analysis(api_uses)  # the file as written, before other rules edit it

    def finish(self, tree: Node, ctx: FileContext) -> None:
        lines = _lines(ctx.findings, self.id)
        seen: set[str] = set()
        repeats = _repeats(ctx, lines)
        uses = ctx.analysis(api_uses)
        written = written_uses(ctx, [ctx.names("tensorflow")], [(use.site, use) for use in uses], repeats)
        for use, covered, owned in _counted(ctx, lines, written):
            ctx.count_api(use.listed or use.api, use.status, covered or use.site.type_use, owned)
        removed = rewritten_away(ctx, (use.site for use in uses), written,
                                 (one.was.site for one in written if one.was is not None))
        migrated = ctx.file_kind in (TF2, TF_NEUTRAL)  # no TF1 owner runs: each miss is NPU071's
        for use in uses:
            site = use.site
            if (site.line, site.column) in repeats or (site.line, site.column) in removed:
                continue  # a read of a name bound to the API: the binding is the site; or a
                # use a rewrite removed: no site
            if _needs_nothing(ctx, use) or _on_site(site, site.line, site.line + 1, lines):
                continue  # counted as needing nothing; another rule's finding names the site
            if _compat_owned(ctx, use):  # the TF1 rules own it: NPU100's verdict
                message: Optional[str] = _owned(ctx, use, site.line, site.line + 1, lines).message
                level = ""
            elif _eager_owned(ctx, use):  # a TF 2.x rule owns its compat.v1 spelling
                message, level = _owned(ctx, use, site.line, site.line + 1, lines).message, ""
            else:
                message, level = _verdict(use, seen, ctx.enabled_rules)
            if message:
                ctx.report_at(site.line, site.column, "unmigrated", message, level)
            elif site.name in UNSUPPORTED_DTYPES:
                ctx.report_at(site.line, site.column, "unmigrated", DTYPE.format(spelled=site.spelled))
        _dtype_strings(ctx)
        if migrated:
            _report_horovod(ctx, lines)
        elif ctx.file_kind == TF2_COMPAT and not ctx.enabled_rules.intersection(HOROVOD_RULES):
            _report_compat_horovod(ctx, lines)
        report_byteps(ctx, tf2=migrated)  # no rule migrates it: the compat route's words in compat code


def _report_horovod(ctx: FileContext, lines: dict[int, list[Finding]]) -> None:
    """Each use of Horovod for TensorFlow no other rule reported (NPU070 reports those it
    knows while its pack is on): TF 2.x code cannot keep it, so a person replaces it with the
    NPU call NPU070 names; the message names NPU070's pack while it is off."""
    if not may_bind_horovod(ctx.original) and ctx.original.isascii():
        return  # no binding of Horovod (``ast`` reads non-ASCII names NFKC-normalized)
    off = HOROVOD_TF2_RULE not in ctx.enabled_rules
    for site in site_references(ctx, [ctx.names("horovod")]):
        if is_horovod_tf2_name(site.name) and not _on_site(site, site.line, site.line + 1, lines):
            message = horovod_tf2_advice(site.name, site.spelled)
            ctx.report_at(site.line, site.column, "unmigrated",
                          f"{message}; {HOROVOD_TF2_OPT_IN}" if off else message)


def _report_compat_horovod(ctx: FileContext, lines: dict[int, list[Finding]]) -> None:
    """Each use of Horovod in a ``tf2-compat`` file while the ``distributed`` pack is off: TF
    Adapter 2.x runs Horovod there and the pack's rules port it (as NPU100 says in TF 1.x code,
    which it does not read here), so a file still using it is never ``ready`` unported."""
    if not may_bind_horovod(ctx.original) and ctx.original.isascii():
        return
    for site in site_references(ctx, [ctx.names("horovod")]):
        if is_horovod_tf2_name(site.name) and not _on_site(site, site.line, site.line + 1, lines):
            ctx.report_at(site.line, site.column, "unmigrated", COMPAT_SITE.format(spelled=site.spelled))


def api_uses(ctx: FileContext) -> tuple[Use, ...]:
    """Every use of a TensorFlow API in the file as written, in source order, with its status
    in the TF 2.6 list (``compat.v1`` spelled out, as the list names it)."""
    sites = site_references(ctx, [ctx.names("tensorflow")])
    return tuple(use for use in (_use(ctx, site) for site in sites) if use is not None)


def _repeats(ctx: FileContext, lines: dict[int, list[Finding]]) -> frozenset[tuple[int, int]]:
    """The uses that are no site of their own, as NPU100 leaves them out
    (``codemods/value_aliases``): a read of a name an assignment bound to an API value
    (``is_per_host = tf_estimator.tpu.InputPipelineConfig.PER_HOST_V2``, then
    ``per_host_input_for_training=is_per_host``) whose finding would be none or the binding's:
    the value was used once, at the binding; or a binding whose every read a rule covered."""
    uses = ctx.analysis(api_uses)
    reads = alias_reads((use.site for use in uses), ctx.analysis(value_alias_lines)) if uses else {}
    if not reads:
        return frozenset()
    return alias_repeats({(use.site.line, use.site.column): _alias_verdict(ctx, use, lines)
                          for use in uses}, reads)


def _alias_verdict(ctx: FileContext, use: Use, lines: dict[int, list[Finding]]) -> AliasVerdict:
    """What :meth:`ApiSupportTf2.finish` says of ``use`` as written (an ``under-analysis`` API
    as at its first use in the file), and whether a rule covers it."""
    site = use.site
    if _needs_nothing(ctx, use):
        return AliasVerdict("", True)
    found = _on_site(site, site.line, site.line + 1, lines)
    if found:
        return AliasVerdict("", any(f.status == "migrated" for f in found))
    if _compat_owned(ctx, use):
        owned = _owned(ctx, use, site.line, site.line + 1, lines)
        return AliasVerdict(owned.message, owned.covered)
    message = _verdict(use, set(), ctx.enabled_rules)[0] or \
        (DTYPE.format(spelled=site.spelled) if site.name in UNSUPPORTED_DTYPES else "")
    return AliasVerdict(message, False)


def _counted(ctx: FileContext, lines: dict[int, list[Finding]],
             written_api: list[WrittenUse[Use]]) -> list[tuple[Use, bool, bool]]:
    """The API uses of the file as the run writes it (``written_uses``: a rerun over the
    migrated branch counts the same), each with whether a ``migrated`` finding covers it (a
    use as the file had it on its own site, a use a rule wrote on the lines it replaced) and
    whether, not covered, it is owned: another rule's finding on it says how to migrate it
    (NPU012's "remove TPUClusterResolver"), as NPU100 counts it: work left, no block; the
    ``repeats`` (:func:`_repeats`) are no uses (``written_api``: ``written_uses`` without them)."""
    counted = []
    for written in written_api:
        use = written.was or _use(ctx, written.site)
        if use is None:
            continue
        if written.was is not None and _graph_only(ctx, use.site):
            counted.append((use, True, False))
            continue
        first, end = (use.site.line, use.site.line + 1) if written.was else written.replaced
        if _compat_owned(ctx, use) or _eager_owned(ctx, use):
            judged = _owned(ctx, use, first, end, lines)
            counted.append((use, judged.covered, judged.owned))
            continue
        found = _on_site(use.site, first, end, lines)
        covered = any(f.status == "migrated" for f in found) or (written.was is not None and _on_cpu(ctx, use))
        counted.append((use, covered, bool(found) and not covered))
    return counted


def _needs_nothing(ctx: FileContext, use: Use) -> bool:
    """Is ``use`` (as written) counted as needing nothing and left unreported: a name used only
    as a type, one in code the eager program never runs (:func:`_graph_only`), a device pinned
    to the CPU (:func:`_on_cpu`)?"""
    return use.site.type_use or _graph_only(ctx, use.site) or _on_cpu(ctx, use)


def _on_cpu(ctx: FileContext, use: Use) -> bool:
    """Is ``use`` (as written) a ``tf.device(...)`` of a TF 2.x file that pins its ops to the
    host CPU, as the TF 2.6 list suggests for ``tf.device`` [L26 r3116] (tensorflow/similarity's
    augmentations, ``with tf.device("/cpu:0"):``)? In a ``tf2-compat`` file the TF1 rules own it."""
    site = use.site
    if use.listed != DEVICE or not site.called or site.end_column == site.column \
            or ctx.file_kind not in (TF2, TF_NEUTRAL):
        return False
    lines = ctx.original.split("\n")  # as ``ast`` counts them (``splitlines`` also splits at \f)
    return site.line <= len(lines) and _CPU_DEVICE.match(lines[site.line - 1], site.end_column) is not None


def _graph_only(ctx: FileContext, site: ReferenceSite) -> bool:
    """Is ``site`` (as written) in graph-mode or TF 1.x-only code of a TF 2.x file: the ``else``
    of ``if tf.executing_eagerly():`` (or the code after its early ``return``), of ``if
    compat.get_tf_behavior() == 2:``, which the eager program never runs (Model Maker's
    ``data_util.py``: ``with tf.compat.v1.Session()`` there)? Such a use
    needs nothing: it is counted so and not reported (in a ``tf2-compat`` file the whole program
    runs in graph mode: the TF1 rules own it)."""
    return ctx.file_kind in (TF2, TF_NEUTRAL) and in_graph_only_code(ctx, site.line, site.column)


@dataclass(frozen=True)
class Owned:
    """NPU100's verdict on a use the TF1 rules own (``_owned``)."""

    covered: bool  # its owner (or a ``migrated`` finding on it) takes care of it
    message: str  # the miss to report, "" for none
    owned: bool = False  # an API the list marks unsupported: its owner's finding, or the miss, says how


def _compat_owned(ctx: FileContext, use: Use) -> bool:
    """Whether ``use`` is one the TF1 rules own, in a ``tf2-compat`` file (they run there;
    in ``tf2`` and ``tf-neutral`` files each miss is NPU071's): an API Ascend migrates, or one
    the TF 2.6 list marks otherwise that NPU100's table gives an owner (the TPU estimator's
    ``tf.compat.v1.estimator.tpu.RunConfig``, ``TPUConfig``, ``InputPipelineConfig``,
    ``TPUEstimatorSpec``: unsupported in the list; NPU012 and NPU013 migrate or report them
    as they do in TF 1.x code)."""
    if ctx.file_kind != TF2_COMPAT or use.status in ApiStatus.READY:
        return False
    return use.status in ApiStatus.MIGRATED or compat_owner(use.listed) is not None


def _eager_owned(ctx: FileContext, use: Use) -> bool:
    """Whether ``use``, in a ``tf2`` or ``tf-neutral`` file, is a ``tf.compat.v1`` spelling of an
    API a TF 2.x rule migrates (``api_owners.eager_owner``: ``tf.compat.v1.data.Dataset``, the
    ``tf.data.Dataset`` of eager code, whose batches NPU064 migrates): judged by that owner as
    :func:`_owned` judges a TF1 owner's, so that the spelling of the import decides nothing."""
    return ctx.file_kind in (TF2, TF_NEUTRAL) and use.status in ApiStatus.MIGRATED \
        and eager_owner(use.listed) is not None


def _owned(ctx: FileContext, use: Use, first: int, end: int,
           lines: dict[int, list[Finding]]) -> Owned:
    """NPU100's verdict on a use the TF1 rules own (``_compat_owned``), by its owner in
    NPU100's table, given the findings on lines ``first`` to ``end`` (a written use: the lines
    it replaced) and on the rest of the statement that spans them (NPU007 reports ``sess =
    tf.compat.v1.Session(`` at its first line). An API the table has no owner for
    (``tf.distribute.OneDeviceStrategy``) is covered by a ``migrated`` finding on its own site,
    else a miss in NPU100's owner-miss words.

    An API the table owns that the TF 2.6 list does not say Ascend migrates (the TPU
    estimator's, ``unsupported``) is judged as NPU100 judges its TF 1.x twin, which the TF 1.15
    list says Ascend migrates: the compat route is its migration path, so a site its owner did
    not cover is ``owned`` (its owner's finding, or the miss NPU071 reports, says how to migrate
    it): work left, counted once, never a block (spec rules-beyond-sess-run.md, NPU100: "at
    most one finding per site"; rules-tf2.md, NPU071: "in `tf2-compat` files the TF1 owners
    listed in NPU100")."""
    owner = compat_owner(use.listed) if ctx.file_kind == TF2_COMPAT else eager_owner(use.listed)
    if owner is None:
        found = _on_site(use.site, first, end, lines)
        return Owned(any(f.status == "migrated" for f in found), "" if found else api_advice(use.status, use.api))
    spans, last = ctx.analysis(statement_spans), max(end - 1, first)
    start, stop = spans.get(first, (first, first))[0], spans.get(last, (last, last))[1]
    on_statement = [f for number in range(start, stop + 1) for f in lines.get(number, ())]
    twin = use.status if use.status in ApiStatus.MIGRATED else ApiStatus.AFTER_MIGRATION
    covered, miss = owner_verdict(owner, use.api, twin, use.site, on_statement, ctx.enabled_rules)
    return Owned(covered, miss, not covered and use.status not in ApiStatus.MIGRATED)


def statement_spans(ctx: FileContext) -> dict[int, tuple[int, int]]:
    """Line -> the first and last line of the simple statement over several lines that spans
    it (none for a file ``ast`` cannot read: each site is then its own line)."""
    spans: dict[int, tuple[int, int]] = {}
    for first, last in ast_statement_spans(ctx) or ():
        for number in range(first, last + 1):
            spans.setdefault(number, (first, last))
    return spans


def _on_site(site: ReferenceSite, first: int, end: int, lines: dict[int, list[Finding]]) -> list[Finding]:
    """The other rules' findings on lines ``first`` to ``end`` (at least ``first``) within
    the columns of ``site``."""
    return [f for number in range(first, max(end, first + 1)) for f in lines.get(number, ())
            if site.column <= f.column <= site.end_column]


def _use(ctx: FileContext, site: ReferenceSite) -> Optional[Use]:
    """The use at ``site`` with its status in the TF 2.6 list (None: no listed API, or a dunder
    attribute of a module: ``tf.__version__.startswith("2")`` looks at the version string, it
    uses no API; with ``tf`` also bound to ``tensorflow.compat.v1`` it was "test
    tf.compat.v1.__version__.startswith on the NPU")."""
    qualified = _v2_folded(ctx.names("tensorflow").resolve(site.spelled) or site.name)
    if any(part.startswith("__") and part.endswith("__") for part in qualified.split(".")):
        return None
    api = list_name(_v1_estimator(qualified) if ctx.file_kind == TF2_COMPAT else qualified)
    if api is None:
        return None
    entry, status = support_list_tf2().lookup(api)
    return Use(site, api, entry, status)


def _v2_folded(qualified: str) -> str:
    """``tensorflow.compat.v2.X`` is ``tensorflow.X`` on TF 2.x (the TF 2.6 list names no
    ``compat.v2``; Google's TF 2.x code imports ``tensorflow.compat.v2 as tf``)."""
    head, v2, rest = qualified.partition("tensorflow.compat.v2.")
    return "tensorflow." + rest if v2 and not head else qualified


def _v1_estimator(qualified: str) -> str:
    """``tensorflow.estimator.X`` in a ``tf2-compat`` file is the graph-mode Estimator the
    compat route runs (NPU062's header, the estimator pack: ``npu_run_config_init``), which the
    TF 2.6 list names ``tf.compat.v1.estimator.X`` (supported); its "no migration path" for
    ``tf.estimator.*`` is for eager TF 2.x code (``tf_versions.ESTIMATOR_GRAPH_PREFIX``)."""
    head, estimator, rest = qualified.partition(ESTIMATOR_TF2)
    return ESTIMATOR_COMPAT + rest if estimator and not head else qualified


def _verdict(use: Use, seen: set[str], enabled: frozenset[str]) -> tuple[Optional[str], str]:
    """The message and SARIF level for one use no other rule reported (None: nothing to
    report). A use of an API Ascend migrates (``supported-after-migration``,
    ``trains-after-migration``) that the TF1 rules do not own (``_compat_owned``) is a miss:
    NPU070's words for MirroredStrategy, naming its pack while it is off; for the others
    (``tf.distribute.OneDeviceStrategy``, ``tf.config.set_soft_device_placement``, an owner's
    site it did not cover) what to do with that API in eager code (``_migrated_advice``), else
    NPU100's owner-miss words: a site no finding names would keep the repository short of
    ``ready`` with nothing to say where."""
    if use.status in ApiStatus.MIGRATED:
        if use.listed == MIRRORED_LISTED:
            off = HOROVOD_TF2_RULE not in enabled
            return (f"{STRATEGY_TF2}; {HOROVOD_TF2_OPT_IN}" if off else STRATEGY_TF2), ""
        return migrated_advice(use.listed, use.api) or api_advice(use.status, use.api), ""
    if use.status == ApiStatus.UNSUPPORTED:
        return DEVICE_ADVICE if use.listed == DEVICE else api_advice(use.status, use.api), ""
    if use.status == ApiStatus.DEPRECATED:
        return DEPRECATED.format(api=use.api), ""
    if use.status == ApiStatus.UNDER_ANALYSIS and use.listed not in seen:
        seen.add(use.listed)
        return api_advice(use.status, use.api), "note"
    return None, ""


def _dtype_strings(ctx: FileContext) -> None:
    for line, column, spelled in dtype_strings(ctx):
        ctx.report_at(line, column, "unmigrated", DTYPE.format(spelled=spelled))


def _lines(findings: Sequence[Finding], own_id: str) -> dict[int, list[Finding]]:
    lines: dict[int, list[Finding]] = defaultdict(list)
    for finding in findings:
        if finding.rule_id != own_id:
            lines[finding.line].append(finding)
    return lines


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [ApiSupportTf2()]
