"""The ``audit`` rule pack: NPU100 api-support, every TensorFlow and Horovod API a file uses
checked against Ascend's support list.

- ``npu100_api_support``: the rule (the plugin module the manager registers);
- ``support``: the list as the rule reads it, from ``api_support.csv`` (the project's copy of
  Ascend's published list, provenance in its header);
- ``owners``: which rule of the project migrates each API Ascend migrates;
- ``regenerate``: ``python -m npu_codemod.plugins.rules.audit.regenerate path/to/csv`` rebuilds
  ``api_support.csv`` from the published CSV.
"""
