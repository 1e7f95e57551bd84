"""The ``estimator`` rule pack: Estimator, premade estimators and TPUEstimator on the NPU.

- ``npu011_estimator_run_config``: NPU011, every Estimator runs with ``npu_run_config_init``;
  its analysis hook gathers the repository's classes (Estimator subclasses in other files);
- ``npu012_tpu_estimator``: NPU012, TPUEstimator with the TPU switched off, TPU-only calls
  reported;
- ``npu013_run_config_summary``: NPU013, ``RunConfig`` without per-step summaries.
"""
