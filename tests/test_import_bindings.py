"""Which names an import binds: one answer (scopes.classify), for every import form."""

from __future__ import annotations

import ast

import pytest

from npu_codemod.api import symbols, tokens
from npu_codemod.api._toolkit import (
    ast_import_bindings,
    classify,
    import_bindings,
    parse_module,
    pre_order,
)


@pytest.mark.parametrize("source, bound", [
    ("from RewriterConfig import x\n", False),
    ("from m import RewriterConfig as RC\n", False),
    ("import RewriterConfig as RC\n", False),
    ("from m.RewriterConfig import x\n", False),
    ("import os, RewriterConfig\n", True),
    ("import RewriterConfig.sub\n", True),
    ("import RewriterConfig\n", True),
    ("from m import RewriterConfig\n", True),
    ("from m import (RewriterConfig)\n", True),
    ("from m import a, RewriterConfig\n", True),
    ("from m import x as RewriterConfig\n", True),
    ("import a.b as RewriterConfig\n", True),
])
def test_an_import_binds_only_the_names_it_binds(source: str, bound: bool) -> None:
    leaves = [leaf for leaf in pre_order(parse_module(source))
              if leaf.type == tokens.NAME and leaf.value == "RewriterConfig"]
    assert [classify(leaf).kind == "bind" for leaf in leaves] == [bound]


BINDINGS = [
    ("import horovod.tensorflow as hvd\n", [("hvd", "horovod.tensorflow")]),
    ("import horovod.tensorflow, os\n", [("horovod", "horovod"), ("os", "os")]),
    ("from horovod.tensorflow import (rank,\n    size as world)\n",
     [("rank", "horovod.tensorflow.rank"), ("world", "horovod.tensorflow.size")]),
    ("from npu_bridge.npu_init import *\n", [("*", "npu_bridge.npu_init")]),
    ("from . import mpi_ops\n", [("mpi_ops", ".mpi_ops")]),
    ("from ..common import init, rank as r\n", [("init", "..common.init"), ("r", "..common.rank")]),
    ("from .basics import (init,)\n", [("init", ".basics.init")]),
]


@pytest.mark.parametrize("source, expected", BINDINGS)
def test_both_trees_bind_the_same_names_to_the_same_targets(source: str, expected: list) -> None:
    """One answer to "what does this import bind", on the fissix tree and on ``ast``: ``*``
    and relative modules included (NPU025 read ``from ..common import init`` as binding
    ``common``)."""
    statement = next(node for node in pre_order(parse_module(source))
                     if node.type in (symbols.import_name, symbols.import_from))
    assert import_bindings(statement) == expected
    assert ast_import_bindings(ast.parse(source).body[0]) == expected


@pytest.mark.parametrize("source, path, expected", [
    ("from ..common import init, rank as r\n", "pkg/sub/train.py",
     [("init", "pkg.common.init"), ("r", "pkg.common.rank")]),
    ("from .common import init\n", "pkg/sub.py", [("init", "pkg.common.init")]),
    ("from .common import init\n", "pkg/sub/__init__.py", [("init", "pkg.sub.common.init")]),
    ("from . import common\n", "pkg/sub/train.py", [("common", "pkg.sub.common")]),
    ("from ..common import init\n", "train.py", []),  # above the repository: unknown
])
def test_a_relative_import_is_made_absolute_from_the_file_s_package(source: str, path: str,
                                                                   expected: list) -> None:
    assert ast_import_bindings(ast.parse(source).body[0], path) == expected
