"""Which rule of the project migrates each API that Ascend migrates: the one owner table.

Every API Ascend's TF 1.15 list marks ``supported-after-migration`` or ``trains-after-migration``
has an owner here (a test checks the table against the list both ways). An owner that acts **at
the API's own site** covers a site when one of its rules reported that line; one that acts
**elsewhere** (``tf.ConfigProto`` is configured through the session that uses it) covers every
site whenever one of its rules is enabled. A site no enabled owner covered is a finding of the
audit (NPU100; NPU071 in ``tf2-compat`` files, where the same TF1 rules run): that is how the
project finds its own misses. Owners name rule ids whether or not the rule is installed yet: one
that is not counts as disabled.

A few ``tf.contrib`` APIs the list marks ``deprecated`` are migrated all the same
(:data:`CONTRIB_OWNERS`: contrib's loss scaling is npu_bridge's under other module names): they
are judged as owned APIs, and a use no enabled owner covered is told the NPU form, not to find
a public TF 1.15 equivalent first (the public optimizer takes a ``LossScale``, not a manager).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from npu_codemod.codemods.api_sites import ApiStatus, advice
from npu_codemod.codemods.distribution import HOROVOD_RULES
from npu_codemod.codemods.findings import Finding
from npu_codemod.codemods.qualified import ReferenceSite


@dataclass(frozen=True)
class Owner:
    rules: tuple[str, ...]
    at_site: bool = True  # False: covers the API wherever one of ``rules`` is enabled
    npu: str = ""  # a deprecated API's NPU form, which a use no owner covered is told


#: With none of the ``distributed`` pack's Horovod rules (``HOROVOD_RULES``) enabled, every
#: Horovod site NPU100 reports names the opt-in.
HOROVOD_OPT_IN = "npu-codemod migrates this with `--rules default,distributed`"
#: A use of an API Ascend migrates whose owning rules all were off: the message names the opt-in.
OWNER_OFF = ("Ascend migrates {api}, and npu-codemod's {rules} does, but it was off in this run: "
             "turn it on (--rules default,{ids}) or migrate it as the guide says")
#: A use of a Horovod API whose owning rule was off: the distributed pack's Horovod rules go
#: together (NPU022 alone gives the NPU's ranks to a job Horovod still starts), so the pack is
#: what to turn on, never the one rule.
HOROVOD_OWNER_OFF = ("Ascend migrates {api}, and npu-codemod's {rules} does, but it was off in this "
                     "run: turn on the whole distributed pack, whose Horovod rules go together (the "
                     "NPU's ranks while Horovod still starts the job would be half a migration), or "
                     "migrate it as the guide says")
#: A use of a deprecated API a rule migrates (:data:`CONTRIB_OWNERS`) no enabled owner covered.
CONTRIB_MISS = ("npu-codemod's {rules} migrates {api} to npu_bridge's {npu}, but not this use: "
                "replace it with {npu} by hand")
CONTRIB_OFF = ("npu-codemod's {rules} migrates {api} to npu_bridge's {npu}, but it was off in this "
               "run: turn it on (--rules default,{ids}) or replace it with {npu} by hand")
#: How the TF 2.6 list spells the TF 1.x API that compat code runs (``tf.compat.v1.Session``).
COMPAT_V1 = "tf.compat.v1."
SESSION_CONFIG = Owner(("NPU007",))
ESTIMATOR = Owner(("NPU011",))
MIXED_PRECISION_POLICY = Owner(("NPU033",))
XLA = Owner(("NPU051",))
GPU_MEMORY = Owner(("NPU052",))
STRATEGY = Owner(("NPU026",))
#: NPU032's, or NPU031's where it is written in the optimizer's call (migrated with it).
LOSS_SCALE = Owner(("NPU032", "NPU031"))

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
    "tf.train.experimental.LossScale": LOSS_SCALE,
    "tf.train.experimental.DynamicLossScale": LOSS_SCALE,
    **{f"tf.keras.mixed_precision.experimental.{name}": MIXED_PRECISION_POLICY
       for name in ("LossScaleOptimizer", "Policy", "global_policy", "set_policy")},
    # xla-gpu
    "tf.xla.experimental.jit_scope": XLA,
    "tf.GraphOptions": XLA,
    "tf.OptimizerOptions": XLA,
    **{f"tf.config.experimental.{name}": GPU_MEMORY for name in (
        "set_memory_growth", "set_virtual_device_configuration", "VirtualDeviceConfiguration")},
}

#: Deprecated ``tf.contrib`` APIs a rule migrates (the list's ``deprecated`` status stays):
#: contrib's ``LossScaleOptimizer(opt, loss_scale_manager)`` and its managers take what
#: npu_bridge's take.
CONTRIB_OWNERS: dict[str, Owner] = {
    "tf.contrib.mixed_precision.LossScaleOptimizer": Owner(("NPU031",), npu="NPULossScaleOptimizer"),
    **{f"tf.contrib.mixed_precision.{name}": Owner(("NPU032", "NPU031"), npu=name)
       for name in ("FixedLossScaleManager", "ExponentialUpdateLossScaleManager")},
}


def owner_of(listed: str, status: str) -> Optional[Owner]:
    """The owner of the listed API ``listed`` with support ``status``: every API Ascend migrates
    has one, and the deprecated ones of :data:`CONTRIB_OWNERS`."""
    if status in ApiStatus.MIGRATED:
        return OWNERS.get(listed)
    return CONTRIB_OWNERS.get(listed) if status == ApiStatus.DEPRECATED else None


#: The TF 2.x rules that migrate, in eager code (``tf2`` and ``tf-neutral`` files, where the TF1
#: rules do not run), an API the TF 2.6 list marks migrated in its ``tf.compat.v1`` spelling only:
#: ``tf.compat.v1.data.Dataset`` is ``tf.data.Dataset`` (``supported``) once TF 2.x runs it
#: eagerly, and NPU064 migrates its batches there as NPU002 does in TF 1.x code. Without it a file
#: that reaches TF through ``import tensorflow.compat.v1 as tf`` alone had a site left that the
#: same code spelled ``import tensorflow as tf`` has not.
EAGER_OWNERS: dict[str, Owner] = {
    "tf.data.Dataset": Owner(("NPU064",), at_site=False),  # at the dataset's batch calls
}


def eager_owner(listed: str) -> Optional[Owner]:
    """The owner of an API as the TF 2.6 list names it (``tf.compat.v1.data.Dataset``) in eager
    TF 2.x code (:data:`EAGER_OWNERS`, read as its ``tf.X``), or None."""
    head, compat, rest = listed.partition(COMPAT_V1)
    return EAGER_OWNERS.get("tf." + rest) if compat and not head else None


def compat_owner(listed: str) -> Optional[Owner]:
    """The owner of an API as the TF 2.6 list names it, in compat code (``tf2-compat`` files,
    where the TF1 rules run): ``tf.compat.v1.ConfigProto`` is the ``tf.ConfigProto`` the table
    names; a name without ``compat.v1`` (``tf.config.set_soft_device_placement``) is itself."""
    head, compat, rest = listed.partition(COMPAT_V1)
    return OWNERS.get("tf." + rest if compat and not head else listed)


def owner_verdict(owner: Owner, api: str, status: str, site: ReferenceSite,
                  on_line: Sequence[Finding], enabled: frozenset[str]) -> tuple[bool, str]:
    """Whether ``owner`` covers a use of ``api`` (its ``status`` one Ascend migrates) at
    ``site``, given the other rules' findings ``on_line`` (its line or statement) and the
    ``enabled`` rules, and the miss to report ("" for none). At the site: one of its rules
    reported the line, or any rule the site itself (that rule's instruction stands); a type
    use (a base class: the owner acts where the subclass is constructed) while it is enabled.
    Elsewhere: while it is enabled. A miss names the opt-in while the owner is off."""
    same_call = [f for f in on_line if site.column <= f.column <= site.end_column]
    if owner.at_site:
        reported = [f for f in on_line if f.rule_id in owner.rules] or same_call
        if reported:
            return _migrated(reported), ""
        if site.type_use and enabled.intersection(owner.rules):
            return True, ""
    elif enabled.intersection(owner.rules):
        return True, ""
    elif same_call:
        return _migrated(same_call), ""
    if not enabled.intersection(owner.rules):
        off = CONTRIB_OFF if owner.npu else HOROVOD_OWNER_OFF if set(owner.rules) <= set(HOROVOD_RULES) \
            else OWNER_OFF
        return False, off.format(api=api, rules=" or ".join(owner.rules), ids=",".join(owner.rules),
                                 npu=owner.npu)
    if owner.npu:
        return False, CONTRIB_MISS.format(api=api, rules=" or ".join(owner.rules), npu=owner.npu)
    return False, advice(status, api)


def _migrated(findings: Sequence[Finding]) -> bool:
    return any(finding.status == "migrated" for finding in findings)
