"""Started by every Python process of a verify run (the launcher puts this folder first on
``PYTHONPATH``): TensorFlow answers TF 1.x names, runs deterministically, and each session is
watched (see ``_npu_codemod_verify``). The environment's own ``sitecustomize``, if any, still
runs after this one."""

import _npu_codemod_verify

_npu_codemod_verify.install()
_npu_codemod_verify.chain_sitecustomize(__file__)
