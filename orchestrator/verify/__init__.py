"""``npu-codemod verify``: prove a migration by running it, before and after, on CPU.

export (``git archive`` of the base and of the migration branch into scratch folders) ->
settings (the repository's ``[tool.npu-codemod.verify]``, the repo list's ``verify=``, the
command line) -> requirements (``--verify-requirements``: a cached environment) -> sandbox
(the command under the launcher: ``runtime/``'s ``sitecustomize``, ``tf.contrib`` and
``npu_bridge`` emulation, on CPU TensorFlow, with an allow-listed environment, in namespaces
where the platform allows) -> compare (one verdict, on evidence) -> records
(``RepoResult.verify``, masked, then every report).
"""
