"""``NPURunConfig``: a ``RunConfig`` that also takes the NPU's own options (ignored here).

TensorFlow 2.16 and later have no ``tf.estimator``: there the config only holds its values.
"""

import tensorflow as tf

_RUN_CONFIG_ARGS = ("model_dir", "tf_random_seed", "save_summary_steps", "save_checkpoints_steps",
                    "save_checkpoints_secs", "session_config", "keep_checkpoint_max",
                    "keep_checkpoint_every_n_hours", "log_step_count_steps")
_ESTIMATOR = getattr(tf, "estimator", None)
_BASE = _ESTIMATOR.RunConfig if _ESTIMATOR is not None else object


class NPURunConfig(_BASE):
    def __init__(self, iterations_per_loop=1, **kwargs):
        from npu_bridge.npu_init import npu_session_config_init

        known = {key: value for key, value in kwargs.items() if key in _RUN_CONFIG_ARGS}
        known["session_config"] = npu_session_config_init(known.get("session_config"))
        if _BASE is object:
            self.__dict__.update({f"_{key}": value for key, value in known.items()})
        else:
            super().__init__(**known)
        self.iterations_per_loop = iterations_per_loop
