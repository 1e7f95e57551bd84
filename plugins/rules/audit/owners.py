"""Which rule of the project migrates each API that Ascend migrates: the one owner table.

Every API Ascend's list marks ``supported-after-migration`` or ``trains-after-migration`` has an
owner here (a test checks the table against the list both ways). An owner that acts **at the
API's own site** covers a site when one of its rules reported that line; one that acts
**elsewhere** (``tf.ConfigProto`` is configured through the session that uses it) covers every
site whenever one of its rules is enabled. A site no enabled owner covered is an NPU100 finding:
that is how the project finds its own misses. Owners name rule ids whether or not the rule is
installed yet: one that is not counts as disabled.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Owner:
    rules: tuple[str, ...]
    at_site: bool = True  # False: covers the API wherever one of ``rules`` is enabled


#: With none of the ``distributed`` pack's Horovod rules (``HOROVOD_RULES``) enabled, every
#: Horovod site NPU100 reports names the opt-in.
HOROVOD_OPT_IN = "npu-codemod migrates this with `--rules default,distributed`"
SESSION_CONFIG = Owner(("NPU007",))
ESTIMATOR = Owner(("NPU011",))
MIXED_PRECISION_POLICY = Owner(("NPU033",))
XLA = Owner(("NPU051",))
GPU_MEMORY = Owner(("NPU052",))
STRATEGY = Owner(("NPU026",))

OWNERS: dict[str, Owner] = {
    # sess-run
    "tf.Session": SESSION_CONFIG,
    "tf.InteractiveSession": SESSION_CONFIG,
    "tf.train.MonitoredSession": SESSION_CONFIG,
    "tf.train.MonitoredTrainingSession": SESSION_CONFIG,
    "tf.ConfigProto": Owner(("NPU007",), at_site=False),  # through the session that uses it
    "tf.nn.dropout": Owner(("NPU004",)),
    "tf.data.Dataset": Owner(("NPU002",), at_site=False),  # at the dataset's batch calls
    "tf.device": Owner(("NPU008",), at_site=False),  # repository-wide soft placement
    "tf.DeviceSpec": Owner(("NPU008",), at_site=False),
    "tf.config.set_soft_device_placement": Owner(("NPU008",)),
    "tf.config.optimizer.set_experimental_options": Owner(("NPU009",)),  # grappler rewrites
    # estimator
    **{f"tf.estimator.{name}": ESTIMATOR for name in (
        "Estimator", "BaselineClassifier", "BaselineEstimator", "BaselineRegressor",
        "BoostedTreesClassifier", "BoostedTreesEstimator", "BoostedTreesRegressor",
        "DNNClassifier", "DNNEstimator", "DNNRegressor", "DNNLinearCombinedClassifier",
        "DNNLinearCombinedEstimator", "DNNLinearCombinedRegressor", "LinearClassifier",
        "LinearEstimator", "LinearRegressor")},
    "tf.estimator.EstimatorSpec": Owner(("NPU011",), at_site=False),
    "tf.estimator.tpu.TPUEstimator": Owner(("NPU011", "NPU012")),
    "tf.estimator.tpu.TPUEstimatorSpec": Owner(("NPU012",), at_site=False),
    "tf.estimator.tpu.TPUConfig": Owner(("NPU012",), at_site=False),  # TPUEstimator takes it
    "tf.estimator.tpu.InputPipelineConfig": Owner(("NPU012",), at_site=False),
    "tf.estimator.RunConfig": Owner(("NPU013",)),
    "tf.estimator.tpu.RunConfig": Owner(("NPU013",)),
    # distributed
    "hvd.init": Owner(("NPU021",)),
    **{f"hvd.{name}": Owner(("NPU022",)) for name in ("rank", "local_rank", "size", "local_size")},
    "hvd.DistributedOptimizer": Owner(("NPU023",)),
    "hvd.BroadcastGlobalVariablesHook": Owner(("NPU024",)),
    "hvd.callbacks.BroadcastGlobalVariablesCallback": Owner(("NPU024",)),
    "tf.distribute.MirroredStrategy": STRATEGY,
    "tf.distribute.experimental.MultiWorkerMirroredStrategy": STRATEGY,
    "tf.distribute.experimental.CentralStorageStrategy": STRATEGY,
    # mixed-precision
    "tf.train.experimental.MixedPrecisionLossScaleOptimizer": Owner(("NPU031",)),
    "tf.train.experimental.LossScale": Owner(("NPU032",)),
    "tf.train.experimental.DynamicLossScale": Owner(("NPU032",)),
    **{f"tf.keras.mixed_precision.experimental.{name}": MIXED_PRECISION_POLICY
       for name in ("LossScaleOptimizer", "Policy", "global_policy", "set_policy")},
    # xla-gpu
    "tf.xla.experimental.jit_scope": XLA,
    "tf.GraphOptions": XLA,
    "tf.OptimizerOptions": XLA,
    **{f"tf.config.experimental.{name}": GPU_MEMORY for name in (
        "set_memory_growth", "set_virtual_device_configuration", "VirtualDeviceConfiguration")},
}
