"""Python imports this at start-up in every process a ``calls_hook`` test starts (the folder is
on ``PYTHONPATH`` then, see :mod:`support.hooks`): the process records the npu-codemod hooks it
calls into the test's log, from the moment it imports the plugin manager (no import sooner)."""

import os

if os.environ.get("NPU_CODEMOD_TEST_HOOK_LOG"):
    import hook_log

    hook_log.install_on_import(os.environ["NPU_CODEMOD_TEST_HOOK_LOG"])
