"""An emulation of Huawei's ``npu_bridge`` (TF Adapter) on CPU TensorFlow, for
``npu-codemod verify`` only: importable in a verify run's processes, never installed.

Every name the migration writes exists here and computes what the NPU would on one device:
``npu_ops.dropout`` is ``tf.nn.dropout`` with keep_prob semantics (the same ops, so seeded
runs match), ``npu_unary_ops.gelu`` the tanh approximation, the config helpers add the
``NpuOptimizer`` and switch remapping and memory optimization off, collectives are those of
one device (rank 0 of 1). The NPU's constraints are checked by the launcher, not here.
"""
