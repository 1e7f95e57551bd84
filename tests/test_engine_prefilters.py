"""The engine's and the analyses' shortcuts (issue 32) give the answers of the long way:
the module-name gates before an import regex or a bindings walk, and the shared ``ast``
walk that replaced an ``ast.walk`` of their own."""

from __future__ import annotations

import ast
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npu_codemod.codemods.accessors import _tf_imports
from npu_codemod.codemods.engine import may_bind, parse_module
from npu_codemod.codemods.modules import module_ast
from npu_codemod.codemods.names import ImportNames, imports_module_pattern
from npu_codemod.plugins.rules.audit.npu100_api_support import statement_starts

MODULES = ("horovod", "tensorflow_estimator", "npu_device")

#: Every way of binding a module the engine knows of: each binds ``module`` (formatted in).
BINDING_IMPORTS = [
    "import {m}\n",
    "import os, {m}.tensorflow as dist\n",
    "import \\\n    {m}\n",
    "from {m} import (\n    a,\n    b as c,\n)\n",
    "from \\\n {m}.tensorflow import init\n",
    "try:\n    import {m}.keras as k\nexcept ImportError:\n    k = None\n",
    "if True: import {m}\n",
    "x = 1; import {m} as h; y = h\n",
    "def f():\n    import {m}\n    return {m}\n",
]


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize("template", BINDING_IMPORTS)
def test_a_module_bound_anyhow_passes_the_gate(module: str, template: str) -> None:
    source = template.format(m=module)
    tree = parse_module(source)
    assert tree is not None
    assert ImportNames(tree, root=module).bindings  # the sample does bind it
    assert may_bind(module, source)


@pytest.mark.parametrize("module", MODULES)
def test_a_file_that_never_spells_a_module_binds_none_of_it(module: str) -> None:
    source = ("import tensorflow as tf\nimport os as hv\nfrom x import y as npu\n"
              "est = tf.estimator\ndist = hv\n")
    tree = parse_module(source)
    assert tree is not None
    assert not may_bind(module, source)
    assert not ImportNames(tree, root=module).bindings


def test_horovod_s_conventional_name_passes_the_gate() -> None:
    """``from common import hvd`` binds Horovod when ``common`` imports it (``tf_aliases``)."""
    assert may_bind("horovod", "import tensorflow as tf\nfrom common import hvd\n")


def test_tensorflow_always_passes_the_gate() -> None:
    """TensorFlow is also bound through a repository's accessor functions, spelled nowhere."""
    assert may_bind("tensorflow", "contrib = lib.get_contrib()\n")


_PIECES = st.sampled_from(["import ", "from ", " ", "\t", "\n", ";", ":", "#", ",", "as ",
                           "horovod", "hvd", "tensorflow", "npu_device", ".", "(", "\\\n", "x"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=14).map("".join))
def test_an_import_pattern_never_matches_without_the_name(text: str) -> None:
    """The engine runs a module's import pattern only on text that spells the module."""
    for module in MODULES + ("tensorflow",):
        if imports_module_pattern(module).search(text):
            assert module in text


STATEMENTS = '''\
import os, \\
    sys
x = (1,
     2); y = [3,
              4]


def f(a,
      b):
    try:
        call(a,
             b)
    except (ValueError,
            KeyError):
        raise RuntimeError(
            "no")
    finally:
        del a, \\
            b
    with open("p") as h:
        return {"k":
                h}


class C:
    z = """one
two"""
    if z:
        pass
    for i in range(
            3):
        print(i,
              end="")
'''


def _starts_by_ast_walk(source: str) -> dict[int, int]:
    """What ``statement_starts`` gave with an ``ast.walk`` of its own."""
    starts: dict[int, int] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.stmt) and not hasattr(node, "body") and node.end_lineno:
            for number in range(node.lineno + 1, node.end_lineno + 1):
                starts.setdefault(number, node.lineno)
    return starts


def test_statement_starts_are_those_of_a_full_walk() -> None:
    expected = _starts_by_ast_walk(STATEMENTS)
    assert len(expected) >= 8  # the sample has statements over several lines throughout
    module_ast.cache_clear()  # the walk parses the file itself
    assert statement_starts(SimpleNamespace(original=STATEMENTS, _handover=None)) == expected
    module_ast(STATEMENTS)  # and reuses a tree another analysis parsed
    assert statement_starts(SimpleNamespace(original=STATEMENTS, _handover=None)) == expected


def test_statement_starts_of_python2_code_are_none() -> None:
    assert statement_starts(SimpleNamespace(original="print 'a',\\\n  'b'\n", _handover=None)) == {}


IMPORTS = '''\
import tensorflow as tf
import tensorflow.contrib.slim, os


def build():
    from tensorflow.contrib import tpu as contrib_tpu
    try:
        from tensorflow.contrib import slim as tf_slim
    except ImportError:
        import tf_slim
    if tf:
        from tensorflow.python.ops import array_ops as ops
    else:
        from tensorflow.compat.v1 import layers as ops
    return contrib_tpu
from . import tensorflow_helpers
'''


def _tf_imports_by_ast_walk(tree: ast.Module) -> dict[str, str]:
    """What ``_tf_imports`` gave with an ``ast.walk`` of its own."""
    found: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            pairs = [(alias.asname or alias.name.split(".")[0],
                      alias.name if alias.asname else alias.name.split(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            pairs = [(alias.asname or alias.name, f"{node.module}.{alias.name}") for alias in node.names]
        else:
            continue
        for local, target in pairs:
            if target.split(".")[0] in ("tensorflow", "tensorflow_estimator"):
                found.setdefault(local, set()).add(target)
    return {local: targets.pop() for local, targets in found.items() if len(targets) == 1}


def test_tf_imports_are_those_of_a_full_walk() -> None:
    tree = ast.parse(IMPORTS)
    expected = _tf_imports_by_ast_walk(tree)
    assert expected == {"tf": "tensorflow", "tensorflow": "tensorflow", "contrib_tpu": "tensorflow.contrib.tpu",
                        "tf_slim": "tensorflow.contrib.slim"}
    assert _tf_imports(tree) == expected
