"""Files that are not sess.run training code, whatever rules could find in them.

- **Test files** (by path, :func:`is_test_file`): reference code that runs on CPU. The run
  leaves them out and counts them as skipped; ``--include-tests`` migrates them too.
- **Eager-mode files** (by their calls, :func:`eager_call`): a file that enables eager
  execution has no graph for ``sess.run``, and Ascend's API list marks eager execution
  unsupported. No rule rewrites it; one file-level finding says why.
- **Symlinks**: never followed (their target is a file of this repository, listed itself, or
  of another one); one file-level finding each (:data:`SYMLINK`).
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Optional

from fissix import pytree

from .tfnames import ImportNames, first_call

#: Folders whose files are test code, at any depth.
TEST_FOLDERS = frozenset({"test", "tests"})
#: Calls that switch a file to eager execution (canonical names: every TF spelling).
EAGER_CALLS = frozenset({
    "tensorflow.enable_eager_execution",
    "tensorflow.enable_v2_behavior",
    "tensorflow.contrib.eager.enable_eager_execution",
})
_EAGER_NAMES = frozenset(name.rpartition(".")[2] for name in EAGER_CALLS)

EAGER = ("eager execution is enabled ({call}): this file is not sess.run code and no rule "
         "rewrote it; Ascend's API list marks eager execution unsupported: port the file to "
         "graph mode (tf.Session and sess.run) or Keras by hand")
SYMLINK = "symlink, not followed: migrate its target in the repository that holds it"


def is_test_file(path: str) -> bool:
    """``test_*.py``, ``*_test.py``, ``conftest.py``, or any file under a ``test/`` or
    ``tests/`` folder; ``path`` is relative to the repository (``/`` or ``\\`` separated)."""
    parts = PurePosixPath(path.replace("\\", "/")).parts
    if not parts:
        return False
    name = parts[-1]
    return name == "conftest.py" or (name.startswith("test_") and name.endswith(".py")) \
        or name.endswith("_test.py") or any(part in TEST_FOLDERS for part in parts[:-1])


def may_enable_eager(text: str) -> bool:
    """Cheap test on a file's text: could it call one of :data:`EAGER_CALLS`?"""
    return any(name in text for name in _EAGER_NAMES)


def eager_call(tree: pytree.Node, names: ImportNames) -> Optional[tuple[pytree.Node, str]]:
    """The first call in ``tree`` that enables eager execution, as ``(call, spelling)``."""
    return first_call(tree, names, EAGER_CALLS)
