"""NPU064 tf2-drop-remainder: static batch shapes for TF 2.x training datasets.

A ``dataset.batch(n)`` whose last batch is smaller starts the dynamic-shape compile path on the
NPU; the TF 2.6 guide ("Setting drop_remainder for static batching") advises
``drop_remainder=True``. Only receivers shown to be ``tf.data`` datasets are rewritten
(``npu_codemod.codemods.tf2_datasets``: ``tf.data`` constructors, ``tfds.load``, dataset
methods, functions of the file or of the repository that return a dataset, names assigned
one); a dataset shown to reach only ``evaluate``/``predict``/``validation_data=``, or named for
evaluation, is reported (the last samples would be dropped from the evaluation:
``tf2_dataset_uses`` follows it through names, returns and calls, across files too), as is a
one-argument ``batch(n)`` of a receiver not shown to be a dataset, and a dataset a library
batches itself (Keras' ``image_dataset_from_directory``, ``tfds.load(batch_size=...)``,
Hugging Face's ``to_tf_dataset``/``prepare_tf_dataset``). A batch of one window or group (in the
``reduce_func`` of ``group_by_window``, a ``flat_map`` over ``window(...)``) is reported, never
rewritten: it is no training batch, and ``drop_remainder`` would drop whole groups.

A ``drop_remainder`` given another value is kept and reported (spec rules-tf2.md, NPU064: "an
explicit non-``True`` value is kept and reported"), also on a receiver not shown to be a dataset
(``self._delegate.get_dataset().batch(n, drop_remainder=self._flag)``): that keyword is
``tf.data``'s. A dataset only looked at (a loop, ``iter(...)``) in a file that trains nothing
(``DatasetUses.looked_at_only``, as NPU069 reads it) is no training pipeline: a note, no rewrite
(a tool that prints records would silently leave out the last ones); so is one a function or a
method returns when the only files known to use it train nothing and loop over it or evaluate
it (decoding scripts, named in the note; spec: pipelines reaching only evaluation or inference
are reported). One use known to train, a loop in a file that trains, or the result passed on to
another call keeps the rewrite; no known use at all keeps it too (a library's pipeline).
"""

from __future__ import annotations

import ast
from typing import Optional

from npu_codemod.api import (
    Base,
    Capture,
    FileContext,
    Leaf,
    Node,
    Reference,
    Rule,
    add_keyword,
    arguments,
    find_argument,
    has_unpacking,
    hookimpl,
    is_none,
    is_true,
    symbols,
)
from npu_codemod.api._toolkit import (
    LIBRARY_BATCHERS,
    TF2,
    TF_NEUTRAL,
    DatasetUses,
    dataset_facts,
    dataset_uses,
    is_call_trailer,
    tree_text,
    unparenthesised,
)

#: drop_remainder's position among the arguments.
METHODS = {"batch": 1, "padded_batch": 3, "map_and_batch": 3}
MAP_AND_BATCH = "tensorflow.data.experimental.map_and_batch"
#: Library batchers -> the position of ``batch_size`` (Keras' default is 32; ``tfds.load``'s None).
BATCH_SIZE_POSITION = {"image_dataset_from_directory": 5, "text_dataset_from_directory": 4,
                       "audio_dataset_from_directory": 4, "timeseries_dataset_from_array": 5}
ADDED = "added drop_remainder=True (static batch shape for the NPU)"
IN_PLACE = "drop_remainder=True is set"
KEPT = "drop_remainder is given as another value: kept; the NPU compiles a dynamic shape for the last batch"
EVALUATION_ONLY = ("evaluation pipeline ({where}): evaluation would silently drop the last "
                   "samples: pad the last batch instead, or accept the dynamic-shape compile")
EVERY_SAMPLE = ("pipeline that must see every sample ({where}): drop_remainder=True would silently "
                "drop its last samples: pad the last batch instead, or accept the dynamic-shape compile")
UNKNOWN = ("if this is a tf.data.Dataset used for training: add drop_remainder=True (static "
           "batch shape for the NPU)")
LIBRARY = ("{spelled} batches the dataset itself, without drop_remainder (the last batch may be "
           "smaller): load it unbatched (batch_size=None) and call .batch(n, drop_remainder=True) "
           "on it, or .unbatch().batch(n, drop_remainder=True)")
#: Methods of Hugging Face's libraries that batch a tf.data pipeline themselves.
HUGGING_FACE = frozenset({"to_tf_dataset", "prepare_tf_dataset"})
HUGGING_FACE_BATCHES = ("{method}(...) batches the tf.data pipeline itself: for training, pass "
                        "drop_remainder=True (static batch shape for the NPU)")
WINDOW = ("batch of one window or group ({where}), not a training batch: drop_remainder=True would "
          "drop every window or group shorter than the batch size; left as is (give "
          "drop_remainder=True to the batch of the training pipeline)")
LOOKED_AT = ("dataset only looked at (a loop, iter(...)) in a file that trains nothing: no training "
             "pipeline, left as is (drop_remainder=True would silently leave out its last samples)")
LOOKED_AT_ELSEWHERE = ("dataset returned to files that train nothing and only look at it or evaluate "
                      "it ({places}): no training pipeline, left as is (drop_remainder=True would "
                      "silently leave out its last samples there)")
UNPACKED = "drop_remainder may come in the unpacked arguments: pass drop_remainder=True explicitly"


class DropRemainder(Rule):
    id = "NPU064"
    name = "tf2-drop-remainder"
    pack = "tf2"
    file_kinds = frozenset({TF2, TF_NEUTRAL})
    description = "Add drop_remainder=True to the batch() of TF 2.x training datasets."
    guide_section = "设置drop_remainder静态化batch"
    guide_section_en = "Setting drop_remainder for Static Batching"
    guide_url = Rule.catalog_url(id, name)
    rewrites = ("`batch(n)`, `padded_batch(...)` and `tf.data.experimental.map_and_batch(...)` of a "
                "dataset shown to be `tf.data` (a `tf.data` "
                "constructor chain, `tfds.load`, a function of the file or of the repository that "
                "returns a dataset, a name assigned one, in any branch) get `drop_remainder=True`, "
                "also when the dataset feeds evaluation as well as training; one that passes "
                "`True` already is left alone.")
    reports = ("A dataset shown reaching only `evaluate`/`predict`/`validation_data=` (through "
               "names, returns and calls, from other files too), or named for evaluation or "
               "inference (`val_ds`, `eval_input_fn`): the evaluation would lose its last "
               "samples; a training dataset a library batches itself "
               "(`tf.keras.utils.image_dataset_from_directory`, `tfds.load(batch_size=...)`, Hugging "
               "Face's `to_tf_dataset`/`prepare_tf_dataset` without `drop_remainder=True`); "
               "`drop_remainder` given another "
               "value (on any receiver: the keyword is `tf.data`'s); a dataset only looked at "
               "(a loop, `iter(...)`) in a file that trains nothing (a note: no training "
               "pipeline, left as is), and one a function or a class's method returns when "
               "every known use in other files loops over it or evaluates it in a file that "
               "trains nothing (a decoding script: the note names where; one use that trains, "
               "a loop in a file that trains, or the result passed on to another call keeps "
               "the rewrite); a one-argument `batch(n)` of a receiver not shown to be a dataset; "
               "unpacked arguments; a batch of one window or group (in the `reduce_func` of "
               "`group_by_window`, a `flat_map` over `window(...)`): no training batch, "
               "`drop_remainder` would drop whole groups.")
    example = """
        import tensorflow as tf


        def pipelines(x_train, y_train, x_val, y_val, batch_size):
            train = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(1000)
            train = train.batch(batch_size)
            val = tf.data.Dataset.from_tensor_slices((x_val, y_val)).batch(batch_size)
            return train, val


        def run(model, x_train, y_train, x_val, y_val):
            train = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(64)
            val = tf.data.Dataset.from_tensor_slices((x_val, y_val)).batch(64)
            model.fit(train, epochs=3)
            model.evaluate(val)
    """
    modules = ("tensorflow", "keras")
    calls = (*LIBRARY_BATCHERS, MAP_AND_BATCH)  # datasets a library batches: reported
    _tokens = ("batch", "_dataset_from_", "_tf_dataset")
    _site_names = (".batch", ".padded_batch", ".to_tf_dataset", ".prepare_tf_dataset")
    pattern = "trailer< '.' method=('batch' | 'padded_batch' | 'to_tf_dataset' | 'prepare_tf_dataset') >"

    def visit(self, node: Base, capture: Capture, ctx: FileContext) -> None:
        call = node.next_sibling
        power = node.parent
        if not is_call_trailer(call) or power is None or power.type != symbols.power:
            return
        method = capture["method"]
        method = method[0] if isinstance(method, list) else method
        uses = dataset_uses(ctx)
        if method.value in HUGGING_FACE:
            site = uses.datasets.call_at(method.lineno, method.column, method.value) if uses else None
            self._hugging_face(call, method, _kept(uses, site), ctx)
            return
        batch = uses.datasets.call_at(method.lineno, method.column, method.value) if uses else None
        window = uses.window_function(batch) if uses is not None and batch is not None else ""
        if window:
            ctx.report(method, "unmigrated", WINDOW.format(where=window), level="note")
            return
        site = uses.datasets.dataset_call_at(method.lineno, method.column, method.value) if uses else None
        if uses is not None and site is not None:
            self._check(call, method, uses, site, ctx)
        elif uses is not None and batch is not None and _spells_drop_remainder(uses, batch):
            self._check(call, method, uses, batch, ctx)  # never rewritten: the value is kept
        elif method.value == "batch" and len(arguments(call)) == 1:
            ctx.report(method, "unmigrated", UNKNOWN, level="note")

    def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
        """``map_and_batch(f, n)``: as a ``batch``. A library call that returns a dataset it
        batched: reported (as evaluation-only when it is), unless it passes
        ``batch_size=None`` (``tfds.load``: unless it passes one)."""
        call = reference.call
        if call is None:
            return
        name = call.prev_sibling
        leaf = name.children[1] if name.type == symbols.trailer else name
        uses = dataset_uses(ctx)
        site = uses.datasets.call_at(leaf.lineno, leaf.column, leaf.value) if uses else None
        evaluation = _kept(uses, site)
        if reference.name == MAP_AND_BATCH:  # ds.apply(map_and_batch(f, n)): as a batch
            self._check(call, leaf, uses, site, ctx)
        elif not has_unpacking(call):
            self._library(reference, call, evaluation, ctx)

    @staticmethod
    def _library(reference: Reference, call: Node, evaluation: str, ctx: FileContext) -> None:
        function = reference.name.rpartition(".")[2]
        size = find_argument(call, "batch_size", BATCH_SIZE_POSITION.get(function))
        if (size is None and function == "load") or (size is not None and is_none(unparenthesised(size.value))):
            return
        message = evaluation or LIBRARY.format(spelled=reference.spelled)
        ctx.report(reference, "unmigrated", message)

    @staticmethod
    def _hugging_face(call: Node, method: Leaf, evaluation: str, ctx: FileContext) -> None:
        """``hf_dataset.to_tf_dataset(...)``, ``model.prepare_tf_dataset(...)``: the
        ``datasets``/``transformers`` libraries batch inside; their ``drop_remainder`` is
        reported, not set (the receiver is not shown to be theirs)."""
        given = find_argument(call, "drop_remainder", None)
        if given is not None and is_true(unparenthesised(given.value)):
            ctx.report(method, "migrated", IN_PLACE)
        elif evaluation:
            ctx.report(method, "unmigrated", evaluation)
        else:
            ctx.report(method, "unmigrated", HUGGING_FACE_BATCHES.format(method=method.value))

    def _check(self, call: Node, method: Leaf, uses: Optional[DatasetUses], site: Optional[ast.AST],
               ctx: FileContext) -> None:
        """A dataset's batch (``site``: its ``ast`` call): add ``drop_remainder=True``, or report
        why not: it must see every sample, it is only looked at, or another value is given."""
        given = find_argument(call, "drop_remainder", METHODS[method.value])
        evaluation = _kept(uses, site)
        now = f" (now: drop_remainder={tree_text(given.value).strip()})" if given is not None else ""
        if given is not None and is_true(unparenthesised(given.value)):
            ctx.report(method, "migrated", IN_PLACE)
        elif evaluation:
            ctx.report(method, "unmigrated", evaluation)
        elif uses is not None and site is not None and uses.looked_at_only(site):
            places = uses.looked_at_in(site)
            message = LOOKED_AT_ELSEWHERE.format(places=", ".join(places)) if places else LOOKED_AT
            ctx.report(method, "unmigrated", message + now, level="note")
        elif given is not None:
            ctx.report(method, "unmigrated", KEPT + now)
        elif has_unpacking(call):
            ctx.report(method, "unmigrated", UNPACKED)
        else:
            add_keyword(call, "drop_remainder", "True")
            ctx.report(method, "migrated", ADDED)


def _spells_drop_remainder(uses: DatasetUses, call: ast.Call) -> bool:
    """Does ``call`` (``x.batch(n, drop_remainder=flag)``, ``x`` not shown to be a dataset) name
    ``drop_remainder``, a keyword of ``tf.data``'s ``batch``, on a receiver that is no imported
    module or name (``x`` from another object's ``get_dataset()``: a dataset all the same)?"""
    receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
    return receiver is not None and uses.datasets.qualify(receiver) is None \
        and any(keyword.arg == "drop_remainder" for keyword in call.keywords)


def _kept(uses: Optional[DatasetUses], site: Optional[ast.AST]) -> str:
    """The report for the dataset ``site`` when it must see every sample (evaluation, or a
    pass whose every batch counts), else ""."""
    if uses is None or site is None:
        return ""
    where = uses.evaluation_only(site)
    if not where:
        return ""
    return (EVALUATION_ONLY if uses.evaluates(site) else EVERY_SAMPLE).format(where=where)


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [DropRemainder()]


@hookimpl
def npu_codemod_analyze_file(path: str, text: str) -> Optional[set[str]]:
    """Which functions of the file return datasets, and what it uses the repository's
    functions for (NPU064 and NPU069 follow datasets across files with them)."""
    return dataset_facts(path, text) or None
