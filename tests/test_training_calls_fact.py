"""The ``tf2-calls:`` fact of a file (``codemods/training_calls.py``): every TF file of every
repository gives one, whatever its version, so it is read cheaply: only the statements on
lines that spell an imported name are walked, and a TF file's imports come from the module
index its signals built. A text with carriage returns is walked whole (its lines are not
counted): the same fact, the reference here."""

from __future__ import annotations

import pytest

from npu_codemod.codemods.modules import module_ast, module_index
from npu_codemod.codemods.training_calls import calls_fact

NESTED = '''\
import pkg.trainer as trainer
from pkg import runner
from pkg.models import (
    build,
    Net as Model,
)


@runner.register(
    name="x")
class Tool:
    mode = "x"

    def run(self, args):
        if args.fit:
            for epoch in range(3):
                print(epoch)
        else:
            try:
                pass
            except ValueError:
                value = (1 +
                         trainer.step(args).loss)
            with open(args.path) as handle:
                handle.write(
                    "x")
        return 0

    def helper(self):
        return [runner.run(x) for x in range(2)]


def make():
    def inner():
        def deepest():
            return Model(
                3)
        return deepest
    return build


with runner.scope():
    value = 1

if __name__ == "__main__":
    while True:
        Tool().run(trainer.flags)
'''

NO_TRAINING = '''\
import os

from pkg import tools


def convert(path):
    import pkg.records as records
    try:
        from pkg.extra import shard
    except ImportError:
        shard = None
    if path:
        from .local import helper
    return records.write(tools.read(path), shard, helper)


class Reader:
    from pkg import schema

    def read(self):
        return self.schema
'''


@pytest.mark.parametrize("text", [NESTED, NO_TRAINING, "import pkg\nx = pkg.a.b.c(pkg.d)\n",
                                  "from pkg import f\n\n\ndef g():\n    h = 1\n    return f'{f(h)}'\n"])
def test_the_statements_walked_give_the_whole_walk(text: str) -> None:
    crlf = text.replace("\n", "\r\n")
    assert module_ast(crlf) is not None
    assert calls_fact("tools/x.py", text) == calls_fact("tools/x.py", crlf)


def test_uses_in_nested_and_multi_line_statements() -> None:
    fact = calls_fact("tools/x.py", NESTED)
    assert fact == ("tf2-calls:tools/x.py||:pkg.flags,pkg.trainer "
                    "=Model:pkg.Net,pkg.models =build:pkg.build,pkg.models =runner:pkg.runner "
                    "=trainer:pkg.trainer Tool:pkg.register,pkg.run,pkg.runner,pkg.step,pkg.trainer "
                    "make:pkg.Net,pkg.build,pkg.models")


def test_a_tf_files_imports_from_its_index_are_those_of_its_statements() -> None:
    text = "import tensorflow as tf\n" + NO_TRAINING
    tree = module_ast(text)
    assert tree is not None
    module_index(tree)
    assert calls_fact("tools/x.py", text, indexed=True) == calls_fact("tools/x.py", text) \
        == ("tf2-calls:tools/x.py||=helper:tools.helper,tools.local =records:pkg.records "
            "=schema:pkg.schema =shard:pkg.extra,pkg.shard =tools:pkg.tools convert:pkg.extra,"
            "pkg.read,pkg.records,pkg.shard,pkg.tools,pkg.write,tools.helper,tools.local")
