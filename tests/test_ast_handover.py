"""What the repository analysis hands the engine from a file's ``ast`` (``ast_handover``) is
what the engine's readers would read from the tree themselves: the unit layout (with any
subset of the rules' marks), the imports, the bindings, the audits' uses, the statements'
spans; on every Python source the suite has and on generated modules. The engine gives the
same outcomes with and without a hand-over, and does not parse a handed-over file again."""

from __future__ import annotations

import ast
import marshal
import traceback
from collections import Counter
from dataclasses import fields

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npu_codemod.codemods import ast_handover, modules
from npu_codemod.codemods.ast_handover import Handover, record_of
from npu_codemod.codemods.ast_names import ast_import_names
from npu_codemod.codemods.ast_references import ast_reading
from npu_codemod.codemods.dead_sites import dead_lines
from npu_codemod.codemods.engine import FULL, SELECTIVE, Engine
from npu_codemod.codemods.local_names import without_shadowed
from npu_codemod.codemods.modules import imported_names, module_ast, statements
from npu_codemod.codemods.units import Layout, module_layout
from npu_codemod.orchestrator.loaded_rules import RuleSelection, load_rules
from npu_codemod.plugins.manager import load_plugins

from support.generated_modules import top_level
from support.sources import python_sources

ALL_RULES = load_plugins().rules()
MARKS = tuple(dict.fromkeys(mark for rule in ALL_RULES for mark in rule._ast_sites))
ACCESSORS = {"contrib.tpu": "tensorflow.contrib.tpu", "lib.pick": "?"}


def handed(path: str, text: str) -> "Handover | None":
    """The record as the engine gets it: through ``marshal``, as the store keeps it."""
    record = record_of(path, text, MARKS)
    return None if record is None else Handover(marshal.loads(marshal.dumps(record)), MARKS)


def unit_fields(layout: "Layout | None") -> "list[dict] | None":
    if layout is None:
        return None
    return [{field.name: getattr(unit, field.name) for field in fields(unit)} for unit in layout.units]


def assert_layouts_alike(handover: Handover, text: str) -> None:
    assert MARKS, "a rule declares _ast_sites: the marks are compared too"
    for marks in ((), MARKS, MARKS[:1]):
        given_layout, own = handover.layout(text, marks), module_layout(text, marks)
        assert unit_fields(given_layout) == unit_fields(own)
        if own is not None:
            assert given_layout is not None
            assert given_layout.aliases == own.aliases and given_layout.lines == own.lines


def own_spans(module: ast.Module) -> list[tuple[int, int]]:
    """NPU100's statement spans as it read them from the tree before the hand-over."""
    return [(node.lineno, node.end_lineno) for node in statements(module)
            if not hasattr(node, "body") and node.end_lineno and node.end_lineno > node.lineno]


def assert_readings_alike(handover: Handover, text: str, path: str) -> None:
    module = module_ast(text)
    assert module is not None
    assert handover.imported_names() == imported_names(module, path)
    for root in ("tensorflow", "horovod", "contextlib"):
        for accessors in (None, ACCESSORS):
            own = ast_import_names(text, root, accessors)
            assert own is not None
            given_names = handover.import_names(root, accessors)
            assert list(given_names.bindings.items()) == list(own.bindings.items())
            assert given_names.accessors == own.accessors
    resolvers = [ast_import_names(text, "tensorflow"), ast_import_names(text, "horovod")]
    reading = handover.reading(resolvers, text)  # type: ignore[arg-type]
    if any(resolver.bindings for resolver in resolvers):  # type: ignore[union-attr]
        assert reading == ast_reading(text, resolvers)  # type: ignore[arg-type]
    assert_rebound_readings_alike(handover, text)
    assert handover.statement_spans() == own_spans(module)
    assert handover.alias_lines() == [
        (node.targets[0].id, node.lineno) for node in statements(module)
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, (ast.Name, ast.Attribute))]
    assert handover.dead_lines() == dead_lines(text)
    if reading is not None:  # the shadowed reads the record knows: as the module's own
        assert without_shadowed(text, reading.sites, handover.known_reads()) == without_shadowed(text, reading.sites)


def assert_rebound_readings_alike(handover: Handover, text: str) -> None:
    """Read through other bindings than the file's own (accessor functions of the repository,
    TensorFlow's alone where the record has Horovod's too), the record gives ``ast_reading``'s
    answer, or none (then the engine reads the file itself)."""
    for resolvers in ([ast_import_names(text, "tensorflow", ACCESSORS)],
                      [ast_import_names(text, "tensorflow", SHADOWING), ast_import_names(text, "horovod")],
                      [ast_import_names(text, "tensorflow")]):
        reading = handover.reading(resolvers, text)  # type: ignore[arg-type]
        assert reading is None or reading == ast_reading(text, resolvers)  # type: ignore[arg-type]
        REBOUND[reading is not None] += 1


#: Accessor functions spelled as names a file binds to TensorFlow (``def slim(): ...`` in it).
SHADOWING = {"slim": "tensorflow.contrib.slim", "nn": "?", "contrib.tpu": "tensorflow.contrib.tpu"}
#: How many readings through other bindings the record gave (True) or left to a whole reading.
REBOUND: Counter[bool] = Counter()


def test_every_source_the_suite_has_is_handed_over_as_its_readers_read_it() -> None:
    compared, units, sites = 0, 0, 0
    for where, text in python_sources().items():
        body = text if text.endswith("\n") or not text else text + "\n"
        handover = handed(where, body)
        if handover is None:
            continue  # the engine reads it as before: parsed whole, or from its own ast
        compared += 1
        assert_layouts_alike(handover, body)
        assert_readings_alike(handover, body, where)
        layout = module_layout(body, MARKS)
        units += len(layout.units) if layout else 0
        reading = handover.reading([ast_import_names(body, "tensorflow"), ast_import_names(body, "horovod")], body)  # type: ignore[list-item]
        sites += len(reading.sites) if reading else 0
    assert compared > 800 and units > 1500 and sites > 2500
    assert REBOUND[True] > 2000 and REBOUND[False] < REBOUND[True] / 100


_NAME = st.sampled_from(["tf", "hvd", "x", "model", "count", "nn", "slim", "result"])
_EXPRESSION = st.sampled_from([
    "tf.nn.dropout(x, 0.5)", "hvd.rank()", "nn.relu(x)", "model.predict(x)", "tf.estimator.Estimator(model)",
    "slim.conv2d(x, 3)", "contrib.tpu().TPUEstimator(x)", "tpu_lib.RunConfig()", "slim().conv2d(x)",
    "[n for n in x]", "lambda y: tf.add(y, 1)", "tf.compat.v1.Session()", "(\n    tf.constant(1))"])
_SIMPLE = st.one_of(
    st.builds("{} = {}".format, _NAME, _EXPRESSION),
    st.builds("assert len({}) == {}".format, _NAME, _NAME), st.builds("assert {}".format, _NAME),
    st.sampled_from(["import tensorflow as tf", "import horovod.tensorflow as hvd", "from tensorflow import nn",
                     "import tensorflow.contrib.slim as slim", "from lib import pick", "global count",
                     "tpu_lib = contrib.tpu()", "# contrib.tpu() in a comment", "x = lib.pick().keras",
                     "x = 1; y = tf.nn", "layers = tf.layers", "del x"]))


@st.composite
def _top_level(draw: st.DrawFn) -> str:
    body = draw(st.lists(_SIMPLE, min_size=1, max_size=3))
    shape = draw(st.sampled_from(["run", "def", "class", "decorated", "main", "same line"]))
    if shape != "same line":
        return top_level(shape, body, f"def {draw(_NAME)}_f(a, b=tf):")
    return f"def h(): return {draw(_EXPRESSION).replace(chr(10), ' ')}\nx = 2\n"


@settings(max_examples=300, deadline=None)
@given(st.lists(_top_level(), min_size=1, max_size=8).map("".join))
def test_generated_modules_are_handed_over_as_their_readers_read_them(text: str) -> None:
    handover = handed("gen.py", text)
    if handover is None:
        assert module_ast(text) is None  # a shape ast does not read: no record
        return
    assert_layouts_alike(handover, text)
    assert_readings_alike(handover, text, "gen.py")


def test_a_record_is_kept_only_for_what_the_engine_reads_from_ast() -> None:
    assert record_of("a.py", "import tensorflow as tf\nx = tf.nn", MARKS) is None  # no final newline
    assert record_of("a.py", "import tensorflow as tf\nx = 1\rprint(x)\n", MARKS) is None  # a lone CR
    assert record_of("a.py", "print 'python 2'\n", MARKS) is None  # ast cannot read it
    assert record_of("a.py", "import ｈorovod\n", MARKS) is None  # ast spells it otherwise


def test_the_store_gives_each_record_once_and_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    ast_handover.clear()
    text = "import tensorflow as tf\nx = tf.nn.relu(1)\n"
    ast_handover.hand_over("a.py", text, MARKS)
    assert ast_handover.take("b.py", text) is None and ast_handover.take("a.py", text + "\n") is None
    assert ast_handover.take("a.py", text) is not None
    assert ast_handover.take("a.py", text) is None  # taken
    monkeypatch.setattr(ast_handover._STORE, "max_records", 3)
    for number in range(5):
        ast_handover.hand_over(f"{number}.py", text, MARKS)
    assert [ast_handover.take(f"{number}.py", text) is not None for number in range(5)] == [False, False, True, True, True]
    assert ast_handover._STORE.size == 0 and ast_handover._STORE.mapped() == 0
    ast_handover.clear()


CORPUS = {where: text for where, text in python_sources().items()
          if where.startswith(("tests/corpus/", "tests/sample_projects/")) and "tensorflow" in text}


@pytest.mark.parametrize("every_file", [False, True])
def test_the_engine_gives_the_same_outcomes_with_and_without_a_hand_over(every_file: bool) -> None:
    """With a hand-over every file is laid out (short ones too): the same outcomes as
    without, and as ``--engine full``."""
    engine, full = Engine(ALL_RULES, SELECTIVE, plan_every_file=every_file), Engine(ALL_RULES, FULL)
    differ, handed_over = [], 0
    for where, text in CORPUS.items():
        data = text.encode("utf-8")
        ast_handover.clear()
        without = engine.process(data, where, "repo")
        engine.hand_over(where, text)
        full.hand_over(where, text)  # none in the full mode
        handed_over += bool(ast_handover._STORE)
        with_it = engine.process(data, where, "repo")
        if not with_it == without == full.process(data, where, "repo"):
            differ.append(where)
    assert differ == [] and handed_over > 40
    assert engine.counts["selective"] + engine.counts["unparsed"] >= 20


#: Rules' own analyses that read more of a file's tree than the readers a record serves: a
#: parameter NPU008 may find soft placement passed to, the models a file builds (``built_models``),
#: Horovod held in a parameter, a local ``hvd`` or ``self.hvd`` (in a file that spells ``hvd``
#: or binds Horovod: NPU100 reports those uses while the distributed pack is off).
OWN_READINGS = ("_true_by_default", "model_facts", "parameter_uses")


def test_the_engine_parses_no_handed_over_file_with_ast_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A repository analysed and rewritten as ``scan`` does (``repository_facts``, then the
    engine over each file with its facts), with every ``ast.parse`` of a file counted."""
    loaded = load_rules(RuleSelection())
    files = [(where, text.encode("utf-8")) for where, text in sorted(CORPUS.items())]
    by_text = {text: where for where, text in CORPUS.items()}
    parsed: list[tuple[str, set[str]]] = []  # the file, and the functions that asked
    real_parse = ast.parse

    def counted(source, *args, **kwargs):  # type: ignore[no-untyped-def]
        if source in by_text:
            parsed.append((by_text[source], {frame.name for frame in traceback.extract_stack()}))
        return real_parse(source, *args, **kwargs)

    def engine_parses(hand_over: bool) -> list[tuple[str, set[str]]]:
        ast_handover.clear()
        facts = loaded.repository_facts(files, "repo").facts
        if not hand_over:
            ast_handover.clear()
        modules.module_ast.cache_clear()  # as after a repository's other files
        parsed.clear()
        monkeypatch.setattr(ast, "parse", counted)
        try:
            for where, data in files:
                loaded.engine.process(data, where, "repo", facts)
        finally:
            monkeypatch.setattr(ast, "parse", real_parse)
        return list(parsed)

    assert len({where for where, _ in engine_parses(hand_over=False)}) > 30  # layouts, uses...
    again = engine_parses(hand_over=True)
    assert [where for where, asking in again if asking.isdisjoint(OWN_READINGS)] == []
    assert len(again) < 10


#: A short training script rewritten whole: its session is module-level code, so no unit can
#: be left out (``units.plan_parse``), and NPU100 counts the uses of its rewrite.
WHOLE = '''\
"""Trains a small MNIST classifier in one session (module-level code: parsed whole)."""
import tensorflow as tf
from tensorflow.contrib import slim

images = tf.placeholder(tf.float32, [None, 784])
hidden = slim.fully_connected(images, 128)
logits = tf.layers.dense(tf.nn.dropout(hidden, keep_prob=0.9), 10)
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(logits=logits, labels=[1]))
train_op = tf.train.AdamOptimizer(0.001).minimize(loss)
config = tf.ConfigProto()
with tf.Session(config=config) as sess:
    sess.run(tf.global_variables_initializer())
    sess.run(train_op)
'''


def test_a_file_parsed_whole_reads_its_uses_and_its_rewrites_from_the_record(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its fissix tree is not walked for them, nor its rewrite parsed whole with ``ast``: only
    the statements the rules changed are read (``rewritten_references``); the outcome is the
    one without a record."""
    engine = Engine(ALL_RULES, SELECTIVE)
    data = WHOLE.encode("utf-8")
    ast_handover.clear()
    without = engine.process(data, "train.py", "repo")
    assert engine.counts["whole"] == 1 and without.new_data is not None and without.api_sites
    engine.hand_over("train.py", WHOLE)
    parsed: list[str] = []
    real_parse = ast.parse

    def counted(source, *args, **kwargs):  # type: ignore[no-untyped-def]
        parsed.append(source)
        return real_parse(source, *args, **kwargs)

    def walked(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("the fissix tree walked for the audit's uses")

    monkeypatch.setattr(ast, "parse", counted)
    monkeypatch.setattr("npu_codemod.codemods.ast_references.references_under", walked)
    with_it = engine.process(data, "train.py", "repo")
    monkeypatch.undo()
    assert engine.counts["whole"] == 2 and with_it == without
    assert parsed and not any(source.startswith(WHOLE[:40]) for source in parsed)  # pieces, not the file
