"""Started by every Python process of a verify run (the launcher puts this folder first on
``PYTHONPATH``): TensorFlow answers TF 1.x names, runs deterministically, and each session is
watched (see ``_npu_codemod_verify``). The environment's own ``sitecustomize``, if any, still
runs after this one."""

from _npu_codemod_verify import start

start.install()
start.chain_sitecustomize(__file__)
