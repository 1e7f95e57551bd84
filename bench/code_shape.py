"""The shape of a repository's TensorFlow code, as ``bench/README.md`` compares real code with
the corpora: how long its files are and how much of its top-level definitions uses ``tf``.

    python bench/code_shape.py DIR...    # folders of git repositories, or repositories

Files are the non-test ones (``file_kinds.is_test_file``) that import TensorFlow
(``names.IMPORTS_TF``) and parse.
"""

from __future__ import annotations

import ast
import re
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Iterable, Iterator

from npu_codemod.codemods.file_kinds import is_test_file
from npu_codemod.codemods.names import IMPORTS_TF

_TF = re.compile(r"\btf\.")
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def code_shape(files: Iterable[tuple[str, str]]) -> dict[str, float]:
    """Of the non-test TF files among ``(path, text)``: their count, median lines, the shares
    under 200 and at least 1,000 lines, top-level definitions per file, and the share of those
    definitions' lines (decorators included) in definitions that spell ``tf.``."""
    lines: list[int] = []
    definitions = def_lines = tf_lines = 0
    for path, text in files:
        if is_test_file(path) or not IMPORTS_TF.search(text):
            continue
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        lines.append(text.count("\n"))
        rows = text.splitlines()
        for node in tree.body:
            if isinstance(node, _DEFINITIONS):
                start = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
                size = (node.end_lineno or node.lineno) - start + 1
                definitions += 1
                def_lines += size
                tf_lines += size if _TF.search("\n".join(rows[start - 1:node.end_lineno])) else 0
    count = max(len(lines), 1)
    return {"files": len(lines), "median_lines": statistics.median(lines) if lines else 0,
            "under_200": sum(n < 200 for n in lines) / count,
            "at_least_1000": sum(n >= 1000 for n in lines) / count,
            "definitions_per_file": definitions / count, "tf_definition_lines": tf_lines / max(def_lines, 1)}


def repository_files(root: Path) -> Iterator[tuple[str, str]]:
    """``(path, text)`` of the ``.py`` files git tracks in ``root`` (unreadable ones left out)."""
    listed = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "*.py"], capture_output=True,
                            text=True, check=True).stdout
    for path in filter(None, listed.split("\0")):
        try:
            yield path, (root / path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue


def main(argv: list[str]) -> int:
    roots = [Path(arg) for arg in argv]
    repos = [path for root in roots for path in ([root] if (root / ".git").exists()
                                                  else sorted(root.iterdir())) if (path / ".git").exists()]
    shape = code_shape(item for repo in repos for item in repository_files(repo))
    print(", ".join(f"{key} {value:.3g}" for key, value in shape.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
