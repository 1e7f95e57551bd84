"""Files that are not sess.run training code, whatever rules could find in them.

- **Test files** (by path, :func:`is_test_file`; test helpers such as ``test_utils.py`` and
  ``*_test_utils.py`` included): reference code that runs on CPU. The run
  leaves them out and counts them as skipped; ``--include-tests`` migrates them too.
- **Eager-mode files** (by their calls, :func:`eager_call`): a file that enables eager
  execution has no graph for ``sess.run``, and Ascend's API list marks eager execution
  unsupported. No rule rewrites it; one file-level finding says why.
- **Notebooks** (``.ipynb``, :func:`notebook_uses_tensorflow`): never migrated; one that uses
  TensorFlow gets one file-level finding (:data:`NOTEBOOK`).
- **Symlinks**: never followed (their target is a file of this repository, listed itself, or
  of another one); one file-level finding each (:data:`SYMLINK`).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import PurePosixPath
from typing import Optional

from fissix import pytree

from .names import ImportNames, first_call

#: Folders whose files are test code, at any depth.
TEST_FOLDERS = frozenset({"test", "tests"})
#: Endings of test files and test helpers' names (``model_test.py``, ``estimator_test_utils.py``).
TEST_SUFFIXES = ("_test.py", "_test_utils.py", "_testing.py")
#: Test helpers' names (``test_utils.py`` already starts with ``test_``).
TEST_HELPERS = frozenset({"tests_utils.py", "testing_utils.py"})
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
NOTEBOOK = ("notebooks are not migrated: this notebook uses TensorFlow; move its training code "
            "into a .py file that npu-codemod can migrate, or port its cells by hand as the "
            "migration guide says")
#: An import of TensorFlow at the start of a line of code (``import tensorflow.compat.v1 as tf``),
#: or a notebook's own install or choice of it (``!pip install tensorflow==1.15``,
#: ``%tensorflow_version 1.x``).
_TF_IMPORT = re.compile(r"^[ \t]*(?:(?:import|from)[ \t]+tensorflow\b|[!%][ \t]*pip[ \t]+install\b"
                        r".*[ \t]tensorflow(?:-gpu)?(?:[=<>~ \t]|$)|%tensorflow_version\b)", re.MULTILINE)
#: The same inside a notebook's JSON text, when it is not valid JSON.
_TF_IMPORT_ANYWHERE = re.compile(r"(?:import|from)[ \t]+tensorflow\b")


@lru_cache(maxsize=4096)
def is_test_file(path: str) -> bool:
    """``test_*.py``, ``*_test.py``, ``conftest.py``, a test helper (:data:`TEST_HELPERS`,
    ``*_test_utils.py``, ``*_testing.py``), or any file under a ``test/`` or ``tests/``
    folder; ``path`` is relative to the repository (``/`` or ``\\`` separated)."""
    parts = PurePosixPath(path.replace("\\", "/")).parts
    if not parts:
        return False
    name = parts[-1]
    return name == "conftest.py" or (name.startswith("test_") and name.endswith(".py")) \
        or name.endswith(TEST_SUFFIXES) or name in TEST_HELPERS \
        or any(part in TEST_FOLDERS for part in parts[:-1])


def notebook_uses_tensorflow(data: bytes) -> bool:
    """Does the ``.ipynb`` notebook ``data`` import TensorFlow in a code cell? (A notebook
    that is not valid JSON: does its text import it anywhere?)"""
    text = data.decode("utf-8", "replace")
    try:
        notebook = json.loads(text)
    except ValueError:
        return bool(_TF_IMPORT_ANYWHERE.search(text))
    return any(_TF_IMPORT.search(code) for code in _code_cells(notebook))


def _code_cells(notebook: object) -> list[str]:
    """The source of each code cell of a parsed notebook (nbformat 4, or 3's worksheets)."""
    if not isinstance(notebook, dict):
        return []
    cells = list(notebook.get("cells") or [])
    for sheet in notebook.get("worksheets") or []:
        if isinstance(sheet, dict):
            cells += sheet.get("cells") or []
    sources = []
    for cell in cells:
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            source = cell.get("source", cell.get("input", ""))
            sources.append("".join(source) if isinstance(source, list) else str(source))
    return sources


def may_enable_eager(text: str) -> bool:
    """Cheap test on a file's text: could it call one of :data:`EAGER_CALLS`?"""
    return any(name in text for name in _EAGER_NAMES)


def eager_call(tree: pytree.Node, names: ImportNames) -> Optional[tuple[pytree.Node, str]]:
    """The first call in ``tree`` that enables eager execution, as ``(call, spelling)``."""
    return first_call(tree, names, EAGER_CALLS)
