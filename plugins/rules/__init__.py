"""Built-in migration rules, one package per rule pack (``sess_run/``: NPU001-NPU010).

A rule module imports only ``npu_codemod.api`` and its private ``npu_codemod.api._toolkit`` (shared
analyses, not public), the standard library and modules of its own pack
(``tests/test_rule_imports.py`` checks it).
"""
