"""``--engine selective`` against ``--engine full`` where a name is bound to a module accessor's
call (``nn = compat.nn()``, spec: NPU012's accessor modules).

``ImportNames`` binds such a name for the whole file, wherever the assignment is (module
level, in an ``if``/``try``, in a function that declares it ``global``, in a class body), and
an alias of it (``layers = tf_lib.layers``) too. A selective parse that left the assignment's
unit out resolved nothing through the name: a site-scope rule (NPU004, NPU005, NPU055) then
missed the sites a full parse rewrites or reports, and so did the linked rules (NPU007,
NPU010) where a class body binds it (a class defines only its own name). Such a file is now
parsed whole (``engine.binds_through_accessors``). Each case compares both modes on a file
long enough to be parsed selectively and checks the migration itself, so it fails if the
modes diverge.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from npu_codemod.codemods import ast_handover
from npu_codemod.codemods.engine import FULL, SELECTIVE, SELECTIVE_MIN_LINES, Engine
from npu_codemod.plugins.manager import load_plugins
from npu_codemod.plugins.packs import default_rules

from support.packs import repository_facts

ALL_RULES = load_plugins().rules()
RULES = default_rules(ALL_RULES)

#: The repository's accessors: functions that return TensorFlow modules.
COMPAT = textwrap.dedent('''\
    """TensorFlow's modules, imported where they are used."""


    def get_tf():
        import tensorflow
        return tensorflow


    def nn():
        from tensorflow import nn as tf_nn
        return tf_nn


    def layers():
        from tensorflow import layers as tf_layers
        return tf_layers
    ''')

#: A file importing TensorFlow under another name (so it is a TensorFlow file), whose sites
#: reach it only through names bound to accessor calls.
HEADER = textwrap.dedent('''\
    """A model whose TensorFlow comes from the library's accessors."""
    import numpy as np
    import tensorflow as tf_base
    from lib import compat
    from lib.compat import get_tf


    def _seed():
        return np.random.seed(0)
    ''')

#: Where the sites are: functions that use ``nn``, ``layers`` and ``tf_lib`` (bound below).
SITES = textwrap.dedent('''\


    def model(x, keep_prob):
        x = layers.dropout(x, 0.5)
        return nn.dropout(x, keep_prob)


    def towers(count):
        for index in range(count):
            with tf_lib.device("/gpu:%d" % index):
                pass
    ''')

#: Each shape binds ``nn``, ``layers`` and ``tf_lib`` in units of their own, away from the sites.
SHAPES = {
    "module level": "\n\nnn = compat.nn()\nlayers = compat.layers()\ntf_lib = get_tf()\n",
    "imported accessor": "\n\nfrom lib.compat import nn as nn_of\n\n\ndef _unused():\n    return 1\n\n\n"
                         "nn = nn_of()\nlayers = compat.layers()\ntf_lib = get_tf()\n",
    "in an if": "\n\nif np.__version__:\n    nn = compat.nn()\n    layers = compat.layers()\n"
                "    tf_lib = get_tf()\nelse:\n    nn = layers = tf_lib = None\n",
    "in a try": "\n\ntry:\n    nn = compat.nn()\n    layers = compat.layers()\n    tf_lib = get_tf()\n"
                "except ImportError:\n    nn = layers = tf_lib = None\n",
    "global in a function": "\n\ndef setup():\n    global nn, layers, tf_lib\n    nn = compat.nn()\n"
                            "    layers = compat.layers()\n    tf_lib = get_tf()\n",
    "class attribute": "\n\nclass Lib(object):\n    nn = compat.nn()\n    layers = compat.layers()\n"
                       "    tf_lib = get_tf()\n",
    "module-level global": "\n\nglobal nn, layers, tf_lib\nnn = compat.nn()\nlayers = compat.layers()\n"
                           "tf_lib = get_tf()\n",
    "alias of an accessor's module": "\n\ntf_lib = get_tf()\n\n\ndef _unused():\n    return 1\n\n\n"
                                     "nn = tf_lib.nn\nlayers = tf_lib.layers\n",
    # the accessors passed on by the package's ``__init__`` (:data:`INITS`), or star-imported
    "package re-export": "\n\nimport lib as lib_pkg\nfrom lib import nn as nn_of\n\n\ndef _unused():\n"
                         "    return 1\n\n\nnn = nn_of()\nlayers = lib_pkg.layers()\ntf_lib = lib_pkg.get_tf()\n",
    "package star re-export": "\n\nimport lib as lib_pkg\nfrom lib import nn as nn_of\n\n\ndef _unused():\n"
                              "    return 1\n\n\nnn = nn_of()\nlayers = lib_pkg.layers()\ntf_lib = lib_pkg.get_tf()\n",
    "dotted import": "\n\nimport lib.compat\n\n\ndef _unused():\n    return 1\n\n\n"
                     "nn = lib.compat.nn()\nlayers = lib.compat.layers()\ntf_lib = lib.compat.get_tf()\n",
    "star import": "\n\nfrom lib.compat import *  # noqa: F403\n\n\ndef _unused():\n    return 1\n\n\n"
                   "nn = nn()\nlayers = layers()\ntf_lib = get_tf()\n",
}
#: The package's ``__init__`` of a shape that reaches the accessors through it (else empty).
INITS = {"package re-export": "from lib.compat import get_tf, layers, nn\n",
         "package star re-export": "from .compat import *  # noqa: F401,F403\n"}


def _padding() -> str:
    """A long function no rule acts on: the file is parsed selectively."""
    body = "".join(f"    total = total + x * {index}\n" for index in range(SELECTIVE_MIN_LINES))
    return f"\n\ndef padding(x):\n    total = 0\n{body}    return total\n"


FILES = {"lib/__init__.py": "", "lib/compat.py": COMPAT}


@pytest.mark.parametrize("handed_over", [False, True])
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_name_bound_to_an_accessor_call_is_known_to_a_selective_parse(shape: str, handed_over: bool) -> None:
    text = HEADER + SHAPES[shape] + _padding() + SITES
    files = {**FILES, "lib/__init__.py": INITS.get(shape, ""), "train.py": text}
    facts = repository_facts(files)  # the analysis hands its reading over
    if not handed_over:
        ast_handover.clear()  # the selective engine reads the file's ast itself
    selective = Engine(RULES, SELECTIVE)
    outcome = selective.process(text.encode(), "train.py", repo="repo", facts=facts)
    assert ast_handover.take("train.py", text) is None  # the selective engine took the reading
    full = Engine(RULES, FULL).process(text.encode(), "train.py", repo="repo", facts=facts)
    assert full.new_data is not None
    new = full.new_data.decode()
    assert "npu_ops.dropout(x, keep_prob)" in new and "npu_convert_dropout" in new
    assert {finding.rule_id for finding in full.findings} >= {"NPU004", "NPU005", "NPU055"}
    assert outcome == full
    assert selective.counts["whole"] == 1


#: A session built through a name a class body binds: NPU007 and NPU010 link the units that
#: define the names a site uses, and a class defines only its own name.
SESSION = textwrap.dedent('''\


    def train(x):
        sess = tf_lib.Session(config=tf_lib.ConfigProto())
        sess.run(x)
    ''')


def test_a_name_a_class_body_binds_is_known_to_linked_rules() -> None:
    text = HEADER + SHAPES["class attribute"] + _padding() + SESSION
    facts = repository_facts({**FILES, "train.py": text})
    outcome = Engine(RULES, SELECTIVE).process(text.encode(), "train.py", repo="repo", facts=facts)
    full = Engine(RULES, FULL).process(text.encode(), "train.py", repo="repo", facts=facts)
    assert sorted((finding.rule_id, finding.status) for finding in full.findings) == [
        ("NPU001", "migrated"), ("NPU007", "migrated"), ("NPU010", "migrated")]
    assert outcome == full


ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(path for folder in ("tests/corpus", "tests/sample_projects", "examples")
                 for path in (ROOT / folder).rglob("*.py"))
_IMPORT = re.compile(r"^import tensorflow as tf[ \t]*$", re.MULTILINE)
_FIRST_FUNCTION = re.compile(r"^def [^\n]*\n(?:[ \t]+[^\n]*\n|\n)*", re.MULTILINE)


def _through_accessor(text: str) -> "str | None":
    """``text`` with its ``tf`` bound by ``tf = get_tf()`` after its first function (a unit of
    its own) instead of by its import, or None where it has no such import or function."""
    if not _IMPORT.search(text):
        return None
    text = _IMPORT.sub("import tensorflow as tf_base\nfrom lib.compat import get_tf", text, count=1)
    function = _FIRST_FUNCTION.search(text)
    if function is None:
        return None
    return text[:function.end()] + "\n\ntf = get_tf()\n\n\n" + text[function.end():]


@pytest.mark.parametrize("rules", ["default", "every-pack"])
def test_every_corpus_file_reaching_tf_through_an_accessor_gives_the_same_outcome(rules: str) -> None:
    chosen = RULES if rules == "default" else ALL_RULES
    selective, full = Engine(chosen, SELECTIVE, plan_every_file=True), Engine(chosen, FULL)  # short files too
    compared = rewritten = 0
    for path in SOURCES:
        text = _through_accessor(path.read_text(encoding="utf-8"))
        if text is None:
            continue
        facts = repository_facts({**FILES, "train.py": text})
        outcome = full.process(text.encode(), "train.py", repo="repo", facts=facts)
        assert selective.process(text.encode(), "train.py", repo="repo", facts=facts) == outcome, path
        compared += 1
        rewritten += outcome.new_data is not None
    assert compared > 40 and rewritten > 15
