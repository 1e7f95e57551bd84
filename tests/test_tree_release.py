"""A file's fissix tree is freed by reference counting once the engine is done with it.

Parent links make every fissix tree cyclic, and a rule's deferred edits and per-file analyses
refer back to the file's context; left as they are, each file's hundreds of thousands of
objects wait for the cyclic collector, which traces them all first (a tenth of a scan's CPU).
The engine breaks those cycles when a file's outcome is made (``engine.released``), and so does
NPU008's analysis of a file that imports internal modules (``engine.unlink``). Checked here
with the collector's own view: what it would have to collect after the file.
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Callable, Iterator

import pytest
from fissix import pytree

from npu_codemod.codemods.engine import FULL, SELECTIVE, Engine, parse_module, unlink
from npu_codemod.orchestrator.loaded_rules import RuleSelection, load_rules
from npu_codemod.plugins.manager import load_plugins

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "tests" / "corpus").rglob("*.py"))
ALL_RULES = load_plugins().rules()

INTERNAL_DEVICE = (
    "import tensorflow as tf\n"
    "from tensorflow.python.framework import ops\n\n\n"
    "def tower(x, device):\n"
    "    with ops.device(device):\n"
    "        return tf.layers.dense(x, 10)\n"
)


def cyclic_nodes(work: Callable[[], object]) -> list[pytree.Base]:
    """The fissix nodes the cyclic collector would find unreachable after ``work()``."""
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        work()
        gc.collect()
        return [found for found in gc.garbage if isinstance(found, pytree.Base)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


def node_count(data: bytes) -> int:
    tree = parse_module(data.decode("utf-8"))
    assert tree is not None
    count = len(list(tree.pre_order()))
    unlink(tree)
    return count


@pytest.fixture(autouse=True)
def rules_loaded() -> Iterator[None]:
    load_rules(RuleSelection())  # built once: what loading leaves behind is none of the files'
    yield


@pytest.mark.parametrize("mode", [SELECTIVE, FULL])
def test_no_tree_of_a_rewritten_or_reported_file_is_left_to_the_collector(mode: str) -> None:
    engine = Engine(ALL_RULES, mode, plan_every_file=mode == SELECTIVE)
    sources = [path.read_bytes() for path in SOURCES if b"tensorflow" in path.read_bytes()]
    assert len(sources) > 30
    changed: list[bool] = []

    def process_all() -> None:
        for data in sources:
            changed.append(engine.process(data, "train.py", repo="repo").new_data is not None)

    left = cyclic_nodes(process_all)
    # What is left: what rules took out of a tree (an argument, a statement), the placeholders
    # of skipped units once their bytes are back, what is left of a snippet's parse once its
    # statements are taken: a few percent of the files' trees.
    assert len(left) < sum(map(node_count, sources)) // 20
    assert changed.count(True) > 10 and changed.count(False) > 3  # both kinds of file seen


def test_an_unlinked_tree_goes_without_the_collector() -> None:
    def parse_and_unlink() -> None:
        tree = parse_module(INTERNAL_DEVICE)
        assert tree is not None
        unlink(tree)

    assert len(cyclic_nodes(lambda: parse_module(INTERNAL_DEVICE))) > 50  # a tree is cyclic
    assert cyclic_nodes(parse_and_unlink) == []


def test_npu008s_analysis_of_internal_modules_leaves_no_tree() -> None:
    loaded = load_rules(RuleSelection())
    facts: list[frozenset[str]] = []
    assert cyclic_nodes(lambda: facts.append(loaded.file_facts("towers.py", INTERNAL_DEVICE.encode()).facts)) == []
    assert "uses-tf-device" in facts[0]  # the file was parsed: ops.device is tf.device
