"""Which names an import binds: one answer (scopes.classify), for every import form."""

from __future__ import annotations

import pytest

from npu_codemod.api import tokens
from npu_codemod.plugins.rules._toolkit import classify, parse_module, pre_order


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
