"""npu-codemod: migrate TensorFlow 1.x ``sess.run`` training repositories to Ascend NPUs in batch.

The code is spread over sibling packages, read top-down along the data flow:
``orchestrator`` (CLI, repo list, workspaces, git) -> ``plugins`` (hook specs and the
built-in rules) -> ``codemods`` (the Bowler engine and shared tree helpers) -> ``reports``.
"""

__version__ = "0.1.0"
