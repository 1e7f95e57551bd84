"""Which TensorFlow a file is written for: TF 1.x code, TF 2.x code, or TF 1.x code on TF 2.x.

The decision is made per file, from *signals* (API uses found by name resolution: aliases,
``from`` imports, internal modules) and one repository-level fact, the *runtime* (``1``, ``2``
or undetermined: see ``tf_runtime``), as ``spec/rules-tf2.md`` ("Detecting TF 2.x files")
says:

- **C1** compat switch: ``disable_v2_behavior()``/``disable_eager_execution()`` of
  ``tensorflow.compat.v1`` in any spelling, or ``npu_device.compat.enable_v1()``;
- **C2** a graph API through ``tensorflow.compat.v1`` (``tf.compat.v1.Session``...), or an
  Estimator program's API in any spelling (``tf.estimator.Estimator``: graph code on TF 2.x too,
  :attr:`Signals.estimator`); a compat name that runs in eager TF 2.x as well
  (``variable_scope``, ``get_variable``...: :data:`EAGER_SAFE`) only beside another graph signal,
  a ``get_default_graph()`` that only overrides gradients never (``codemods/graph_overrides``);
- neither, graph code an eager program never runs in graph mode (``mode_checks.mode_chosen_spans``):
  a C1/C2 use in a branch taken only when TensorFlow does not execute eagerly (an ``if``, a
  conditional expression, or what ``not tf.executing_eagerly() and ...`` evaluates), a C1 switch in a
  function's branch on a version its caller passes (``if tf_version == 1:``);
- neither, a C use that only looks at the class (``tf.compat.v1.train.Optimizer.__dict__``,
  ``inspect.getmembers(...)``, ``isinstance(opt, tf.compat.v1.train.Optimizer)``:
  ``codemods/introspection``): no graph code runs;
- neither T2 nor E, a TF 2.x name or idiom in code a version test guards
  (``mode_checks.version_guarded_spans``: ``if is_tfv2() and isinstance(opt,
  tf.optimizers.Optimizer):``): the module adapts to the version, it is no eager TF 2.x code;
- no T1, a TF 1.x-only name in the branch a version test sends TensorFlow 1 to
  (``mode_checks.tf1_branch_spans``: the ``else`` of ``if tf.__version__ >= "2.0.0":``, the
  code after its ``return``); no T1/T2, a name in a ``try`` that falls back on ``except
  AttributeError`` (``mode_checks.attribute_fallback_spans``: ``try: tf.log(x) except
  AttributeError: tf.math.log(x)``): the mirror of the rule above;
- **T1** a TF 1.x-only API (in Ascend's TF 1.15 list, absent from its TF 2.6 list; any
  ``tf.contrib``); **T2** a TF 2.x-only API (a curated list, :data:`TF2_ONLY`), or the TF 2.x
  adapter's ``NpuLossScaleOptimizer`` (it stands for the Keras ``LossScaleOptimizer`` NPU065
  replaced, a T2 API);
- the TF 2.x adapter's other calls (``npu_device`` but its ``compat``: the device init,
  ``npu.distribute.*``...), what the ``tf2`` packs write, are no signal of the file's own code
  (:attr:`Signals.adapter`): in a TF 2.x or undetermined repository a file's kind and the
  repository's facts are the same before and after a run. Where the runtime is TF 1.x or not
  given, a file that uses the adapter was ported to TF Adapter 2.x by hand: it counts as T2 for
  its kind (:meth:`Signals.kind_t2`), never for the runtime;
- **E** a TF 2.x idiom (weak): ``tf.function``, ``tf.GradientTape``, ``strategy.run(...)``,
  Keras ``compile``/``fit`` on a model the file builds (in a file with no C/T1 signal),
  ``import tensorflow.compat.v2``, ``enable_v2_behavior()``. A model a function of the
  repository returns (``model = small_net()``, ``small_net`` in another module) is known only to
  the repository's facts: the file's signals keep its training and calls
  (:attr:`Signals.training`), and ``tf_model_idioms`` decides.

:func:`file_kind` turns a file's :class:`Signals` and the runtime into one of :data:`KINDS`;
:func:`treatment` says which rules run on it. Signals are read with ``ast`` (the module's tree
is shared with the analysis hooks: ``modules.module_ast``), never with the rewrite parser.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from importlib import resources
from typing import FrozenSet, Optional

from .graph_overrides import override_only_graphs
from .introspection import introspected_arguments, introspects
from .mode_checks import (
    Span,
    attribute_fallback_spans,
    mode_chosen_spans,
    tf1_branch_spans,
    version_guarded_spans,
    within,
)
from .modules import ModuleIndex, module_ast, module_index
from .names import ast_dotted_name, module_parts, public_name
from .support_list import support_rows
from .text_search import AnyOf

#: The kinds of file (``run.json`` counts files per kind per repository).
NON_TF, TF1, TF2, TF2_COMPAT, TF_NEUTRAL, CONFLICT = (
    "non-tf", "tf1", "tf2", "tf2-compat", "tf-neutral", "conflict")
KINDS = (TF1, TF2, TF2_COMPAT, TF_NEUTRAL, CONFLICT, NON_TF)
#: What the rules of the TF 1.x packs run on unless a rule says otherwise
#: (:attr:`Rule.file_kinds`): TF 1.x code, and TF 1.x code on TF 2.x (the compat chapter of
#: the TF 2.6 guide: "porting points basically the same as TF1").
TF1_CODE = frozenset({TF1, TF2_COMPAT})
#: TF 2.x code: the files of a TF 2.x repository that use TF 2.x or neither version's signs.
TF2_NATIVE = frozenset({TF2, TF_NEUTRAL})

#: Repository runtimes, as the fact ``tf-runtime:<value>`` says (``tf_runtime``).
RUNTIME_TF1, RUNTIME_TF2, RUNTIME_UNKNOWN = "1", "2", "undetermined"
RUNTIME_NOT_GIVEN = ""
RUNTIME_FACT = "tf-runtime:"
#: The runtime of a folder with its own TensorFlow pins: ``tf-runtime@<folder>/:<value>``
#: (``tf_scopes``).
SCOPE_FACT = "tf-runtime@"
#: Why a folder (``""``: the repository) runs the runtime it runs, for the findings that name
#: it: ``tf-runtime-why@<folder>|<phrase>``, the phrase completing "in a repository ..."
#: (``pinned to TF 2.x (tools/requirements.txt: tensorflow-cpu==2.9.3)``; ``tf_runtime``).
WHY_FACT = "tf-runtime-why@"
#: Facts of the repository-wide analysis: some file has a T1 / a T2 signal, or only TF 2.x
#: idioms (its kind then depends on the runtime).
CODE_T1, CODE_T2, CODE_E_ONLY = "tf-code:T1", "tf-code:T2", "tf-code:E-only"
#: A file of ``tf.compat.v1`` code (C1/C2, no T signal): TF 1.x code where the version is not
#: decided, ``tf2-compat`` on TF 2.x: its kind, and the adapter it gets, depend on the runtime.
CODE_COMPAT = "tf-code:C"

#: C1: the compat switches (the part after ``tensorflow.compat.v1.`` or ``tensorflow.``).
COMPAT_SWITCHES = frozenset({"disable_v2_behavior", "disable_eager_execution"})
NPU_DEVICE = "npu_device"
#: TensorFlow's internal modules (``from tensorflow.python.saved_model import tag_constants``):
#: TF 2.x keeps TF 1.x's, so a name reached through one is no T1 signal (though its public name,
#: ``tf.saved_model.tag_constants``, is TF 1.x-only); one that is TF 2.x-only stays T2.
INTERNAL = "tensorflow.python."
#: Star imports that are not of the repository's own modules (``_star_bound_tf``): the
#: adapters' ``npu_init`` bind ``tf`` themselves (to ``tensorflow.compat.v1`` in TF Adapter 2.x).
STAR_NOT_OWN = frozenset({"tensorflow", "tensorflow_estimator", "npu_device", "npu_bridge", "keras"})
NPU_COMPAT_SWITCH = "npu_device.compat.enable_v1"
#: The adapter's loss-scale optimizer (any module path): T2, as the class NPU065 replaced.
NPU_LOSS_SCALE = ("npu_device.train.optimizer.", ".NpuLossScaleOptimizer")
#: C2: graph APIs reached through ``tensorflow.compat.v1`` (exact names, then prefixes).
COMPAT_GRAPH_APIS = frozenset({
    "Session", "InteractiveSession", "placeholder", "ConfigProto", "get_variable",
    "variable_scope", "global_variables_initializer", "train.Saver",
    "train.MonitoredTrainingSession", "get_default_graph", "add_to_collection",
    "keras.backend.get_session", "keras.backend.set_session",
})
COMPAT_GRAPH_PREFIXES = ("estimator.", "layers.")
#: C2 through TensorFlow's own name: an Estimator program's API (``tf.estimator.Estimator``,
#: ``RunConfig``, ``EstimatorSpec``, ``TrainSpec``, ``train_and_evaluate``...). TF 2.x keeps
#: ``tf.estimator`` (up to 2.15) and an Estimator builds and runs graphs, so on TF 2.x the
#: program ports through the compat route (NPU062's header, the estimator pack) like one that
#: spells ``tf.compat.v1.estimator``: the TF 2.6 list's "unsupported" is for eager TF 2.x code.
#: ``ModeKeys`` are constants eager Keras code reads too: no signal.
ESTIMATOR_GRAPH_PREFIX = "estimator."
ESTIMATOR_CONSTANTS = frozenset({"ModeKeys", "mode_keys"})
#: The signal of such a use (:attr:`Signals.estimator`).
ESTIMATOR = "estimator"
#: C2 names that TF 2.x code uses for its GPU settings alone (``config = ConfigProto();
#: config.gpu_options.allow_growth = True; session = InteractiveSession(config=config)`` at the
#: top of eager scripts): C2 only in a file that has another C2 use or runs a session; else the
#: file stays eager TF 2.x code (the compat header's ``enable_v1()`` would switch it to graph mode).
#: A ``ConfigProto`` that feeds an Estimator (``RunConfig(session_config=config)``) is graph
#: code: the Estimator is the other C2 use (:data:`ESTIMATOR_GRAPH_PREFIX`).
SESSION_CONFIG = frozenset({"Session", "InteractiveSession", "ConfigProto"})
#: C2 names (after ``tensorflow.compat.v1.``) that run in eager TF 2.x as they are: a
#: ``variable_scope``/``get_variable`` in a Keras layer's ``build`` or a ``tf.function`` (eager
#: TF 2.x creates and names the variable), ``global_variables_initializer()`` (a no-op when
#: executing eagerly) in a helper that runs a session its caller passes. They need no graph mode,
#: so, spelled ``tf.compat.v1.X`` by a file of TF 2.x names (:func:`_borrowed`), they are C2
#: only in a file with another graph signal (C1, another C2 use, an Estimator program): else one
#: ``variable_scope`` in an eager layer made its module a graph file and every program importing
#: it a mixed one (TensorLayer 2.x: every example refused).
EAGER_SAFE = frozenset({"variable_scope", "get_variable", "global_variables_initializer"})
#: A C2 name that is no signal at all where its graph only overrides gradients (a ``tf.function``
#: traces that into its own graph: ``codemods/graph_overrides``); read otherwise it is C2.
DEFAULT_GRAPH = "get_default_graph"
COMPAT_V1 = "tensorflow.compat.v1."
#: T2: TF 2.x-only APIs, each in Ascend's TF 2.6 list and absent from its TF 1.15 list, and
#: checked against TensorFlow's r1.15 API reference (``tf.nest.*`` and
#: ``tf.keras.optimizers.schedules.*``, which the spec proposed, exist in TF 1.15 and are left
#: out). An entry ending in ``.`` is a prefix.
TF2_ONLY = (
    "keras.mixed_precision.LossScaleOptimizer", "keras.mixed_precision.Policy",
    "keras.mixed_precision.loss_scale_optimizer.LossScaleOptimizer",
    "keras.mixed_precision.set_global_policy", "keras.mixed_precision.global_policy",
    "config.list_physical_devices", "config.set_visible_devices",
    "config.run_functions_eagerly", "random.set_seed", "random.Generator",
    "distribute.MultiWorkerMirroredStrategy", "distribute.TPUStrategy",
    "keras.layers.experimental.preprocessing.", "summary.create_file_writer",
    "experimental.numpy.", "data.experimental.AutoShardPolicy",
    # TF 1.x's tf.losses/tf.metrics hold functions only, and it has no tf.optimizers (none of
    # these is in tf.compat.v1; the classes are in Ascend's TF 2.6 list, not its TF 1.15 one)
    "optimizers.",
    "losses.BinaryCrossentropy", "losses.CategoricalCrossentropy", "losses.CategoricalHinge",
    "losses.CosineSimilarity", "losses.Hinge", "losses.Huber", "losses.KLD", "losses.KLDivergence",
    "losses.LogCosh", "losses.Loss", "losses.MAE", "losses.MAPE", "losses.MSE", "losses.MSLE",
    "losses.MeanAbsoluteError", "losses.MeanAbsolutePercentageError", "losses.MeanSquaredError",
    "losses.MeanSquaredLogarithmicError", "losses.Poisson", "losses.SparseCategoricalCrossentropy",
    "losses.SquaredHinge",
    "metrics.AUC", "metrics.Accuracy", "metrics.BinaryAccuracy", "metrics.BinaryCrossentropy",
    "metrics.CategoricalAccuracy", "metrics.CategoricalCrossentropy", "metrics.CategoricalHinge",
    "metrics.CosineSimilarity", "metrics.FalseNegatives", "metrics.FalsePositives",
    "metrics.Hinge", "metrics.KLD", "metrics.KLDivergence", "metrics.LogCoshError", "metrics.MAE",
    "metrics.MAPE", "metrics.MSE", "metrics.MSLE", "metrics.Mean", "metrics.MeanAbsoluteError",
    "metrics.MeanAbsolutePercentageError", "metrics.MeanIoU", "metrics.MeanMetricWrapper",
    "metrics.MeanRelativeError", "metrics.MeanSquaredError", "metrics.MeanSquaredLogarithmicError",
    "metrics.MeanTensor", "metrics.Metric", "metrics.Poisson", "metrics.Precision",
    "metrics.PrecisionAtRecall", "metrics.Recall", "metrics.RecallAtPrecision",
    "metrics.RootMeanSquaredError", "metrics.SensitivityAtSpecificity",
    "metrics.SparseCategoricalAccuracy", "metrics.SparseCategoricalCrossentropy",
    "metrics.SparseTopKCategoricalAccuracy", "metrics.SpecificityAtSensitivity",
    "metrics.SquaredHinge", "metrics.Sum", "metrics.TopKCategoricalAccuracy",
    "metrics.TrueNegatives", "metrics.TruePositives",
)
#: More of :data:`TF2_ONLY`, found in real TF 2.x repositories' files that were classed
#: ``tf-neutral`` (issue #31) and their modules' siblings: each in TF 2.15's ``tf``, absent from
#: its ``tf.compat.v1`` (the TF 1.15 API's proxy) and from Ascend's TF 1.15 list
#: (``tests/test_tf2_detection.py`` checks all three). Some are newer than TF 2.6
#: (``tf.keras.optimizers.AdamW``...): TF 2.x code all the same.
TF2_ONLY_FROM_USES = tuple(
    f"{module}.{name}" for module, names in (
        ("losses", "binary_crossentropy categorical_crossentropy sparse_categorical_crossentropy "
                   "categorical_hinge cosine_similarity hinge huber kl_divergence kld "
                   "kullback_leibler_divergence log_cosh logcosh mae mape mean_absolute_error "
                   "mean_absolute_percentage_error mean_squared_logarithmic_error mse msle poisson "
                   "squared_hinge BinaryFocalCrossentropy CategoricalFocalCrossentropy "
                   "binary_focal_crossentropy categorical_focal_crossentropy"),
        ("metrics", "binary_accuracy categorical_accuracy sparse_categorical_accuracy "
                    "top_k_categorical_accuracy sparse_top_k_categorical_accuracy binary_crossentropy "
                    "categorical_crossentropy sparse_categorical_crossentropy hinge kl_divergence kld "
                    "kullback_leibler_divergence log_cosh logcosh mae mape "
                    "mean_absolute_percentage_error mean_squared_logarithmic_error mse msle poisson "
                    "squared_hinge BinaryIoU F1Score FBetaScore IoU OneHotIoU OneHotMeanIoU R2Score"),
        ("initializers", "Constant GlorotNormal GlorotUniform HeNormal HeUniform Identity Initializer "
                         "LecunNormal LecunUniform Ones Orthogonal RandomNormal RandomUniform "
                         "TruncatedNormal VarianceScaling Zeros"),
        ("summary", "SummaryWriter create_noop_writer flush graph record_if should_record_summaries "
                    "trace_export trace_off trace_on write"),
        ("keras.losses", "Reduction huber"),
        ("keras.initializers", "GlorotNormal GlorotUniform HeNormal HeUniform LecunNormal LecunUniform"),
        ("keras.utils", "image_dataset_from_directory text_dataset_from_directory "
                        "timeseries_dataset_from_array audio_dataset_from_directory set_random_seed "
                        "split_dataset"),
        ("keras.preprocessing", "image_dataset_from_directory text_dataset_from_directory "
                                "timeseries_dataset_from_array"),
        ("keras.layers", "IntegerLookup StringLookup TextVectorization RandomContrast RandomCrop "
                         "RandomFlip RandomHeight RandomRotation RandomTranslation RandomWidth RandomZoom "
                         "RandomBrightness GroupNormalization UnitNormalization"),
        ("keras.optimizers", "AdamW Adafactor Lion"), ("keras.callbacks", "BackupAndRestore"),
        ("keras.activations", "gelu"), ("nn", "gelu RNNCellDropoutWrapper RNNCellResidualWrapper"),
        ("image", "resize_with_pad stateless_random_brightness stateless_random_contrast "
                  "stateless_random_crop stateless_random_flip_left_right stateless_random_flip_up_down "
                  "stateless_random_hue stateless_random_jpeg_quality stateless_random_saturation"),
        ("lite.TFLiteConverter", "from_keras_model from_concrete_functions"),
        ("distribute", "InputOptions DistributedDataset DistributedIterator DistributedValues "
                       "ParameterServerStrategy"),
        ("data.experimental", "save load"), ("saved_model", "LoadOptions"),
    ) for name in names.split())
#: More of :data:`TF2_ONLY`: ``tf.data.experimental``'s constants promoted into ``tf.data`` by
#: TF 2.3 (the cardinalities) and TF 2.4 (``AUTOTUNE``: "tf.data.experimental.AUTOTUNE is now
#: available in the core API as tf.data.AUTOTUNE", TF 2.4's RELEASE.md), after TF 1.15; TF 2
#: exports them to its ``tf.compat.v1`` too, so the check of :data:`TF2_ONLY_FROM_USES` cannot
#: vouch for them (``tests/test_tf2_detection.py`` checks they are in TF 2's ``tf.data`` and in
#: no TF 1.15 list). ``tf.data.AUTOTUNE`` is the commonest of all: a TF 2.x data loader
#: (``AUTO = tf.data.AUTOTUNE``) with no other TF 2.x name had been ``tf-neutral``.
TF2_ONLY_PROMOTED = ("data.AUTOTUNE", "data.INFINITE_CARDINALITY", "data.UNKNOWN_CARDINALITY")
#: :data:`TF2_ONLY` as exact names, and its prefixes (entries ending in ``.``).
_TF2_NAMES = frozenset(name for name in TF2_ONLY + TF2_ONLY_FROM_USES + TF2_ONLY_PROMOTED
                       if not name.endswith("."))
_TF2_PREFIXES = tuple(name for name in TF2_ONLY if name.endswith("."))
#: E: TF 2.x idioms through TensorFlow names.
TF2_IDIOMS = frozenset({"function", "GradientTape", "enable_v2_behavior"})
#: Keras model constructors (``tensorflow.`` less) whose ``compile``/``fit`` is an E signal.
KERAS_MODELS = ("keras.Model", "keras.Sequential", "keras.models.Model",
                "keras.models.Sequential", "keras.models.load_model")
KERAS_TRAINING = frozenset({"compile", "fit", "train_on_batch"})

MIXED = ("uses TF 1.x-only and TF 2.x-only APIs ({first}, {second}): no TensorFlow version runs "
         "this file as written; nothing was rewritten")
TF1_ON_TF2 = ("TF 1.x-only API {first} in a repository {why}: move it to "
              "tf.compat.v1 or to the TF 2.x API first; nothing was rewritten")
PYTHON2_ON_TF2 = ("Python 2 code in a repository {why}: TensorFlow 2 runs on Python 3 only; "
                  "port the file to Python 3 first; nothing was rewritten")
TF2_ON_TF1 = ("TF 2.x-only API {first} in a repository {why}: pin TensorFlow 2 or "
              "use the TF 1.x API; nothing was rewritten")
GRAPH_IN_EAGER = ("graph-mode compat.v1 API {first} in eager TF 2.x code ({second}): call "
                  "tf.compat.v1.disable_v2_behavior() or port it to TF 2.x; nothing was rewritten")
#: The tf2 pack's device init (NPU061): until it runs, a TF 2.x file gets :data:`TF2_CODE`.
TF2_ENTRY_RULE = "NPU061"
TF2_CODE = ("TF 2.x code: migrate with the TF 2.x adapter (npu_device: import npu_device as "
            "npu; npu.open().as_default() at the top of the entry script, then the TF 2.6 "
            "porting steps); the TF 1.x rules do not rewrite it")


@dataclass(frozen=True)
class Use:
    """One signal: where it is and how the file spells it."""

    line: int
    column: int
    spelled: str


@dataclass(frozen=True)
class Signals:
    """The first use of each signal in one file (None: none), and whether it imports TF."""

    imports_tf: bool = False
    c1: Optional[Use] = None
    c2: Optional[Use] = None
    t1: Optional[Use] = None
    t2: Optional[Use] = None
    e: Optional[Use] = None
    #: The first use of the TF 2.x adapter (``npu.open()``, ``npu.distribute.all_reduce``...):
    #: what the ``tf2`` packs write, so no signal of the file's own code (see :func:`kind_t2`).
    adapter: Optional[Use] = None
    #: In a file with no C/T signal that builds no Keras model itself: its first Keras
    #: ``compile``/``fit``/``train_on_batch``, and the calls of its that may be of the
    #: repository's functions (``nets.small_net``, ``train.get_model``), module-qualified. The
    #: training is E when one of them returns a Keras model (``tf_model_idioms``: it takes the
    #: repository's ``model-function:`` facts, which one file alone does not have).
    training: Optional[Use] = None
    model_calls: tuple[str, ...] = ()
    #: The first use of an Estimator program's API through TensorFlow's own name
    #: (:data:`ESTIMATOR_GRAPH_PREFIX`): C2 (:attr:`c2` holds it when the file has no other),
    #: but neither its own evidence for the undetermined finding (:attr:`compat_v1`) nor a
    #: conflict beside TF 2.x idioms (an Estimator's ``model_fn`` may use ``tf.function``: it
    #: traces into the Estimator's graph).
    estimator: Optional[Use] = None

    @property
    def compat_v1(self) -> bool:
        """Does the file spell ``tf.compat.v1`` graph code (C1, or a C2 use that is no
        ``tf.estimator`` name)? Only then is the runtime's choice its own question (the
        undetermined finding): a ``tf.estimator`` program is TF 1.x code unless TF 2.x runs."""
        return bool(self.c1) or (self.c2 is not None and self.c2 != self.estimator)

    @property
    def graph_in_eager(self) -> bool:
        """Graph-mode compat.v1 API (C2, no ``tf.estimator`` name) beside TF 2.x idioms (E) and no
        compat switch (C1): a ``conflict`` wherever the runtime is not TF 1.x (:func:`file_kind`).
        Nothing rewrites such a file, so it switches no program to graph mode (``program_graph``)."""
        return bool(self.c2 and self.c2 != self.estimator and self.e and not self.c1)

    @property
    def e_only(self) -> bool:
        return self.e is not None and not (self.c1 or self.c2 or self.t1 or self.t2)

    def facts(self) -> frozenset[str]:
        """The repository-wide facts this file contributes (:data:`CODE_T1`...): from the
        file's own code, never from the adapter (a rerun decides the runtime as the first run)."""
        found = {CODE_T1} if self.t1 else set()
        found |= {CODE_T2} if self.t2 else set()
        found |= {CODE_E_ONLY} if self.e_only else set()
        found |= {CODE_COMPAT} if self.compat_v1 and not (self.t1 or self.t2) else set()
        return frozenset(found)

    def kind_t2(self, runtime: str) -> Optional[Use]:
        """The T2 evidence for the file's kind: its own T2 use; where the runtime is TF 1.x or
        not given (no repository analysis), else its first use of the adapter (a file ported to
        TF Adapter 2.x; the tool writes the adapter into no ``tf-neutral`` file there, so kinds
        stay). Where it is TF 2.x or undetermined a ``tf-neutral`` file gets the tf2 rules, so
        the adapter they write must not change its kind."""
        return self.t2 or (self.adapter if runtime in (RUNTIME_TF1, RUNTIME_NOT_GIVEN) else None)


@dataclass(frozen=True)
class Kind:
    """A file's kind, and for a ``conflict`` where and why."""

    kind: str
    message: str = ""
    at: Optional[Use] = None


def runtime_of(facts: FrozenSet[str], path: str = "") -> str:
    """The runtime of the file ``path`` from the repository's facts: its own when it takes its
    importers' (``tf_shared_modules``), else the runtime of the deepest folder with its own pins
    that holds it (``tf_scopes``), else the repository's;
    :data:`RUNTIME_NOT_GIVEN` when they have none (the engine called without a repository's
    analysis: a library caller, a rule's golden test): files with only TF 2.x idioms are then
    TF 1.x code, as before the TF 2.x pack. ``run``, ``scan`` and ``check`` always decide it
    (``tf_runtime``)."""
    found, scopes = _runtimes(facts)
    depth = -1 if found == RUNTIME_NOT_GIVEN else 0
    for folder, value in scopes:
        if _holds(folder, path) and len(folder) > depth:
            found, depth = value, len(folder)
    return found


def _holds(folder: str, path: str) -> bool:
    """Is ``path`` under ``folder`` (``a/b/``; ``""``: the top), or ``folder`` itself when it is
    a file's path (a module that takes its importers' runtime: ``tf_shared_modules``)?"""
    return path.startswith(folder) if not folder or folder.endswith("/") else path == folder


def runtime_why(facts: FrozenSet[str], path: str = "") -> str:
    """Why the file ``path`` runs :func:`runtime_of`: the :data:`WHY_FACT` phrase of the
    deepest folder with one that holds it (the folders with one are those with a runtime of
    their own), or "" (none given: the engine called without a repository's analysis)."""
    found, depth = "", -1
    for folder, phrase in _whys(facts):
        if _holds(folder, path) and len(folder) > depth:
            found, depth = phrase, len(folder)
    return found


@lru_cache(maxsize=2)
def _whys(facts: FrozenSet[str]) -> tuple[tuple[str, str], ...]:
    found = []
    for fact in facts:
        if fact.startswith(WHY_FACT):
            folder, _, phrase = fact[len(WHY_FACT):].partition("|")
            found.append((folder, phrase))
    return tuple(sorted(found))


def runs_tf2_somewhere(facts: FrozenSet[str]) -> bool:
    """Does the repository with these facts, or a folder of it with its own pins, run TF 2.x?
    Only then may a file of it be ``tf2-compat`` (:func:`file_kind`)."""
    found, scopes = _runtimes(facts)
    return RUNTIME_TF2 in (found, *(value for _, value in scopes))


@lru_cache(maxsize=2)
def _runtimes(facts: FrozenSet[str]) -> tuple[str, tuple[tuple[str, str], ...]]:
    """The repository's runtime and each pinned folder's (folder, runtime), read once per set of
    facts (a frozenset keeps its hash): the engine asks :func:`runtime_of` twice per file, and
    a large repository has thousands of facts."""
    found = next((fact[len(RUNTIME_FACT):] for fact in sorted(facts) if fact.startswith(RUNTIME_FACT)),
                 RUNTIME_NOT_GIVEN)
    scopes = []
    for fact in facts:
        if fact.startswith(SCOPE_FACT):
            folder, _, value = fact[len(SCOPE_FACT):].rpartition(":")
            scopes.append((folder, value))
    return found, tuple(sorted(scopes))


def file_kind(signals: Signals, runtime: str, why: str = "") -> Kind:
    """The kind of a file with ``signals`` in a repository whose runtime is ``runtime`` (``why``:
    :func:`runtime_why`, named by a conflict with the runtime)."""
    if not signals.imports_tf:
        return Kind(NON_TF)
    conflict = _conflict(signals, runtime, why)
    if conflict is not None:
        return conflict
    if signals.c1 or signals.c2:
        return Kind(TF2_COMPAT if runtime == RUNTIME_TF2 else TF1)
    if signals.t1:
        return Kind(TF1)
    if signals.kind_t2(runtime):
        return Kind(TF2)
    if signals.e:
        return Kind(TF2 if runtime in (RUNTIME_TF2, RUNTIME_UNKNOWN) else TF1)
    return Kind(TF_NEUTRAL)


def _conflict(signals: Signals, runtime: str, why: str = "") -> Optional[Kind]:
    t1, t2 = signals.t1, signals.kind_t2(runtime)
    if t1 and t2:
        first, second = sorted((t1, t2), key=lambda use: (use.line, use.column))
        return Kind(CONFLICT, MIXED.format(first=first.spelled, second=second.spelled), second)
    if t2 and runtime == RUNTIME_TF1:
        return Kind(CONFLICT, TF2_ON_TF1.format(first=t2.spelled, why=why or "pinned to TF 1.x"), t2)
    if t1 and runtime == RUNTIME_TF2:
        text = PYTHON2_ON_TF2 if t1.spelled == "Python 2 code" else TF1_ON_TF2
        return Kind(CONFLICT, text.format(first=t1.spelled, why=why or "pinned to TF 2.x"), t1)
    if signals.graph_in_eager and signals.c2 and signals.e and runtime != RUNTIME_TF1:  # TF 1.x: graph mode
        return Kind(CONFLICT, GRAPH_IN_EAGER.format(first=signals.c2.spelled,
                                                    second=signals.e.spelled), signals.c2)
    return None


def treatment(kind: str, runtime: str, tf1_side: bool = False) -> str:
    """Which rules run on a file of ``kind``: a ``tf-neutral`` file is treated as TF 1.x code
    where the repository runs TF 1.x, and where its version is undetermined when the import
    graph puts the file beside TF 1.x code (``tf1_side``: ``tf_programs.tf1_neutral_files``),
    else as itself (the ``tf2`` rules that need no TF 2.x evidence opt in to it); a ``non-tf``
    one (rules on other modules: Horovod alone) as TF 1.x code where the repository runs TF 1.x
    or, its version undetermined, where the import graph does not put it in TF 2.x code
    (``tf1_side`` false: ``tf_programs.tf2_non_tf_files``), else as itself: no TF 1.x rule
    (NPU100's TF 1.15 list) audits a TF 2.x program's file (``spec/rules-tf2.md``: ``non-tf``
    files get nothing)."""
    if kind == NON_TF:
        tf1 = runtime in (RUNTIME_TF1, RUNTIME_NOT_GIVEN) or (runtime == RUNTIME_UNKNOWN and tf1_side)
        return TF1 if tf1 else NON_TF
    if kind == TF_NEUTRAL and (runtime in (RUNTIME_TF1, RUNTIME_NOT_GIVEN)
                               or (runtime == RUNTIME_UNKNOWN and tf1_side)):
        return TF1
    return kind


def signals_of(text: str, path: str = "") -> Signals:
    """The signals of the module ``text`` (for a file ``ast`` cannot read, T1 where it is
    Python 2 code: :func:`python2_use`; else none). Kept per file: the repository's analysis works them out
    for its facts, and the engine finds them here for the file's kind (no second parse)."""
    key = (path, len(text), hash(text))
    found = _KNOWN.get(key)
    if found is None:
        if len(_KNOWN) >= _KNOWN_MAX:
            _KNOWN.clear()
        tree = module_ast(text)
        if tree is not None:
            found = _KNOWN[key] = _signals(tree, path)
        else:
            imports_tf = "tensorflow" in text
            found = _KNOWN[key] = Signals(imports_tf=imports_tf, t1=python2_use(text) if imports_tf else None)
    return found


#: What CPython says of Python 2 syntax only (a print or exec statement, ``except E, e:``,
#: ``0777``, a tuple parameter): other errors are no evidence of a version.
_PYTHON2_ERRORS = ("Missing parentheses in call to 'print'", "Missing parentheses in call to 'exec'",
                   "multiple exception types must be parenthesized", "leading zeros in decimal integer literals",
                   "Function parameters cannot be parenthesized")


def python2_use(text: str) -> Optional[Use]:
    """Where ``text`` is Python 2 code, as the first error ``ast`` meets says (a T1 signal:
    TensorFlow 2 runs on Python 3 only, so a Python 2 file of TensorFlow is TF 1.x code), or
    None for a text with no such error (not read otherwise: a file ``ast`` reads has none)."""
    try:
        ast.parse(text)
    except SyntaxError as error:
        if error.msg and error.msg.startswith(_PYTHON2_ERRORS):
            return Use(error.lineno or 1, max((error.offset or 1) - 1, 0), "Python 2 code")
    except (ValueError, RecursionError):
        return None
    return None


_KNOWN: dict[tuple[str, int, int], Signals] = {}
_KNOWN_MAX = 50_000


def _signals(tree: ast.Module, path: str) -> Signals:
    index = module_index(tree)
    imported = index.imported_names(path)
    bound = {local: target for local, target in imported.items()
             if _root(target) in ("tensorflow", "tensorflow_estimator", "npu_device")}
    found: dict[str, Use] = {}
    if any(target == "tensorflow.compat.v2" for target in bound.values()):
        found["e"] = Use(1, 0, "tensorflow.compat.v2")
    if "tf" not in imported and _star_bound_tf(tree, index):
        bound["tf"] = "tensorflow"
    weak: Optional[Use] = None  # a session-config C2 use (SESSION_CONFIG)
    eager_safe: Optional[Use] = None  # a C2 use that runs eagerly as well (EAGER_SAFE)
    adaptive = _AdaptiveCode(index)
    for node, spelled in _bound_names(index, bound):
        head = spelled.partition(".")[0]
        for end in _dots(spelled):
            full, signal = _raw_signal(bound[head] + spelled[len(head):end])
            if signal is None or adaptive.says_nothing(signal, node, spelled):
                continue  # most names: no record made
            use = Use(node.lineno, node.col_offset, spelled[:end])
            if signal == "c2" and full.rpartition(".")[2] in SESSION_CONFIG:
                weak = weak if weak and _before(weak, use) else use
            elif signal == "c2" and _borrowed(spelled[:end]) and full[len(COMPAT_V1):] in EAGER_SAFE:
                eager_safe = eager_safe if eager_safe and _before(eager_safe, use) else use
            elif signal and (signal not in found or _before(use, found[signal])):
                found[signal] = use
    if weak is not None and ("c2" in found or ESTIMATOR in found or _runs_a_session(index)):
        found["c2"] = found["c2"] if "c2" in found and _before(found["c2"], weak) else weak
    if eager_safe is not None and found.keys() & {"c1", "c2", ESTIMATOR}:
        found["c2"] = found["c2"] if "c2" in found and _before(found["c2"], eager_safe) else eager_safe
    graph = found.keys() & {"c1", "c2", ESTIMATOR}
    idiom, builds = _keras_idiom(index, bound) if "e" not in found else (None, False)
    if idiom is not None and builds and not graph and "t1" not in found:
        found["e"] = idiom  # Keras training is E only in a file with no C/T1 signal (the spec's)
    imports_tf = any(_root(target) in ("tensorflow", "tensorflow_estimator")
                     for target in bound.values())
    signals = Signals(imports_tf, found.get("c1"), found.get("c2") or found.get(ESTIMATOR), found.get("t1"),
                      found.get("t2"), found.get("e"), found.get("adapter"), estimator=found.get(ESTIMATOR))
    if idiom is None or builds or not imports_tf or graph or found.keys() & {"t1", "t2"}:
        return signals
    calls = _repository_calls(tree, index, imported, path)
    return replace(signals, training=idiom if calls else None, model_calls=calls)


class _AdaptiveCode:
    """Where a module's signals say nothing of how it runs, each part worked out on first need
    (``codemods/mode_checks``; most files ask none of it)."""

    def __init__(self, index: ModuleIndex) -> None:
        self.index = index

    def says_nothing(self, signal: str, node: ast.expr, spelled: str) -> bool:
        """Is the use ``node`` (spelled ``spelled``) of a name that is ``signal`` no signal:
        a C use that only looks at the class (``tf.compat.v1.train.Optimizer.__dict__``,
        ``isinstance(opt, tf.compat.v1.train.Optimizer)``: ``codemods/introspection``) or that
        an eager program never runs in graph mode (:meth:`_mode_chosen`); a T2/E use a version
        test guards; a T1 use in the branch a version test sends TensorFlow 1 to; a T1/T2 use
        in a ``try`` that falls back on ``except AttributeError``, or a C2 use there (the
        compat.v1 spelling of what TF 2.x moved: ``except AttributeError:
        tf.compat.v1.keras.backend.get_session()``)? Such a file adapts to the version or
        mode it is run in."""
        at = (node.lineno, node.col_offset)
        if signal in ("c1", "c2", ESTIMATOR):
            return introspects(spelled) or id(node) in self.introspected or self._mode_chosen(signal, at) \
                or (spelled.rpartition(".")[2] == DEFAULT_GRAPH and id(node) in self.overrides) \
                or (signal == "c2" and within(self.fallbacks, *at))
        if signal == "t1":
            return within(self.tf1_branches, *at) or within(self.fallbacks, *at)
        if signal in ("t2", "e"):
            return within(self.guarded, *at) or (signal == "t2" and within(self.fallbacks, *at))
        return False

    def _mode_chosen(self, signal: str, at: tuple[int, int]) -> bool:
        """Is the C1/C2 use at ``at`` in code an eager program never runs in graph mode: a
        branch taken only when TensorFlow does not execute eagerly (any C signal), or a
        function's branch on a version its caller passes (a C1 switch: ``if tf_version == 1:
        disable_v2_behavior()``)? It switches no eager program to graph mode."""
        graph, versions = self.chosen
        return within(graph, *at) or (signal == "c1" and within(versions, *at))

    @cached_property
    def overrides(self) -> frozenset[int]:
        return override_only_graphs(self.index)

    @cached_property
    def introspected(self) -> frozenset[int]:
        return introspected_arguments(self.index.nodes(ast.Call))

    @cached_property
    def chosen(self) -> tuple[tuple[Span, ...], tuple[Span, ...]]:
        return mode_chosen_spans(self.index)

    @cached_property
    def guarded(self) -> tuple[Span, ...]:
        return version_guarded_spans(self.index)

    @cached_property
    def tf1_branches(self) -> tuple[Span, ...]:
        return tf1_branch_spans(self.index)

    @cached_property
    def fallbacks(self) -> tuple[Span, ...]:
        return attribute_fallback_spans(self.index)


#: Text a Keras training call spells (the gate of :func:`keras_training_calls`, which parses):
#: the standard library's ``compile`` functions are not Keras' (as ``tf_programs.TRAINING_TEXT``).
_KERAS_TRAINING_TEXT = AnyOf(r"\.fit\(", r"\.train_on_batch\(",
                             r"\.compile\((?<!\bre\.compile\()(?<!\bregex\.compile\()"
                             r"(?<!\bpy_compile\.compile\()(?<!\bsre_compile\.compile\()")


def keras_training_calls(text: str, path: str) -> tuple[str, ...]:
    """For a module that imports no TensorFlow: when it makes a Keras ``compile``/``fit``/
    ``train_on_batch`` call, the calls of its that may be of the repository's functions
    (module-qualified, as :attr:`Signals.model_calls`), else none. A script that trains a model
    ``models.build()`` returns is a TF 2.x program's training code though it imports no
    TensorFlow itself (``tf_model_idioms`` decides from the repository's model facts)."""
    if not _KERAS_TRAINING_TEXT.found(text):
        return ()
    tree = module_ast(text)
    if tree is None:
        return ()
    index = module_index(tree)
    training, _ = _keras_idiom(index, {})
    if training is None:
        return ()
    return _repository_calls(tree, index, index.imported_names(path), path)


def _star_bound_tf(tree: ast.Module, index: ModuleIndex) -> bool:
    """Does the module read a ``tf`` it never binds itself, while it star-imports one of the
    repository's own modules (MusicTransformer's ``from custom.layers import *``, whose
    ``import tensorflow as tf`` the file's ``tf.GradientTape`` and ``tf.summary`` reach)? ``tf``
    is then TensorFlow's conventional alias: its uses are the file's signals."""
    own_star = any(isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names)
                   and _root(node.module or "") not in STAR_NOT_OWN for node in tree.body)
    if not own_star:
        return False
    names: list[ast.Name] = index.nodes(ast.Name)
    arguments: list[ast.arg] = index.nodes(ast.arg)
    return any(name.id == "tf" for name in names) and not any(arg.arg == "tf" for arg in arguments) \
        and not any(name.id == "tf" and not isinstance(name.ctx, ast.Load) for name in names)


def _runs_a_session(index: ModuleIndex) -> bool:
    """Does the module call ``run`` on a session (``sess.run``, ``self._session.run``)?"""
    calls: list[ast.Call] = index.nodes(ast.Call)
    for call in calls:
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr == "run":
            receiver = ast_dotted_name(func.value) or ""
            if "sess" in receiver.rpartition(".")[2].lower() or receiver.endswith("Session"):
                return True
    return False


def _bound_names(index: ModuleIndex, bound: dict[str, str]) -> list[tuple[ast.expr, str]]:
    """Each outermost dotted name (``tf.compat.v1.Session``, not its ``tf.compat``) and each
    bare name that starts with a name ``bound`` holds, with its spelling."""
    attributes: list[ast.Attribute] = index.nodes(ast.Attribute)
    inner = {id(node.value) for node in attributes if type(node.value) is ast.Attribute}
    found: list[tuple[ast.expr, str]] = []
    for node in attributes:
        if id(node) in inner:
            continue
        head = node.value
        while type(head) is ast.Attribute:
            head = head.value
        if type(head) is ast.Name and head.id in bound:  # spelled out only then (self.x.y: not)
            found.append((node, ast_dotted_name(node) or ""))
    names: list[ast.Name] = index.nodes(ast.Name)
    found += [(node, node.id) for node in names if node.id in bound]
    return found


@lru_cache(maxsize=16384)
def _dots(spelled: str) -> tuple[int, ...]:
    """The ends of each dotted prefix of ``spelled`` past its head (``tf.a.b``: ``tf.a``,
    ``tf.a.b``), or the name itself when it has no dot (the same names recur in every file)."""
    return (*[at for at, char in enumerate(spelled) if char == "."][1:], len(spelled))


def _before(use: Use, other: Use) -> bool:
    return (use.line, use.column) < (other.line, other.column)


def _root(dotted: str) -> str:
    return dotted.partition(".")[0]


@lru_cache(maxsize=16384)
def _borrowed(spelled: str) -> bool:
    """Is the compat name ``spelled`` borrowed by TF 2.x code, spelling ``compat.v1`` at the use
    (``tf.compat.v1.variable_scope`` under ``import tensorflow as tf``)? A file that binds the
    whole TF 1.x API (``import tensorflow.compat.v1 as tf``: ``tf.variable_scope``) is written
    against it: its scopes are C2 as before (an Estimator's input pipeline keeps the compat
    route's rules)."""
    return "compat.v1." in spelled


@lru_cache(maxsize=16384)
def _raw_signal(raw: str) -> tuple[str, Optional[str]]:
    """The public name of the full name ``raw`` (as the file binds it) and its signal (the same
    names recur in every file)."""
    full = public_name(raw)
    signal = _signal(full)
    if signal == "t1" and raw.startswith(INTERNAL):
        signal = None  # TF 2.x keeps TF 1.x's ``tensorflow.python`` modules
    return full, signal


@lru_cache(maxsize=8192)
def _signal(full: str) -> Optional[str]:
    """The signal (``c1``...) a use of the full name ``full`` is (``adapter``: the TF 2.x
    adapter, :attr:`Signals.adapter`), or None."""
    if full == NPU_COMPAT_SWITCH:
        return "c1"
    if full.startswith(NPU_LOSS_SCALE[0]) and full.endswith(NPU_LOSS_SCALE[1]):
        return "t2"  # stands for the Keras LossScaleOptimizer it replaced
    if full.startswith(NPU_DEVICE + ".") and not full.startswith(NPU_DEVICE + ".compat."):
        return "adapter"
    for prefix in ("tensorflow.compat.v1.", "tensorflow.compat.v2.", "tensorflow."):
        if full.startswith(prefix):
            return _member_signal(full[len(prefix):], prefix)
    return None


def _member_signal(member: str, prefix: str) -> Optional[str]:
    if member in COMPAT_SWITCHES and prefix != "tensorflow.compat.v2.":
        return "c1"
    if prefix == "tensorflow.compat.v1.":
        graph = member in COMPAT_GRAPH_APIS or member.startswith(COMPAT_GRAPH_PREFIXES) \
            or (member.startswith("train.") and member.endswith("Optimizer"))
        return "c2" if graph else None
    if member in TF2_IDIOMS:
        return "e"
    if member in _TF2_NAMES or member.startswith(_TF2_PREFIXES):
        # TF 1.15 has the whole TF 2.x API under tf.compat.v2: a use through it runs on both
        return "e" if prefix == "tensorflow.compat.v2." else "t2"
    if prefix == "tensorflow." and (member == "contrib" or member.startswith("contrib.")
                                    or "tf." + member in tf1_only_apis()):
        return "t1"
    if prefix == "tensorflow." and _estimator_program(member):
        return ESTIMATOR
    return None


def _estimator_program(member: str) -> bool:
    """Is ``tensorflow.<member>`` an Estimator program's API (:data:`ESTIMATOR_GRAPH_PREFIX`),
    not one of its constants?"""
    return member.startswith(ESTIMATOR_GRAPH_PREFIX) \
        and ESTIMATOR_CONSTANTS.isdisjoint(member.split("."))


def _keras_idiom(index: ModuleIndex, bound: dict[str, str]) -> tuple[Optional[Use], bool]:
    """The first ``model.fit(...)``/``compile``/``train_on_batch`` of the file, and whether
    the file builds a Keras model (a call of :data:`KERAS_MODELS` in any spelling): E when it
    does; or ``strategy.run(...)`` (E: as if it built one)."""
    builds = False
    calls: list[ast.Call] = index.nodes(ast.Call)
    training: Optional[Use] = None
    for call in calls:
        func = call.func
        if not isinstance(func, ast.Attribute):  # a name's call: a model maker only if it is bound
            builds = builds or (type(func) is ast.Name and func.id in bound and _is_model_call(func.id, bound))
            continue
        attr = func.attr  # the receiver's name is spelled out only for the methods asked about
        if attr == "run" or (attr in KERAS_TRAINING and training is None):
            receiver = ast_dotted_name(func.value) or ""
            if attr == "run" and "strategy" in receiver.rpartition(".")[2].lower():
                return Use(call.lineno, call.col_offset, f"{receiver}.run"), True
            if attr in KERAS_TRAINING:
                training = Use(call.lineno, call.col_offset, f"{receiver}.{attr}")
        # a model maker's public name ends as it is called (``public_name`` keeps the last part)
        builds = builds or (attr in _MODEL_LAST_NAMES and _is_model_call(ast_dotted_name(func), bound))
    return training, builds


_MODEL_LAST_NAMES = frozenset(model.rpartition(".")[2] for model in KERAS_MODELS)


def _is_model_call(name: Optional[str], bound: dict[str, str]) -> bool:
    head = name.partition(".")[0] if name else ""
    if not name or head not in bound:
        return False
    full = public_name(bound[head] + name[len(head):])
    return any(full == f"tensorflow.{model}" for model in KERAS_MODELS)


def _repository_calls(tree: ast.Module, index: ModuleIndex, imported: dict[str, str],
                      path: str) -> tuple[str, ...]:
    """The module's calls that may be of functions of its repository, module-qualified as the
    ``model-function:`` facts name them: through an import of no library (``nets.small_net``
    for ``from nets import small_net`` or ``import nets; nets.small_net()``), or of a function
    or class the module defines (``train.get_model``, which may call another module's; ``Net``,
    a subclass of ``tf.keras.Model``: the ``class:`` facts know it)."""
    module = ".".join(module_parts(path))
    local = {node.name for node in tree.body
             if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    found = set()
    calls: list[ast.Call] = index.nodes(ast.Call)
    for call in calls:
        spelled = ast_dotted_name(call.func)
        head, _, rest = (spelled or "").partition(".")
        if head in imported:
            target = imported[head] + (f".{rest}" if rest else "")
            if _root(target) not in _LIBRARIES:
                found.add(target)
        elif head in local and not rest:
            found.add(f"{module}.{head}" if module else head)
    return tuple(sorted(found))


#: Modules whose functions are none of a repository's: TensorFlow's, the adapters', NumPy's
#: (the standard library's are kept: a script's folder comes first on ``sys.path``, so the
#: repository's ``code/`` or ``test/`` is what ``import code`` finds).
_LIBRARIES = frozenset({"tensorflow", "tensorflow_estimator", "keras", "npu_bridge", "npu_device",
                        "numpy", "__future__"})


#: Parts of the raw list difference that TensorFlow 2.6 has all the same (Ascend's TF 2.6 list
#: leaves out most of ``tf.keras.backend``, the TPU estimators, ``tf.test.get_temp_dir``...):
#: never T1, except the names of :data:`TF1_ONLY_KEPT`.
NOT_TF1_ONLY = ("tf.keras.", "tf.estimator.", "tf.test.", "tf.lite.")
TF1_ONLY_KEPT = frozenset({"tf.keras.backend.get_session", "tf.keras.backend.set_session",
                           "tf.estimator.inputs.numpy_input_fn",
                           "tf.estimator.inputs.pandas_input_fn"})


@lru_cache(maxsize=1)
def tf1_only_apis() -> frozenset[str]:
    """T1: the ``tf.*`` names of Ascend's TF 1.15 list (``compat`` aliases left out) that its
    TF 2.6 list does not have, less :data:`NOT_TF1_ONLY` (curated: the difference over-claims)."""
    raw = support_names("api_support.csv") - support_names("api_support_tf2.csv")
    return frozenset(name for name in raw
                     if name in TF1_ONLY_KEPT or not name.startswith(NOT_TF1_ONLY))


@lru_cache(maxsize=2)
def support_names(data_file: str) -> frozenset[str]:
    """The ``tf.*`` names (no ``tf.compat.*``) of one of the shipped support lists."""
    text = resources.files(__package__).joinpath(data_file).read_text(encoding="utf-8")
    return frozenset(api for api, _ in support_rows(text)
                     if api.startswith("tf.") and not api.startswith("tf.compat."))
