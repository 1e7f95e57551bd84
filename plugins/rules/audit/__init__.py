"""The ``audit`` rule pack: NPU100 api-support, every TensorFlow and Horovod API a file uses
checked against Ascend's support list.

- ``npu100_api_support``: the rule (the plugin module the manager registers).

Which rule of the project migrates each API Ascend migrates (the owner table) is the toolkit's
too (``codemods/api_owners.py``): NPU071 reads it in ``tf2-compat`` files, where the TF1 rules run.

The list itself (the project's copy of Ascend's published list, ``codemods/api_support.csv``,
and ``python -m npu_codemod.codemods.regenerate_support_list path/to/csv`` that rebuilds it) is
the toolkit's, read through ``npu_codemod.api.support_list``: NPU025 reports Horovod's APIs
with their status in it too.
"""
