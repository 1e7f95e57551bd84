"""``from npu_bridge.npu_init import *``: the names the migrated code uses."""

import os  # noqa: F401  (the real module's star import binds os and tf too)

import tensorflow as tf
from tensorflow.core.protobuf import config_pb2
from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig

from npu_bridge.estimator import npu_ops, npu_unary_ops  # noqa: F401
from npu_bridge.estimator.npu import npu_scope, npu_strategy, util  # noqa: F401
from npu_bridge.estimator.npu.npu_config import NPURunConfig  # noqa: F401
from npu_bridge.estimator.npu.npu_hook import (  # noqa: F401
    NPUBroadcastGlobalVariablesCallback,
    NPUBroadcastGlobalVariablesHook,
    NPUCheckpointSaverHook,
    NPUOutputTensorHook,
)
from npu_bridge.estimator.npu.npu_loss_scale_manager import (  # noqa: F401
    ExponentialUpdateLossScaleManager,
    FixedLossScaleManager,
)
from npu_bridge.estimator.npu.npu_loss_scale_optimizer import NPULossScaleOptimizer  # noqa: F401
from npu_bridge.estimator.npu.npu_optimizer import NPUDistributedOptimizer, NPUOptimizer  # noqa: F401
from npu_bridge.hccl import hccl_ops  # noqa: F401
from npu_bridge.hccl.api import (  # noqa: F401
    get_local_rank_id,
    get_local_rank_size,
    get_rank_id,
    get_rank_size,
)


def _npu_config(config):
    config.allow_soft_placement = True
    config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
    config.graph_options.optimizer_options.global_jit_level = config_pb2.OptimizerOptions.OFF
    return config


def npu_session_config_init(session_config=None):
    """``session_config`` (or a new ConfigProto) with the NpuOptimizer, remapping and memory
    optimization off (the real bridge switches the latter off inside its estimator)."""
    if not isinstance(session_config, config_pb2.ConfigProto):
        session_config = config_pb2.ConfigProto()
    rewrite = session_config.graph_options.rewrite_options
    if not any(c.name == "NpuOptimizer" for c in rewrite.custom_optimizers):
        rewrite.custom_optimizers.add().name = "NpuOptimizer"
    rewrite.memory_optimization = RewriterConfig.OFF
    return _npu_config(session_config)


def npu_config_proto(config_proto=None):
    """As the real bridge: soft placement, remapping and XLA off; and the NpuOptimizer."""
    return npu_session_config_init(config_proto)


def npu_run_config_init(run_config=None):
    """``run_config`` (or a new RunConfig) whose session config is the NPU's."""
    if run_config is None:
        run_config = NPURunConfig()
    session_config = run_config.__dict__.get("_session_config")
    run_config.__dict__["_session_config"] = npu_session_config_init(session_config)
    return run_config


def npu_hooks_append(hooks_list=None):
    hooks = list(hooks_list) if isinstance(hooks_list, (list, tuple)) else []
    hooks.append(NPUBroadcastGlobalVariablesHook(0, int(os.getenv("RANK_ID", "0"))))
    return hooks


def npu_callbacks_append(callbacks_list=None):
    callbacks = list(callbacks_list) if isinstance(callbacks_list, (list, tuple)) else []
    callbacks.append(NPUBroadcastGlobalVariablesCallback(0))
    return callbacks


def npu_distributed_optimizer_wrapper(optimizer):
    """One device: the optimizer as it is."""
    return optimizer


def npu_graph_options(graph_options=None):
    if not isinstance(graph_options, config_pb2.GraphOptions):
        graph_options = config_pb2.GraphOptions()
    graph_options.optimizer_options.global_jit_level = config_pb2.OptimizerOptions.OFF
    return graph_options


def npu_optimizer_options(optimizer_options=None):
    if not isinstance(optimizer_options, config_pb2.OptimizerOptions):
        optimizer_options = config_pb2.OptimizerOptions()
    optimizer_options.global_jit_level = config_pb2.OptimizerOptions.OFF
    return optimizer_options


def set_keras_session_npu_config(config=None):
    session = tf.Session(config=npu_session_config_init(config))
    tf.keras.backend.set_session(session)
    return session


def npu_keras_sess(config=None):
    return set_keras_session_npu_config(config)


def npu_clear_session(config=None):
    tf.keras.backend.clear_session()
    return set_keras_session_npu_config(config)


def init_resource(config=None):
    session = tf.Session(config=npu_session_config_init(config))
    return session, tf.no_op(name="npu_shutdown")


def shutdown_resource(sess, npu_shutdown):
    sess.run(npu_shutdown)


def close_session(sess):
    sess.close()


def get_npu_rank_id():
    return util.get_value("npu_rank_id", 0)


def get_npu_local_rank_id():
    return util.get_value("npu_local_rank_id", 0)


def get_npu_rank_size():
    return util.get_value("npu_rank_size", 1)


def get_npu_local_rank_size():
    return util.get_value("npu_local_rank_size", 1)
