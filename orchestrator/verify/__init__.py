"""``npu-codemod verify``: prove a migration by running it, before and after, on CPU.

export (``git archive`` of the base and of the migration branch into scratch folders) ->
settings (the repository's ``[tool.npu-codemod.verify]``, the repo list's ``verify=``, the
command line) -> sandbox (the command under the launcher: ``runtime/``'s ``sitecustomize``
and ``npu_bridge`` emulation, on CPU TensorFlow, in a stripped environment) -> compare (one
verdict) -> records (``RepoResult.verify``, then every report).
"""
