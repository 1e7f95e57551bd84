"""The sess-run pack: NPU001-NPU010, a TF 1.x ``sess.run`` training script made ready for
Ascend NPUs as the migration guide (``rules-sess-run.md``) lays it out.

One plugin module per rule (``npu0NN_<name>.py``); the ``_``-prefixed modules are the pack's
own analyses (session configs and the functions that return them, config flow, datasets, the
GELU formula, session lifetimes and the functions that return sessions). Like every rule
module, they import only :mod:`npu_codemod.api`, the packs' private ``_toolkit``, the standard
library and each other.
"""
