"""The verify launcher's runtime, inside the process of the repository's command.

It never imports TensorFlow itself: the first ``import tensorflow`` of the command is caught
(:mod:`.tf1`), finished, and then TensorFlow is switched to TF 1.x graph behaviour, made
deterministic and its sessions watched (:mod:`.probe`). What the process computed and which
NPU constraints it broke are written to ``$NPU_CODEMOD_VERIFY_RECORD/record-<pid>.json``
when it exits or when it has run ``$NPU_CODEMOD_VERIFY_STEPS`` training steps.

Only the standard library is imported here: this runs in every Python process of the run.
"""
