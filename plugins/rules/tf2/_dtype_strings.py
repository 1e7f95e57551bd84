"""The ``"float64"``-style dtype strings a TF 2.x file passes to TensorFlow (NPU071).

The TF 2.6 tool's restrictions: ``float64`` and the complex dtypes do not run on the NPU. A
string names one where a call takes it: ``dtype="float64"`` of any call but those of a host
array library (``np.asarray(x, dtype="float64")``, an ``astype``: memory on the host, no
NPU op), and a positional string of a TensorFlow call (``tf.keras.backend.set_floatx("float64")``,
``tf.cast(x, "complex64")``). Comments and docstrings name none.
"""

from __future__ import annotations

import ast
import re
from typing import Iterator, Optional

from npu_codemod.api import FileContext
from npu_codemod.api._toolkit import ast_dotted_name, file_imported_names, module_ast, module_index

#: The dtypes the NPU does not run, as strings.
UNSUPPORTED = frozenset({"float64", "double", "complex64", "complex128"})
#: Libraries whose arrays live in host memory: their ``dtype=`` is no NPU dtype.
HOST_LIBRARIES = frozenset({"numpy", "pandas", "scipy", "sklearn", "torch", "jax", "cupy", "h5py",
                            "pyarrow", "polars", "cv2", "PIL"})
#: Methods of host arrays only (numpy's, pandas'): no TensorFlow object has them.
HOST_METHODS = frozenset({"astype", "to_numpy"})
_ANY = re.compile(r"(['\"])(?:float64|double|complex64|complex128)\1")
_KEYWORD = re.compile(r"dtype\s*=\s*(['\"])(?:float64|double|complex64|complex128)\1")


def dtype_strings(ctx: FileContext) -> Iterator[tuple[int, int, str]]:
    """(line, column, spelling) of each unsupported dtype string the file passes, in order."""
    if not _ANY.search(ctx.original):
        return
    tree = module_ast(ctx.original)
    if tree is None:
        return
    imported = file_imported_names(ctx)
    lines = ctx.original.splitlines()
    found: list[tuple[int, int, Optional[ast.keyword]]] = []
    for call in module_index(tree).nodes(ast.Call):
        root = _root(call.func)
        if root is not None and imported.get(root, "").partition(".")[0] in HOST_LIBRARIES \
                or isinstance(call.func, ast.Attribute) and call.func.attr in HOST_METHODS:
            continue
        found += [(keyword.value.lineno, keyword.value.col_offset, keyword) for keyword in call.keywords
                  if keyword.arg == "dtype" and _unsupported(keyword.value)]
        if _is_tensorflow(call.func, ctx):
            found += [(argument.lineno, argument.col_offset, None) for argument in call.args
                      if _unsupported(argument)]
    for line, column, keyword in sorted(found, key=lambda each: (each[0], each[1])):
        yield _spelled(lines, line, column, keyword)


def _spelled(lines: list[str], line: int, column: int, keyword: Optional[ast.keyword]) -> tuple[int, int, str]:
    text = lines[line - 1] if line <= len(lines) else ""
    if keyword is not None and keyword.lineno == line:
        match = _KEYWORD.match(text, keyword.col_offset)
        if match is not None:
            return line, keyword.col_offset, match.group(0)
    match = _ANY.match(text, column)
    return line, column, match.group(0) if match is not None else '"float64"'


def _unsupported(value: ast.expr) -> bool:
    return isinstance(value, ast.Constant) and isinstance(value.value, str) and value.value in UNSUPPORTED


def _root(function: ast.expr) -> Optional[str]:
    while isinstance(function, ast.Attribute):
        function = function.value
    return function.id if isinstance(function, ast.Name) else None


def _is_tensorflow(function: ast.expr, ctx: FileContext) -> bool:
    dotted = ast_dotted_name(function)
    return dotted is not None and (ctx.tf.qualify(dotted) or "").startswith("tensorflow.")
