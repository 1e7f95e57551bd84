"""The ``xla-gpu`` rule pack: XLA and GPU-only settings, which mean nothing on the NPU.

- ``npu051_xla_off``: NPU051, ``global_jit_level`` OFF, ``jit_scope(compile_ops=False)``,
  ``xla.compile`` reported;
- ``npu052_gpu_memory``: NPU052, memory growth and virtual devices removed;
- ``npu053_nccl_collectives``: NPU053, NCCL collectives reported;
- ``npu054_custom_op_library``: NPU054, custom operator libraries (CUDA kernels) reported;
- ``npu055_gpu_towers``: NPU055, multi-GPU tower loops and the GPU counts sizing them reported.
"""
