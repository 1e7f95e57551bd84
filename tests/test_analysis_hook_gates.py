"""The repository analysis's shortcuts (issue 32) give the facts of the long way: each hook
that skips work on a first look, or reads the shared ``ast`` instead of a fissix tree, is
compared with the way it went before, on every source the suite has and on generated modules
made of the shapes its first look is about."""

from __future__ import annotations

import ast
import re
from typing import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npu_codemod.codemods.engine import parse_module, unlink
from npu_codemod.codemods.modules import module_ast
from npu_codemod.codemods.names import ImportNames, first_call
from npu_codemod.plugins.rules.sess_run import npu008_soft_placement as npu008

from support.sources import python_sources


def _npu008_long_way(text: str) -> set[str]:
    """NPU008's facts as they were made: every argument's code read, internal modules' calls
    found on the fissix tree."""
    tree = module_ast(text)
    mentioned = re.search("soft|placement", text, re.I) is not None
    facts = {npu008.PASSED + item for item in npu008.passed_soft_placement(tree, mentioned)} if tree else set()
    if _uses_tf_device_long_way(text):
        facts.add(npu008.FACT)
    return facts


def _uses_tf_device_long_way(text: str) -> bool:
    original = npu008._device_through_internal_modules
    npu008._device_through_internal_modules = _device_through_internal_modules_long_way  # type: ignore[assignment]
    try:
        return npu008.uses_tf_device(text)
    finally:
        npu008._device_through_internal_modules = original  # type: ignore[assignment]


def _device_through_internal_modules_long_way(text: str) -> bool:
    if not re.search(r"\btensorflow\.python\b", text) or "device" not in text:
        return False
    tree = parse_module(text)
    if tree is None:
        return False
    found = first_call(tree, ImportNames(tree), npu008.DEVICE) is not None
    unlink(tree)
    return found


HOOKS: dict[str, tuple[Callable[[str, str], object], Callable[[str], object]]] = {
    "NPU008": (npu008.npu_codemod_analyze_file, _npu008_long_way),
}


def _same(name: str, text: str) -> bool:
    hook, long_way = HOOKS[name]
    return set(hook("pkg/mod.py", text) or ()) == set(long_way(text) or ())


@pytest.mark.parametrize("name", sorted(HOOKS))
def test_every_source_of_the_suite_gets_the_facts_of_the_long_way(name: str) -> None:
    sources = python_sources()
    assert [where for where, text in sources.items() if not _same(name, text)] == []


#: Lines of modules the first looks are about: internal modules' device calls (parenthesised,
#: decorated, aliased, in f-strings), soft placement spelled in names, strings (escaped, split
#: in two adjacent literals, non-ASCII names), and what makes a file unreadable to one parser.
_LINES = st.sampled_from([
    "from tensorflow.python.framework import ops\n",
    "from tensorflow.python.framework.ops import device as on\n",
    "import tensorflow.python.framework.ops\n",
    "import tensorflow as tf\n",
    "from tensorflow.python.framework import ops as o\n",
    "dev = ops.device\n",
    "with ops.device('/cpu:0'):\n    x = 1\n",
    "with (ops).device(d):\n    pass\n",
    "with on('/gpu:1'):\n    pass\n",
    "@ops.device('/cpu:0')\ndef f():\n    pass\n",
    "y = ops.device\n",
    "z = f'{ops.device(1)}'\n",
    "tensorflow.python.framework.ops.device(None)\n",
    "ops.name_scope('device')\n",
    "make(False)\n",
    "make(True, soft=False)\n",
    "make(cfg.allow_soft_placement)\n",
    "make('\\x73oft')\n",
    "make('so' 'ft')\n",
    "make('pla' 'cement', x)\n",
    "make(ｓoft)\n",
    "make(SOFT)\n",
    "build(**kwargs)\n",
    "build(*args)\n",
    "match x:\n    case 1:\n        pass\n",
    "print 'py2'\n",
    "# tf.device('/cpu:0') soft\n",
])


@settings(max_examples=400, deadline=None)
@given(st.lists(_LINES, max_size=8).map("".join))
def test_generated_modules_get_the_facts_of_the_long_way(text: str) -> None:
    for name in HOOKS:
        assert _same(name, text), (name, text)


def test_a_soft_placement_spelled_only_by_escapes_or_adjacent_strings_is_read() -> None:
    for text in ("make('\\x73oft')\n", "make('so' 'ft')\n", "make(ｓoft)\n"):
        tree = ast.parse(text)
        assert npu008.spells_unseen(tree, text)
        assert npu008.passed_soft_placement(tree, False) == {"make:0"}
