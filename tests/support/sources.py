"""Every Python source the suite has at hand, for tests that compare two readings of code:
each file of the corpora, the sample projects and the example plugin, and each multi-line
string of the tests that mentions TensorFlow or Horovod (the golden cases' sources, before and
after), by where it comes from."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from npu_codemod.codemods.source import decode_source

ROOT = Path(__file__).resolve().parents[2]


def python_sources() -> dict[str, str]:
    """Where it comes from -> the source text (see the module's doc)."""
    found = {}
    for folder in ("tests/corpus", "tests/sample_projects", "examples"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            found[str(path.relative_to(ROOT))] = decode_source(path.read_bytes()).text
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                    "\n" in node.value and ("tensorflow" in node.value or "horovod" in node.value):
                found[f"{path.name}:{node.lineno}"] = textwrap.dedent(node.value)
    return found
