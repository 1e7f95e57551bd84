"""NPU004 nn-dropout: ``tf.nn.dropout`` becomes the CANN implementation ``npu_ops.dropout``."""

from __future__ import annotations

from typing import Optional

from npu_codemod.api import (
    Argument,
    Base,
    Capture,
    FileContext,
    Node,
    Reference,
    Rule,
    arguments,
    find_argument,
    hookimpl,
    is_none,
    parse_expression,
    rename_argument,
    replace_callee,
    symbols,
)
from npu_codemod.api._toolkit import (
    NPU_INIT_IMPORT,
    TF1,
    child_index,
    is_call_trailer,
    needs_parentheses,
    prefix_name,
    remove_argument,
)

from ._bound_attributes import bound_attribute_marks
from ._spreads import keywords_of, length_of, spreads

DROPOUT = "tensorflow.nn.dropout"
#: The names it acts on: ``x.dropout`` and ``x.dropout_v2`` (``nn_ops.dropout_v2``: the
#: internal module's name of the v2 API), when they resolve to :data:`DROPOUT`.
NAMES = ("dropout", "dropout_v2")
#: Its own output, reported however the file binds ``npu_ops``.
NPU_DROPOUT = "npu_ops.dropout"
#: ``@dropout`` for ``x.dropout`` where the file binds ``x`` (and ``npu_ops.dropout``): the
#: ``_ast_sites`` of NPU004 and NPU005, one test for both (``dropout`` spells many a
#: hyperparameter; the other names, ``dropout_v2`` and NPU005's ``Dropout``..., are rare words).
DROPOUT_MARKS = bound_attribute_marks(NAMES[:1], frozenset({NPU_DROPOUT}))
#: Keywords tf.nn.dropout and npu_ops.dropout take alike (besides noise_shape, reported).
_SAFE_KEYWORDS = frozenset({"x", "keep_prob", "seed", "name"})
ACCURACY = "check the model's accuracy: the guide notes the NPU dropout may affect it"
BY_HAND = "then replace tf.nn.dropout with npu_ops.dropout by hand"
NOISE_SHAPE = f"noise_shape= is given: check that npu_ops.dropout supports it, {BY_HAND}"
V2_RATE = (f"tf.compat.v2.nn.dropout takes rate as its 2nd argument: write keep_prob=1 - rate, "
           f"{BY_HAND}")
SPREAD = ("{spread} may hold noise_shape= (or rate=, which npu_ops.dropout takes as "
          f"keep_prob=1 - rate), and the tool cannot see what it holds: check it, {BY_HAND}")
SPREAD_HOLDS = {
    "noise_shape": f"{{spread}} holds noise_shape= (keys: {{keys}}): check that npu_ops.dropout "
                   f"supports it, {BY_HAND}",
    "rate": f"{{spread}} holds rate= (keys: {{keys}}), which npu_ops.dropout takes as keep_prob=1 - "
            f"rate: write that, {BY_HAND}",
}
BOTH = f"keep_prob= and rate= are both given (TensorFlow accepts one of them): keep one, {BY_HAND}"
NOT_CALLED = (f"tf.nn.dropout is used as a value, not called: make sure the callers pass "
              f"keep_prob (not rate), {BY_HAND}")


class NnDropout(Rule):
    id = "NPU004"
    name = "nn-dropout"
    pack = "sess-run"
    file_kinds = frozenset({TF1})  # TF 2.6 supports dropout as it is
    description = "Replace tf.nn.dropout with npu_ops.dropout (rate= becomes keep_prob=1 - rate)."
    guide_section = "模型搭建/计算Loss/梯度更新: tf.nn.dropout"
    guide_section_en = "Model building, loss computation and gradient update: tf.nn.dropout"
    guide_url = Rule.catalog_url(id, name)
    rewrites = ("`tf.nn.dropout(x, keep_prob, ...)` in any TensorFlow spelling "
                "(`tf.compat.v1.nn.dropout`, `from tensorflow.nn import dropout`, internal "
                "modules) becomes the CANN implementation `npu_ops.dropout(x, keep_prob, ...)`: "
                "the arguments keep their order and spelling, and `rate=r` becomes "
                "`keep_prob=1 - r` (into the place of a `keep_prob` given as `None`). The guide notes the NPU dropout may affect accuracy; each "
                "rewritten site says so.")
    reports = ("A call with `noise_shape=` (check that the NPU supports it first) or with "
               "`*args`/`**kwargs` that may hold it (unless the function provably never puts it "
               "there), "
               "`tf.compat.v2.nn.dropout` with the rate as its second argument, `keep_prob` and "
               "`rate` both given (TensorFlow raises), and "
               "`tf.nn.dropout` used as a value instead of called.")
    example = """
        import tensorflow as tf


        def classifier(features, dropout_rate):
            hidden = tf.layers.dense(features, 256, activation=tf.nn.relu)
            hidden = tf.nn.dropout(hidden, rate=dropout_rate)
            logits = tf.layers.dense(hidden, 10)
            return tf.nn.dropout(logits, keep_prob=0.9, noise_shape=[1, 10])
    """
    _scope = "site"
    # A site is an attribute of a name the file binds (``tf.nn.dropout``; ``npu_ops.dropout``
    # always), or a call of a name the file binds to it (``d`` after ``from tensorflow.nn
    # import dropout as d``: a site name through the word's attribute name); or it spells
    # ``dropout_v2``.
    _site_names = ("@dropout", *NAMES[1:])
    _ast_sites = DROPOUT_MARKS
    _tokens = ("dropout",)
    _bare_calls_of_tf_names = True  # visit() qualifies the name with ctx.tf, or ignores it
    # ``x.dropout`` anywhere (``nn_ops.dropout_v2``: the internal module's name of the v2
    # API), or a call of a bare name (``from tensorflow.nn import dropout``).
    pattern = """(
        trailer< '.' ('dropout' | 'dropout_v2') >
      | power< NAME trailer< '(' [any] ')' > any* >
    )"""

    def visit(self, node: Base, capture: Capture, ctx: FileContext) -> None:
        power, end = _dropout_site(node)
        if power is None:
            return
        spelled = prefix_name(power, end)
        if spelled == NPU_DROPOUT:
            ctx.report(power, "migrated", f"uses npu_ops.dropout; {ACCURACY}")
            return
        if ctx.tf.qualify(spelled) != DROPOUT:
            return
        call = power.children[end] if end < len(power.children) else None
        if not is_call_trailer(call):
            ctx.report(power, "unmigrated", NOT_CALLED)
        elif _has_noise_shape(call):
            ctx.report(power, "unmigrated", NOISE_SHAPE)
        elif spread := _unknown_spread(call):
            ctx.report(power, "unmigrated", _spread_message(spread))
        elif _v2_positional_rate(ctx.tf.resolve(spelled) or "", call):
            ctx.report(power, "unmigrated", V2_RATE)
        elif _keep_prob_beside_rate(call):
            ctx.report(power, "unmigrated", BOTH)
        else:
            # Deferred: editing ``power.children`` now would make the traversal skip a
            # dropout nested in this call's arguments.
            ctx.defer(lambda: _rewrite(power, end, call))
            ctx.add_import(NPU_INIT_IMPORT)  # binds npu_ops
            ctx.report(power, "migrated", f"replaced {spelled} with npu_ops.dropout; {ACCURACY}")


def _rewrite(power: Node, end: int, call: Node) -> None:
    _rename_rate(call)
    replace_callee(Reference(power, end, DROPOUT, call), "npu_ops.dropout")


def _has_noise_shape(call: Node) -> bool:
    """``noise_shape`` given with a value other than its default ``None``."""
    given = find_argument(call, "noise_shape", 2)
    return given is not None and not is_none(given.value)


def _spread_message(spread: Argument) -> str:
    """What to do about a ``*args``/``**kwargs`` that may hold (or holds) ``noise_shape``."""
    keys = keywords_of(spread) if spread.star == "**" else None
    held = sorted(keys & {"noise_shape", "rate"}) if keys else []
    text = str(spread.node).strip()
    if not held:
        return SPREAD.format(spread=text)
    return SPREAD_HOLDS[held[0]].format(spread=text, keys=", ".join(sorted(keys or ())))


def _unknown_spread(call: Node) -> Optional[Argument]:
    """The first ``*args``/``**kwargs`` of the call that may hold ``noise_shape`` or ``rate``,
    or None."""
    positional = sum(1 for argument in arguments(call) if argument.keyword is None and not argument.star)
    for argument in spreads(call):
        if argument.star == "**":
            keys = keywords_of(argument)
            safe = keys is not None and keys <= _SAFE_KEYWORDS
        else:
            length = length_of(argument)
            safe = length is not None and positional + length <= 2  # the 3rd is noise_shape
            positional += length or 0
        if not safe:
            return argument
    return None


def _dropout_site(node: Base) -> tuple[Optional[Node], int]:
    """(power node, index of the trailer after the name ending in dropout), or (None, 0)."""
    if node.type == symbols.power:  # dropout(...) through a from-import
        return node, 1
    power = node.parent
    if power is None or power.type != symbols.power:
        return None, 0
    return power, child_index(node) + 1


def _v2_positional_rate(resolved: str, call: Node) -> bool:
    """``tf.compat.v2.nn.dropout(x, 0.2)``: the 2nd positional is ``rate``, not keep_prob."""
    second = find_argument(call, "rate", 1)
    is_v2 = resolved.startswith("tensorflow.compat.v2.")
    return is_v2 and second is not None and second.keyword is None


def _keep_prob_beside_rate(call: Node) -> bool:
    """``keep_prob`` given, and not as None, next to ``rate=``: TensorFlow raises."""
    keep_prob = find_argument(call, "keep_prob", 1)
    return find_argument(call, "rate") is not None and keep_prob is not None and not is_none(keep_prob.value)


def _rename_rate(call: Node) -> None:
    """``rate=r`` -> ``keep_prob=1 - r``, parenthesising ``r`` when needed; a ``keep_prob``
    given as None (``dropout(x, None, rate=r)``) takes that value in its place."""
    rate = find_argument(call, "rate")
    if rate is None:
        return
    value = str(rate.value).strip()
    if needs_parentheses(rate.value):
        value = f"({value})"
    keep_prob = find_argument(call, "keep_prob", 1)
    if keep_prob is not None:  # None (else reported): it keeps its place, rate goes
        taken = parse_expression(f"1 - {value}")
        taken.prefix = keep_prob.value.prefix
        keep_prob.value.replace(taken)
        remove_argument(call, rate)
        return
    rename_argument(rate, "keep_prob")
    rate.value.replace(parse_expression(f"1 - {value}"))


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [NnDropout()]
