"""``name_references``: ``name_reference`` for several sets of names at once, the same answers."""

from __future__ import annotations

import pytest

from npu_codemod.api import ImportNames, name_reference, symbols, tokens
from npu_codemod.api._toolkit import name_references, parse_module, post_order

WANTED = (frozenset({"tensorflow.config.list_physical_devices",
                     "tensorflow.python.client.device_lib.list_local_devices"}),
          frozenset({"tensorflow.device"}),
          frozenset({"tensorflow.device", "tensorflow.config"}))

SOURCES = [
    "import tensorflow as tf\nwith tf.device('/gpu:0'):\n    gpus = tf.config.list_physical_devices('GPU')\n",
    "import tensorflow.compat.v1 as tf\nd = tf.device(x)\nc = tf.config\n",
    "from tensorflow.python.client import device_lib\nfrom tensorflow import device as dev\n"
    "n = len(device_lib.list_local_devices())\nwith dev(n):\n    pass\n",
    "import os\nos.path.join(a, b)\n",
]


@pytest.mark.parametrize("text", SOURCES)
def test_each_set_gets_what_name_reference_gives(text: str) -> None:
    tree = parse_module(text)
    assert tree is not None
    names = ImportNames(tree)
    nodes = list(post_order(tree, None, frozenset({symbols.power})))
    asked = [node for node in nodes if node.type in (symbols.power, tokens.NAME)]
    for node in asked:
        expected = [name_reference(node, [names], wanted) for wanted in WANTED]
        assert name_references(node, [names], WANTED) == expected
    assert any(name_reference(node, [names], WANTED[1]) for node in asked) == ("device" in text)
