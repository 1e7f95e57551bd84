"""Names: what an import binds, the dotted name a node spells, a file's module name, and
which names in a file are bound to TensorFlow (or another root module) and what a dotted
expression resolves to. The one home of these questions, for both trees: fissix's
(:func:`import_bindings`, :func:`spelled_name`) and ``ast``'s (:func:`ast_import_bindings`,
:func:`ast_dotted_name`).

Rules match *canonical* names (``tensorflow.nn.dropout``) whatever the file's spelling:
``tf.nn.dropout``, ``tf.compat.v1.nn.dropout`` (:func:`canonical` folds ``compat.v1``),
``from tensorflow import nn``, or the internal module the public name is exported from
(``from tensorflow.python.ops import nn_ops``: :data:`PUBLIC_NAMES`). Code a rule writes uses
the file's own alias (:attr:`ImportNames.alias`), never an internal module.
"""

from __future__ import annotations

import ast
import re
from functools import cached_property, lru_cache
from pathlib import PurePosixPath
from typing import Optional, Sequence

from fissix import pytree
from fissix.pgen2 import token
from fissix.pygram import python_symbols as syms

from .nodes import child_index
from .text_search import AnyOf
from .walk import small_statements

TF = "tensorflow"
_COMPAT = ("tensorflow.compat.v1", "tensorflow.compat.v2")
#: The package ``tf.estimator`` comes from, whose names are TensorFlow's: its public API
#: ``tensorflow_estimator.estimator`` is ``tf.estimator`` (TensorFlow 1.15's v1 API), and its
#: modules ``tensorflow_estimator.python.estimator.*`` are what the internal
#: ``tensorflow.python.estimator.*`` re-export. The TensorFlow resolver binds its imports too
#: (:func:`public_name` spells them the TensorFlow way), so a rule matching
#: ``tensorflow.estimator.RunConfig`` finds ``tf_estimator.estimator.RunConfig``; a rule that
#: must see a file importing only this package lists it in :attr:`Rule.modules`.
ESTIMATOR_PACKAGE = "tensorflow_estimator"

def imports_module_pattern(*modules: str) -> "re.Pattern[str]":
    """Cheap test on raw text: could the file import one of ``modules`` (root packages)? It
    may over-match (the tree decides), never under-match: the import can follow ``;`` or a
    one-line ``try:``/``if x:``."""
    return re.compile(rf"(?:^|[;:]){_statement_rest(modules)}", re.MULTILINE)


def imports_module_text(*modules: str) -> AnyOf:
    """:func:`imports_module_pattern` asked only whether it occurs (``found``), each of its
    two starts looked for by its own literal (``text_search``): a third of the search's cost."""
    rest = _statement_rest(modules)
    return AnyOf(f"^{rest}", f"[;:]{rest}", flags=re.MULTILINE)


def _statement_rest(modules: tuple[str, ...]) -> str:
    """What follows a statement's start in :func:`imports_module_pattern`."""
    name = "(?:" + "|".join(map(re.escape, modules)) + ")" if len(modules) > 1 else re.escape(modules[0])
    return rf"[ \t]*(?:from[ \t]+{name}\b|import[ \t][^\n#]*\b{name}\b)"


#: :func:`imports_module_pattern` of TensorFlow and :data:`ESTIMATOR_PACKAGE`.
IMPORTS_TF = imports_module_pattern(TF, ESTIMATOR_PACKAGE)
#: The same as a yes or no (:func:`imports_module_text`).
IMPORTS_TF_TEXT = imports_module_text(TF, ESTIMATOR_PACKAGE)


#: Internal modules (and a few members) -> the public name TensorFlow exports them as
#: (``tf_export``), for the code real scripts write: ``from tensorflow.python.client import
#: session as tf_session``. A full name maps by its longest key; the rest follows the public
#: name (``tensorflow.python.ops.nn_ops.dropout`` -> ``tensorflow.nn.dropout``). A module
#: whose names are exported in several places maps to the one the rules know them by.
PUBLIC_NAMES: dict[str, str] = {
    "tensorflow.python.client.session": "tensorflow",  # Session, InteractiveSession
    "tensorflow.python.compat.v2_compat": "tensorflow.compat.v1",  # enable_v2_behavior
    "tensorflow.core.protobuf.config_pb2": "tensorflow",  # ConfigProto, GraphOptions...
    "tensorflow.python.framework.ops": "tensorflow",  # Graph, device, enable_eager_execution
    "tensorflow.python.framework.constant_op": "tensorflow",
    "tensorflow.python.framework.dtypes": "tensorflow",
    "tensorflow.python.framework.errors": "tensorflow.errors",
    "tensorflow.python.framework.errors_impl": "tensorflow.errors",
    "tensorflow.python.framework.graph_util": "tensorflow.graph_util",
    "tensorflow.python.framework.importer": "tensorflow",
    "tensorflow.python.framework.random_seed": "tensorflow",
    "tensorflow.python.framework.sparse_tensor": "tensorflow",
    "tensorflow.python.framework.tensor_shape": "tensorflow",
    **{f"tensorflow.python.ops.{module}": "tensorflow" for module in (
        "array_ops", "check_ops", "clip_ops", "control_flow_ops", "data_flow_ops",
        "functional_ops", "gradients", "init_ops", "logging_ops", "lookup_ops", "math_ops",
        "partitioned_variables", "random_ops", "sparse_ops", "standard_ops", "state_ops",
        "string_ops", "variable_scope", "variables")},
    **{f"tensorflow.python.ops.{module}": "tensorflow.nn" for module in (
        "embedding_ops", "nn", "nn_impl", "nn_ops", "rnn")},
    "tensorflow.python.ops.nn_ops.dropout_v2": "tensorflow.compat.v2.nn.dropout",
    "tensorflow.python.ops.rnn_cell": "tensorflow.nn.rnn_cell",
    "tensorflow.python.ops.rnn_cell_impl": "tensorflow.nn.rnn_cell",
    "tensorflow.python.ops.image_ops": "tensorflow.image",
    "tensorflow.python.ops.losses.losses": "tensorflow.losses",
    "tensorflow.python.ops.metrics": "tensorflow.metrics",
    **{f"tensorflow.python.layers.{module}": "tensorflow.layers" for module in (
        "base", "convolutional", "core", "layers", "normalization", "pooling")},
    "tensorflow.python.keras": "tensorflow.keras",
    **{f"tensorflow.python.keras.layers.{module}": "tensorflow.keras.layers" for module in (
        "advanced_activations", "convolutional", "core", "embeddings", "local", "merge",
        "noise", "normalization", "pooling", "recurrent", "wrappers")},
    "tensorflow.python.keras.engine.training": "tensorflow.keras",  # Model
    "tensorflow.python.keras.engine.sequential": "tensorflow.keras",
    "tensorflow.python.data": "tensorflow.data",
    **{f"tensorflow.python.data.ops.{module}": "tensorflow.data" for module in (
        "dataset_ops", "iterator_ops", "readers")},
    **{f"tensorflow.python.data.experimental.ops.{module}": "tensorflow.data.experimental"
       for module in ("batching", "interleave_ops", "prefetching_ops", "readers", "shuffle_ops")},
    **{f"tensorflow.python.training.{module}": "tensorflow.train" for module in (
        "adadelta", "adagrad", "adam", "basic_session_run_hooks", "checkpoint_management",
        "checkpoint_utils", "coordinator", "device_setter", "ftrl", "gradient_descent", "input",
        "learning_rate_decay", "momentum", "monitored_session", "moving_averages", "optimizer",
        "proximal_gradient_descent", "queue_runner", "queue_runner_impl", "rmsprop", "saver",
        "server_lib", "session_run_hook", "supervisor", "sync_replicas_optimizer", "training",
        "training_util", "warm_starting_util")},
    "tensorflow.python.training.tracking.util": "tensorflow.train",  # Checkpoint
    **{f"tensorflow.python.training.experimental.{module}": "tensorflow.train.experimental"
       for module in ("loss_scale", "loss_scale_optimizer", "mixed_precision")},
    "tensorflow.python.estimator": "tensorflow.estimator",
    "tensorflow.python.estimator.estimator": "tensorflow.estimator",
    "tensorflow.python.estimator.run_config": "tensorflow.estimator",
    **{f"tensorflow.python.estimator.canned.{module}": "tensorflow.estimator" for module in (
        "baseline", "boosted_trees", "dnn", "dnn_linear_combined", "linear")},
    "tensorflow.python.estimator.tpu.tpu_estimator": "tensorflow.estimator.tpu",
    # TPU APIs through the modules that define them (BERT-era code imports TPUEstimator,
    # bfloat16_scope, CrossShardOptimizer from there): the names the rules know them by.
    "tensorflow.contrib.tpu.python.tpu": "tensorflow.contrib.tpu",
    **{f"tensorflow.contrib.tpu.python.tpu.{module}": "tensorflow.contrib.tpu" for module in (
        "bfloat16", "device_assignment", "topology", "tpu", "tpu_config", "tpu_estimator",
        "tpu_feed", "tpu_function", "tpu_optimizer", "tpu_sharding", "training_loop")},
    "tensorflow.contrib.tpu.python.ops.tpu_ops": "tensorflow.contrib.tpu",
    # tf.contrib.learn's estimators through the modules that define them.
    "tensorflow.contrib.learn.python.learn": "tensorflow.contrib.learn",
    "tensorflow.contrib.learn.python.learn.estimators": "tensorflow.contrib.learn",
    **{f"tensorflow.contrib.learn.python.learn.estimators.{module}": "tensorflow.contrib.learn"
       for module in ("dnn", "dnn_linear_combined", "dynamic_rnn_estimator", "estimator", "kmeans",
                      "linear", "logistic_regressor", "run_config", "svm")},
    # contrib.learn's monitored_session only re-exports tf.train's classes (TF 1.x after 1.0:
    # ``MonitoredSession = monitored_session.MonitoredSession``...): its members one by one.
    **{f"tensorflow.contrib.learn.python.learn.monitored_session.{name}": f"tensorflow.train.{name}"
       for name in ("Scaffold", "SessionCreator", "ChiefSessionCreator", "WorkerSessionCreator",
                    "MonitoredSession")},
    **{f"tensorflow.python.tpu.{module}": "tensorflow.tpu" for module in (
        "bfloat16", "tpu", "tpu_optimizer", "training_loop")},
    **{f"tensorflow.python.tpu.{module}": "tensorflow.estimator.tpu" for module in (
        "tpu_config", "tpu_estimator")},
    "tensorflow.python.estimator.tpu.tpu_config": "tensorflow.estimator.tpu",
    "tensorflow.python.estimator.training": "tensorflow.estimator",  # TrainSpec, EvalSpec
    "tensorflow.python.distribute.mirrored_strategy": "tensorflow.distribute",
    "tensorflow.python.saved_model": "tensorflow.saved_model",
    "tensorflow.python.summary.summary": "tensorflow.summary",
    "tensorflow.python.summary.writer.writer": "tensorflow.summary",  # FileWriter
    "tensorflow.python.lib.io.tf_record": "tensorflow.python_io",
    "tensorflow.python.platform.app": "tensorflow.app",
    "tensorflow.python.platform.flags": "tensorflow.flags",
    "tensorflow.python.platform.gfile": "tensorflow.gfile",
    "tensorflow.python.platform.test": "tensorflow.test",
    "tensorflow.python.platform.tf_logging": "tensorflow.logging",
    "tensorflow.python.util.compat": "tensorflow.compat",  # as_bytes, as_text
    # tf.contrib's packages through the modules that define them (slim-era code imports
    # add_arg_scope, model_variable, parallel_reader from there): the names they are exported
    # as. Only modules the package re-exports: contrib.layers' ``utils`` is not one.
    "tensorflow.contrib.framework.python.ops": "tensorflow.contrib.framework",
    **{f"tensorflow.contrib.framework.python.ops.{module}": "tensorflow.contrib.framework"
       for module in ("variables", "ops", "checkpoint_ops", "prettyprint_ops", "script_ops",
                      "sort_ops")},
    # ``arg_scope`` is a module of that package and the function it exports: its members one by one.
    **{f"tensorflow.contrib.framework.python.ops.arg_scope.{name}": f"tensorflow.contrib.framework.{name}"
       for name in ("arg_scope", "add_arg_scope", "has_arg_scope", "arg_scoped_arguments",
                    "current_arg_scope")},
    **{f"tensorflow.contrib.layers.python.layers.{module}": "tensorflow.contrib.layers"
       for module in ("layers", "initializers", "regularizers", "optimizers", "feature_column",
                      "summaries", "embedding_ops", "normalization", "encoders")},
    "tensorflow.contrib.slim.python.slim": "tensorflow.contrib.slim",
    "tensorflow.contrib.slim.python.slim.data": "tensorflow.contrib.slim",
    # contrib's loss scaling through the modules that define it (NPU031/NPU032 migrate it).
    **{f"tensorflow.contrib.mixed_precision.python.{module}": "tensorflow.contrib.mixed_precision"
       for module in ("loss_scale_manager", "loss_scale_optimizer")},
}
#: Where the internal modules live (with the dot): never spelled in code a rule writes.
INTERNAL = ("tensorflow.python.", "tensorflow.core.", f"{ESTIMATOR_PACKAGE}.python.",
            "tensorflow.contrib.tpu.python.", "tensorflow.contrib.learn.python.",
            "tensorflow.contrib.framework.python.", "tensorflow.contrib.layers.python.",
            "tensorflow.contrib.slim.python.", "tensorflow.contrib.mixed_precision.python.")

#: The names ``from npu_bridge.npu_init import *`` binds that code the rules write calls (the
#: spec's list, and the modules NPU004-NPU006 write): a file with the star import binds each
#: as ``npu_bridge.npu_init.<name>``, so a rule's :attr:`Rule.calls` can name its own output
#: (``npu_bridge.npu_init.get_npu_rank_id``) and find it on a second run.
NPU_INIT_NAMES = frozenset({
    "npu_run_config_init", "npu_config_proto", "npu_hooks_append", "npu_callbacks_append",
    "npu_distributed_optimizer_wrapper", "NPUBroadcastGlobalVariablesHook",
    "NPUBroadcastGlobalVariablesCallback", "get_npu_rank_id", "get_npu_local_rank_id",
    "get_npu_rank_size", "get_npu_local_rank_size", "npu_strategy", "NPULossScaleOptimizer",
    "FixedLossScaleManager", "ExponentialUpdateLossScaleManager",
    "set_keras_session_npu_config", "close_session", "npu_clear_session", "npu_ops",
    "npu_unary_ops",
})
#: Modules whose star import binds known names (see :data:`NPU_INIT_NAMES`).
STAR_EXPORTS: dict[str, frozenset[str]] = {"npu_bridge.npu_init": NPU_INIT_NAMES}
#: Star imports that bind another module's names: TF Adapter 2.x ships ``npu_bridge.npu_init``
#: as ``npu_device.compat.v1.npu_init`` (NPU062's header in ``tf2-compat`` files), so the TF 1.x
#: rules find their own output there on a second run.
STAR_SAME = {"npu_device.compat.v1.npu_init": "npu_bridge.npu_init"}


#: How a dotted name spells the call of a module accessor function (``contrib.tpu().X``).
ACCESSOR_CALL = "()"
#: What an accessor whose module is not known returns (``accessor:`` facts).
UNRESOLVED_ACCESSOR = "?"


def public_name(dotted: str) -> str:
    """The public name of the full TensorFlow name ``dotted`` (itself unless it goes through
    an internal module listed in :data:`PUBLIC_NAMES`); a name of :data:`ESTIMATOR_PACKAGE`
    is spelled as TensorFlow's first (``tensorflow_estimator.python.estimator.estimator`` ->
    ``tensorflow.python.estimator.estimator`` -> ``tensorflow.estimator``)."""
    if dotted == ESTIMATOR_PACKAGE or dotted.startswith(ESTIMATOR_PACKAGE + "."):
        dotted = TF + dotted[len(ESTIMATOR_PACKAGE):]
    if not is_internal_name(dotted):
        return dotted
    parts = dotted.split(".")
    for end in range(len(parts), 2, -1):
        public = PUBLIC_NAMES.get(".".join(parts[:end]))
        if public is not None:
            return ".".join((public, *parts[end:]))
    return dotted


def is_internal_name(dotted: str) -> bool:
    """Is the full name ``dotted`` in (or the package of) TensorFlow's internal modules?"""
    return (dotted + ".").startswith(INTERNAL)


def canonical(dotted: str) -> str:
    """Fold ``tensorflow.compat.v1.X`` onto ``tensorflow.X``."""
    for prefix in _COMPAT:
        if dotted == prefix:
            return TF
        if dotted.startswith(prefix + "."):
            return TF + dotted[len(prefix):]
    return dotted


#: Paths whose module names are kept (:func:`module_parts`, :func:`module_package`): the
#: analyses and rules ask about the same file a dozen times, each a ``PurePosixPath`` (6 us).
_PATHS_KEPT = 4096


@lru_cache(maxsize=_PATHS_KEPT)
def module_package(path: str) -> tuple[str, ...]:
    """The package a file's imports are found from first: its folder (a package's
    ``__init__.py``: the package itself)."""
    parts = module_parts(path)
    return parts if PurePosixPath(path.replace("\\", "/")).name.startswith("__init__.") else parts[:-1]


def ast_dotted_name(node: ast.AST) -> Optional[str]:
    """``a.b.c`` for an ``ast`` name or attribute chain, else None."""
    if type(node) is ast.Name:  # most are: no list, no join (the analyses spell every callee)
        return node.id
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


@lru_cache(maxsize=_PATHS_KEPT)
def module_parts(path: str) -> tuple[str, ...]:
    """``("models", "benchmark")`` for ``models/benchmark.py``; a package is its folder."""
    parts = [part for part in PurePosixPath(path.replace("\\", "/")).with_suffix("").parts
             if part not in ("/", "")]
    return tuple(parts[:-1] if parts and parts[-1] == "__init__" else parts)


def dotted_name(node: pytree.Base) -> Optional[str]:
    """``a.b.c`` for a NAME or a power node made only of ``.attr`` trailers, else None."""
    if node.type == token.NAME:
        name: str = node.value
        return name
    if node.type == syms.dotted_name:
        return "".join(leaf.value for leaf in node.leaves())
    if node.type != syms.power or not is_attribute_trailer(node.children[-1]):
        return None  # a call ``f(x)`` or ``a.f(x)``, most power nodes: no need to go through
    return prefix_name(node, len(node.children))


def is_attribute_trailer(node: pytree.Base) -> bool:
    return bool(node.type == syms.trailer and node.children[0].type == token.DOT)


def attribute_name(node: pytree.Base) -> Optional[str]:
    """``name`` for a ``.name`` trailer, else None."""
    return str(node.children[1].value) if is_attribute_trailer(node) else None


def is_call_trailer(node: Optional[pytree.Base]) -> bool:
    return node is not None and node.type == syms.trailer and node.children[0].type == token.LPAR


def is_empty_call(node: pytree.Base) -> bool:
    """Is ``node`` a ``()`` trailer (a call without arguments)?"""
    return is_call_trailer(node) and len(node.children) == 2


def prefix_name(power: pytree.Node, end: int) -> Optional[str]:
    """Dotted name spelled by ``power.children[:end]`` (a NAME and attribute trailers only)."""
    return spelled_name(power.children[:max(end, 1)])


def spelled_name(parts: Sequence[pytree.Base], through_calls: bool = False) -> Optional[str]:
    """``a.b.c`` for power children ``parts`` spelling a NAME and attribute trailers, else None:
    the one reading of a dotted name. ``through_calls``: calls without arguments are spelled
    too (``contrib.tpu().TPUEstimator``, as :meth:`ImportNames.resolve` reads an accessor's call)."""
    first = parts[0]
    if first.type != token.NAME:
        return None
    spelled = [first.value]
    for trailer in parts[1:]:
        if is_attribute_trailer(trailer):
            spelled.append("." + trailer.children[1].value)
        elif through_calls and is_empty_call(trailer):
            spelled.append(ACCESSOR_CALL)
        else:
            return None
    return "".join(spelled)


def leading_name(parts: Sequence[pytree.Base]) -> Optional[str]:
    """The dotted name the leading NAME and attribute trailers of power children ``parts``
    spell (``tf.data.Dataset.range`` of ``tf.data.Dataset.range(9).batch``), or None."""
    end = 1
    while end < len(parts) and is_attribute_trailer(parts[end]):
        end += 1
    return spelled_name(parts[:end])


def callee_name(power: pytree.Base) -> Optional[str]:
    """The dotted name of the callee when ``power`` ends with a call (``tf.Session`` of
    ``tf.Session(config=c)``), else None."""
    if power.type != syms.power or not is_call_trailer(power.children[-1]):
        return None
    return prefix_name(power, len(power.children) - 1)


#: The name :func:`import_bindings` gives what ``from m import *`` binds (its target: ``m``).
STAR = "*"


def import_binding_leaves(statement: pytree.Base) -> list[tuple[pytree.Leaf, str]]:
    """``(leaf, target)`` for each name an ``import``/``from ... import`` statement binds: the
    NAME leaf bound and the full name it is bound to. ``import horovod.tensorflow as hvd``:
    ``hvd`` -> ``horovod.tensorflow``; ``import horovod.tensorflow``: ``horovod`` ->
    ``horovod``; ``from m import rank as r``: ``r`` -> ``m.rank``. A relative module keeps
    its dots (``from .ops import init``: ``.ops.init``; ``from . import ops``: ``.ops``);
    ``from m import *`` gives the ``*`` leaf and ``m``."""
    if statement.type == syms.import_name:
        return [_imported_module(item) for item in _import_items(statement.children[1:])]
    keyword = next(index for index, child in enumerate(statement.children)
                   if child.type == token.NAME and child.value == "import")
    module = "".join(leaf.value for child in statement.children[1:keyword] for leaf in child.leaves())
    base = module if module.endswith(".") else module + "."
    found = []
    for item in _import_items(statement.children[keyword + 1:]):
        if item.type == token.STAR:
            found.append((item, module))
        elif item.type == syms.import_as_name:
            found.append((item.children[2], base + item.children[0].value))
        else:
            found.append((item, base + item.value))
    return found


def import_bindings(statement: pytree.Base) -> list[tuple[str, str]]:
    """``(name, target)`` of each name the import ``statement`` binds (:func:`import_binding_leaves`)."""
    return [(leaf.value, target) for leaf, target in import_binding_leaves(statement)]


def _import_items(children: Sequence[pytree.Base]) -> list[pytree.Base]:
    """The items of an import's name list, without parentheses and commas."""
    items = []
    for child in children:
        if child.type in (syms.dotted_as_names, syms.import_as_names):
            items.extend(child.children[::2])
        elif child.type not in (token.LPAR, token.RPAR):
            items.append(child)
    return items


def _imported_module(item: pytree.Base) -> tuple[pytree.Leaf, str]:
    """What one item of ``import a.b as c, d.e`` binds."""
    if item.type == syms.dotted_as_name:
        return item.children[2], dotted_name(item.children[0]) or ""
    head = item if item.type == token.NAME else item.children[0]
    return head, head.value


def ast_import_bindings(node: "ast.Import | ast.ImportFrom", path: Optional[str] = None) -> list[tuple[str, str]]:
    """:func:`import_bindings` of an ``ast`` import: ``(name, target)`` of each name it binds.
    With ``path`` (the file's, in its repository) a relative module is made absolute, and the
    names of one that leaves the repository are left out; without, it keeps its dots."""
    if isinstance(node, ast.Import):
        return [(alias.asname or alias.name.partition(".")[0],
                 alias.name if alias.asname else alias.name.partition(".")[0]) for alias in node.names]
    module = absolute_module(node, path) if path is not None else "." * node.level + (node.module or "")
    if module is None:
        return []
    base = module if module.endswith(".") else module + "."
    return [(STAR, module) if alias.name == STAR else (alias.asname or alias.name, base + alias.name)
            for alias in node.names]


def absolute_module(node: ast.ImportFrom, path: str) -> Optional[str]:
    """The absolute module of ``from <module> import ...`` in the file ``path``
    (``.``-relative ones from its package), or None when it leaves the repository."""
    if not node.level:
        return node.module
    package = module_package(path)
    if node.level - 1 > len(package):
        return None
    base = list(package[: len(package) - (node.level - 1)])
    return ".".join(base + ([node.module] if node.module else [])) or None


class ImportNames:
    """The bindings of one root module (TensorFlow by default, with
    :data:`ESTIMATOR_PACKAGE`; ``root="horovod"``...) in a module's tree, computed once: a
    generic import resolver.

    ``root`` names another module whose bindings to follow the same way (``contextlib``):
    :meth:`resolve` then gives its full names.
    """

    def __init__(self, tree: pytree.Node, root: str = TF,
                 accessors: Optional[dict[str, str]] = None,
                 repository: Optional[dict[str, str]] = None) -> None:
        self.root = root
        #: Names the file imports from a repository module that binds them to TensorFlow
        #: (``from mylib.compat import tfv1 as tf``) -> that name; see ``codemods/tf_aliases``.
        self.repository: dict[str, str] = dict(repository or {})
        #: Name -> full name of what it is bound to, as imported (internal modules kept).
        self.bindings: dict[str, str] = {}
        #: How the file spells the repository's module accessor functions (``contrib.tpu``)
        #: -> the module a call of one returns (``?``: not known); see ``codemods/accessors``.
        self.accessors: dict[str, str] = dict(accessors or {})
        self._accessor_stems = frozenset(".".join(spelled.split(".")[:end]) for spelled in self.accessors
                                         for end in range(1, spelled.count(".") + 2))
        for node in small_statements(tree):
            if node.type in (syms.import_name, syms.import_from):
                self._bind_import(import_bindings(node))
            elif node.type == syms.expr_stmt and len(node.children) == 3:
                self._alias_assignment(node)

    @cached_property
    def heads(self) -> frozenset[str]:
        """The names a reference may start with: the bound ones and the accessors' first names
        (worked out once: the bindings are complete when the tree has been read)."""
        return frozenset(self.bindings) | frozenset(spelled.split(".")[0] for spelled in self.accessors)

    def leads_to_accessor(self, dotted: str) -> bool:
        """Is ``dotted`` an accessor function's spelling or a dotted prefix of one?"""
        return dotted in self._accessor_stems

    def accessor(self, dotted: str) -> Optional[str]:
        """What a call of the accessor spelled ``dotted`` returns (``?``: not known), or None."""
        return self.accessors.get(dotted)

    @property
    def alias(self) -> str:
        """The name to spell TensorFlow with in generated code (``tf``, ``tf.compat.v1``...);
        ``tf`` when the file binds none (see :attr:`public_alias`)."""
        return self.public_alias or "tf"

    @property
    def public_alias(self) -> Optional[str]:
        """The file's own name for the public TensorFlow module, or None: a file that imports
        only internal modules (``from tensorflow.python.client import session``) or names
        (``from tensorflow import nn``) cannot spell ``tf.ConfigProto`` (see
        :meth:`FileContext.tf_module`)."""
        ranked = sorted(self.bindings.items(), key=lambda item: _alias_rank(item[1]))
        for name, target in ranked:
            if target in (TF, *_COMPAT[:1]):
                return name
            if target == "tensorflow.compat":
                return name + ".v1"
        return None

    def qualify(self, dotted: Optional[str]) -> Optional[str]:
        """Canonical TensorFlow name of ``dotted`` (``tf.nn.dropout``), or None if not TF."""
        resolved = self.resolve(dotted)
        return canonical(resolved) if resolved else None

    def resolve(self, dotted: Optional[str]) -> Optional[str]:
        """Full public TensorFlow name of ``dotted``, ``compat.vN`` kept; None if not TF.

        Rules need it where the API versions differ (``compat.v2.nn.dropout`` takes ``rate``).
        A name reached through an internal module is the public one it is exported as.
        """
        bound = self._bound(dotted)
        return public_name(bound) if bound else None

    def is_internal(self, dotted: Optional[str]) -> bool:
        """Does ``dotted`` go through an internal module (``tf_session`` bound to
        ``tensorflow.python.client.session``)? Code a rule writes never spells it so."""
        bound = self._bound(dotted)
        return bound is not None and is_internal_name(bound)

    def _bound(self, dotted: Optional[str]) -> Optional[str]:
        """Full TensorFlow name of ``dotted`` as the file binds it (internal modules kept)."""
        if not dotted:
            return None
        if ACCESSOR_CALL in dotted:  # ``contrib.tpu().TPUEstimator``
            called, _, rest = dotted.partition(ACCESSOR_CALL)
            module = self.accessors.get(called)
            if module is None or module == UNRESOLVED_ACCESSOR or ACCESSOR_CALL in rest:
                return None
            return module + rest
        head, _, rest = dotted.partition(".")
        target = self.bindings.get(head)
        if target is None:
            return None
        return target + ("." + rest if rest else "")

    def _bind(self, name: str, target: str) -> None:
        roots = (TF, ESTIMATOR_PACKAGE) if self.root == TF else (self.root,)
        if any(target == root or target.startswith(root + ".") for root in roots):
            self.bindings[name] = target

    def _bind_import(self, bindings: Sequence[tuple[str, str]]) -> None:
        """Take in what one import statement binds (``import_bindings``: ``(name, target)``)."""
        for name, target in bindings:
            if name in self.repository:  # a TensorFlow module a repository module binds
                self._bind(name, self.repository[name])
                continue
            if target.startswith("."):
                continue  # a module of the repository, not one of the root's
            if name == STAR:
                source = STAR_SAME.get(target, target)
                for star in sorted(STAR_EXPORTS.get(source, ())):
                    self._bind(star, f"{source}.{star}")
            else:
                self._bind(name, target)

    def _alias_assignment(self, node: pytree.Node) -> None:
        target, op, value = node.children
        head = value if value.type == token.NAME else \
            value.children[0] if value.type in (syms.power, syms.dotted_name) else None
        if head is None or head.type != token.NAME or head.value not in self.bindings \
                and not self.leads_to_accessor(head.value):
            return  # no bound name starts it (most assignments; all, for a root not imported)
        if target.type == token.NAME and op.type == token.EQUAL:
            self._bind_alias(target.value, dotted_name(value) or self._accessor_call(value))

    def _bind_alias(self, name: str, spelled: Optional[str]) -> None:
        """Take in the assignment ``name = <spelled>`` (a dotted name, or an accessor's call
        spelled ``contrib.tpu()``; None: any other value): ``name`` is bound to what
        ``spelled`` resolves to, unless it was bound before."""
        bound = self._bound(spelled)
        if bound:  # an internal module stays one: ``sess_mod = tf_session`` spells no tf
            kept = bound if is_internal_name(bound) else canonical(bound)
            self.bindings.setdefault(name, kept)

    def _accessor_call(self, value: pytree.Base) -> Optional[str]:
        """``contrib.tpu()`` spelled as :meth:`_bound` reads it, when ``value`` calls a module
        accessor function with no argument (``tpu_lib = contrib.tpu()`` binds the module)."""
        if value.type != syms.power or not is_empty_call(value.children[-1]):
            return None
        spelled = prefix_name(value, len(value.children) - 1)
        return spelled + ACCESSOR_CALL if spelled and spelled in self.accessors else None


def _alias_rank(target: str) -> int:
    return {"tensorflow.compat.v1": 0, TF: 1}.get(target, 2)


def call_of(name: pytree.Leaf) -> Optional[tuple[pytree.Node, int]]:
    """``(power, index)`` when the NAME leaf ``name`` ends the callee of a call whose ``(...)``
    trailer is ``power.children[index]``: ``Session`` in ``tf.Session()``, in a bare
    ``Session()`` or in ``make_supervisor().managed_session()`` (any callee), else None."""
    holder = name.parent
    if holder is not None and is_attribute_trailer(holder):
        power, index = holder.parent, child_index(holder)
    elif holder is not None and holder.type == syms.power and holder.children[0] is name:
        power, index = holder, 0
    else:
        return None
    call = power.children[index + 1] if index + 1 < len(power.children) else None
    return (power, index + 1) if is_call_trailer(call) else None


def called_name(name: pytree.Leaf) -> Optional[tuple[pytree.Node, str]]:
    """``(power, dotted callee)`` when the NAME leaf ``name`` ends the callee of a call:
    ``enable_eager_execution`` in ``tf.compat.v1.enable_eager_execution()`` or in a bare
    ``enable_eager_execution()``."""
    found = call_of(name)
    spelled = prefix_name(*found) if found is not None else None
    return (found[0], spelled) if found is not None and spelled else None


def first_call(tree: pytree.Node, names: ImportNames, wanted: frozenset[str]) -> Optional[tuple[pytree.Node, str]]:
    """The first call in ``tree`` of a name that qualifies to one of ``wanted`` (canonical
    names), in any spelling the file binds (``eager()`` after ``from tensorflow.compat.v1
    import enable_eager_execution as eager``), as ``(power, dotted callee)``."""
    last_names = {name.rpartition(".")[2] for name in wanted}
    last_names |= {name for name in names.bindings if names.qualify(name) in wanted}
    for leaf in tree.leaves():
        if leaf.type != token.NAME or leaf.value not in last_names:
            continue
        called = called_name(leaf)
        if called is not None and names.qualify(called[1]) in wanted:
            return called
    return None

