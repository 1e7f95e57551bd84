"""NPU002 dataset-batch-drop-remainder: training batches need static shapes on the NPU.

An inference/eval pipeline (``get_infer_iterator``, ``eval_dataset``, ``decode_from_file``,
the ``else:`` of ``if is_training:``, an ``input_fn`` passed to ``estimator.predict``, one whose
inputs are counted with ``len(...)``, one made with ``ModeKeys.PREDICT``, one that repeats only
under ``if is_training:``, one built by a function that another file uses for prediction or
evaluation, also through a variable, ``test_input = make_input_fn(...)``:
:mod:`._pipeline_uses`; one that nothing shows to feed training and that repeats
``repeat(num_epochs)`` with ``num_epochs=1`` by default, as a library's factory for callers
outside the repository does) that does not repeat for ever before it is batched (a finite
``repeat(count)`` still ends in a partial batch) would lose its
last examples to ``drop_remainder=True``: such a batch is reported, never rewritten; it needs
the final batch padded to batch_size (NPU003). So is a batch whose dataset's structure builds
an iterator that another dataset also initialises (:mod:`._shared_iterators`), and one whose
iterator's outputs a feed_dict gives other data (:mod:`._fed_outputs`).
"""

from __future__ import annotations

from typing import Optional, Sequence

from npu_codemod.api import (
    Base,
    Capture,
    FileContext,
    Leaf,
    Node,
    Rule,
    add_keyword,
    arguments,
    find_argument,
    has_unpacking,
    hookimpl,
    is_true,
    symbols,
)
from npu_codemod.api._toolkit import (
    attribute_name,
    child_index,
    is_call_trailer,
    is_false,
    prefix_name,
    unparenthesised,
)

from ._datasets import inference_pipeline, is_dataset
from ._drained_batches import drained_batches
from ._fed_outputs import fed_outputs
from ._pipeline_uses import module_facts, pipeline_use_facts, remote_uses
from ._shared_iterators import shared_iterator
from ._unbatched import unbatched

#: method -> 0-based position of ``drop_remainder`` when given positionally.
DROP_REMAINDER_POSITION = {"batch": 1, "padded_batch": 3, "map_and_batch": 3}
#: ``tf.train`` queue batching function -> 0-based position of ``allow_smaller_final_batch``.
QUEUE_API = {"batch": 7, "shuffle_batch": 8, "batch_join": 6, "shuffle_batch_join": 7,
             "maybe_batch": 8, "maybe_shuffle_batch": 9}
METHODS = frozenset({*DROP_REMAINDER_POSITION, *QUEUE_API})
MAP_AND_BATCH_OWNERS = ("tensorflow.contrib.data", "tensorflow.data.experimental")
MAP_AND_BATCH = frozenset(f"{owner}.map_and_batch" for owner in MAP_AND_BATCH_OWNERS)
_METHOD_NAMES = " | ".join(f"'{name}'" for name in sorted(METHODS))

ADD = "training input must use drop_remainder=True"
KEPT = (f"{ADD}; for prediction pad the last batch instead, see NPU003")
UNKNOWN_RECEIVER = "if this is a tf.data.Dataset, add drop_remainder=True"
UNPACKED = f"{ADD}: pass it explicitly next to the unpacked arguments"
ADDED = "added drop_remainder=True (static batch shape for the NPU)"
INFERENCE = ("inference/eval pipeline ({why}): do not drop the remainder; pad the final batch to "
             "batch_size with dummy examples and drop their outputs (NPU003)")
DRAINED = ("{why}; keep the last batch: this is no training input, and if the NPU rejects its "
           "smaller shape, pad it to batch_size and drop the padding's results (NPU003)")
UNBATCHED = ("batched only to be unbatched again ({how}): the model never sees this batch, and "
             "drop_remainder=True would only lose examples")
SMALLER = ("the queue API has no drop_remainder: set allow_smaller_final_batch=False so every "
           "batch has a static shape")


class DropRemainder(Rule):
    id = "NPU002"
    name = "dataset-batch-drop-remainder"
    pack = "sess-run"
    description = "Add drop_remainder=True to tf.data batch/padded_batch/map_and_batch calls."
    guide_section = "数据预处理"
    guide_section_en = "Data preprocessing"
    guide_url = Rule.catalog_url(id, name)
    rewrites = ("`batch(n)`, `padded_batch(...)` and `map_and_batch(...)` (`tf.contrib.data`, "
                "`tf.data.experimental`) of a `tf.data` dataset get `drop_remainder=True`: the "
                "NPU compiles graphs with static shapes, so training input drops the last partial "
                "batch. The receiver must be shown to be a dataset within the file (made by "
                "`tf.data` constructors or dataset methods, or named like `dataset`, `ds`, "
                "`*_dataset`). A call that already passes `True` is left as it is, and so is a batch the "
                "pipeline splits into examples again (`.unbatch()`, `flat_map` of a function "
                "returning `Dataset.from_tensor_slices(...)`: packing, vectorised preprocessing), "
                "which the model never sees and `drop_remainder` would only shorten.")
    reports = ("Inference pipelines (built in a function named or used for predict, decode, eval, "
               "export or serving, made for a PREDICT/EVAL mode, shared with training (`repeat()` "
               "only when training, or only under a repeat flag: `if self.params['repeat']:`), or whose inputs are counted against its results), unless it "
               "repeats for ever before the batch (`repeat()`; a finite `repeat(count)` does "
               "not count): pad the "
               "last batch instead, see NPU003; so is one that nothing in the repository shows "
               "to feed training or evaluation and that repeats `repeat(num_epochs)` by a "
               "parameter defaulting to 1 (a library's `input_fn` factory: one pass, as "
               "evaluation reads); a dataset whose structure (`output_types`, "
               "`output_shapes`, `element_spec`) builds an iterator that another dataset also "
               "initialises (`Iterator.from_structure(...)` with `make_initializer(test)`, a "
               "feedable `from_string_handle`), also when built in another module from what a "
               "function returns or from the attribute a class keeps it in (`tr.data` of "
               "`tr = Gen(...)`, initialised with `te.data` too): its static batch dimension would reject the other dataset's "
               "last batch; a dataset whose iterator's outputs (`x, y = it.get_next()`) are fed "
               "other data (`sess.run(loss, {x: x_test})`): the static batch dimension would "
               "reject the fed array; "
               "a dataset whose batches the code reads back until the data ends (`while True:` "
               "`batches.append(sess.run(get_next))` until `OutOfRangeError`, with no training "
               "step or feed: a dataset collected, counted or exported), which would lose its "
               "last elements; "
               "`drop_remainder` given as anything but `True` (kept: prediction input pads the "
               "last batch instead, see NPU003); a one-argument `.batch(...)` whose receiver is "
               "not shown to be a dataset (a replay memory's `batch(32)`); arguments unpacked "
               "with `*`/`**`; the queue API (`tf.train.batch`, `tf.train.shuffle_batch`) with "
               "`allow_smaller_final_batch=True`.")
    example = """
        import tensorflow as tf


        def train_input_fn(files, batch_size):
            dataset = tf.data.TFRecordDataset(files).map(parse_example)
            dataset = dataset.shuffle(10000).repeat().batch(batch_size)
            return dataset.prefetch(1)


        def replay_batch(memory):
            return memory.batch(32)
    """
    _scope = "linked"
    _site_names = (*sorted(f".{name}" for name in METHODS | {"map_and_batch"}), "map_and_batch")
    _tokens = ("batch",)
    _bare_calls_of_tf_names = True  # visit() qualifies the name with ctx.tf, or ignores it
    # ``x.method(...)`` (only the batching methods: every attribute access of a file would
    # otherwise be matched), or a call of a bare name (``map_and_batch`` imported, maybe renamed).
    pattern = f"""(
        trailer< '.' method=({_METHOD_NAMES}) >
      | power< method=NAME trailer< '(' [any] ')' > any* >
    )"""

    def visit(self, node: Base, capture: Capture, ctx: FileContext) -> None:
        method = capture["method"]
        if node.type == symbols.power:
            if ctx.tf.qualify(method.value) in MAP_AND_BATCH:
                self._check(node.children[1], method, "map_and_batch", ctx)
            return
        method = method[0] if isinstance(method, list) else method
        if is_call_trailer(node.next_sibling):
            self._visit_method_call(node, method, ctx)

    def _visit_method_call(self, node: Node, method: Leaf, ctx: FileContext) -> None:
        """``<receiver>.<method>(...)``: what the receiver is decides what to do."""
        power, call = node.parent, node.next_sibling
        index = child_index(node)
        receiver = ctx.tf.qualify(prefix_name(power, index))
        name = method.value
        if receiver == "tensorflow.train" and name in QUEUE_API:
            self._check_queue(call, method, QUEUE_API[name], ctx)
        elif name == "map_and_batch":
            if receiver in MAP_AND_BATCH_OWNERS:
                self._check(call, method, name, ctx)
        elif name in DROP_REMAINDER_POSITION:
            if is_dataset(power.children[:index], ctx):
                self._check(call, method, name, ctx, power.children[:index])
            elif receiver is None and _may_be_dataset_batch(name, call):
                why = inference_pipeline(power.children[:index], method, ctx, remote_uses(ctx))
                message = f"if this is a tf.data.Dataset: {INFERENCE.format(why=why)}" if why \
                    else UNKNOWN_RECEIVER
                ctx.report(method, "unmigrated", message)

    def _check(self, call: Node, method: Leaf, name: str, ctx: FileContext,
               receiver: Sequence[Base] = ()) -> None:
        """A dataset batching call: add drop_remainder=True, or report what is there.

        ``receiver`` is the dataset batched (power children); for ``map_and_batch`` it is
        the one whose ``.apply(...)`` gets the call, if any.
        """
        given = find_argument(call, "drop_remainder", DROP_REMAINDER_POSITION[name])
        if given is not None and is_true(unparenthesised(given.value)):
            ctx.report(method, "migrated", "drop_remainder=True is set")
            return
        split = unbatched(method) if receiver else None
        if split:
            ctx.report(method, "migrated", UNBATCHED.format(how=split))
            return
        remote = remote_uses(ctx)
        dataset = receiver or _applied_to(call)
        why = inference_pipeline(dataset, method, ctx, remote)
        drained = drained_batches(method, dataset, ctx) if not why else None
        shared = (shared_iterator(method, receiver, ctx, remote)
                  or fed_outputs(method, receiver, ctx)) if not (why or drained) else None
        now = f" (now: drop_remainder={str(given.value).strip()})" if given is not None else ""
        if why:
            ctx.report(method, "unmigrated", INFERENCE.format(why=why) + now)
        elif drained:
            ctx.report(method, "unmigrated", DRAINED.format(why=drained) + now)
        elif shared:
            ctx.report(method, "unmigrated", shared + now)
        elif given is not None:
            ctx.report(method, "unmigrated", KEPT + now)
        elif has_unpacking(call):
            ctx.report(method, "unmigrated", UNPACKED)
        else:
            add_keyword(call, "drop_remainder", "True")
            ctx.report(method, "migrated", ADDED)

    @staticmethod
    def _check_queue(call: Node, method: Leaf, index: int, ctx: FileContext) -> None:
        """The queue API cannot be rewritten; only a possibly smaller final batch is reported."""
        smaller = find_argument(call, "allow_smaller_final_batch", index)
        if smaller is not None and not is_false(smaller.value):
            ctx.report(method, "unmigrated", SMALLER)


def _applied_to(call: Node) -> Sequence[Base]:
    """The dataset (power children) whose ``.apply(...)`` takes the ``map_and_batch(...)``
    call whose ``(...)`` is ``call``; empty when it is not an ``apply`` argument."""
    argument = call.parent
    if argument is not None and argument.parent is not None and argument.parent.type == symbols.arglist:
        argument = argument.parent
    trailer = argument.parent if argument is not None else None
    if trailer is None or not is_call_trailer(trailer) or trailer.children[1] is not argument:
        return ()
    apply = trailer.prev_sibling
    if apply is None or attribute_name(apply) != "apply":
        return ()
    return apply.parent.children[:child_index(apply)]


def _may_be_dataset_batch(name: str, call: Node) -> bool:
    """A batching call on a receiver not shown to be a dataset that may still need the flag:
    ``batch(n)``, or ``padded_batch`` (a tf.data-only name, e.g. NMT's ``x.padded_batch``)
    without drop_remainder."""
    if name == "padded_batch":
        return find_argument(call, "drop_remainder", DROP_REMAINDER_POSITION[name]) is None
    return name == "batch" and len(arguments(call)) == 1


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [DropRemainder()]


@hookimpl
def npu_codemod_analyze_file(path: str, text: str) -> Optional[set[str]]:
    return (pipeline_use_facts(path, text) | module_facts(path, text)) or None
