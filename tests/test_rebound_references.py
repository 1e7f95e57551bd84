"""Issue 32: a file that reaches TensorFlow through the repository's accessor functions
(``contrib.slim().conv2d``, ``tpu_lib = contrib.tpu()``) is read through other bindings than
the analysis recorded its uses with, which did not know the accessors yet; the record gives
the same uses all the same (``rebound_references``), reading again only the top-level
statements that spell a name whose meaning changed, and the engine parses no such file whole
with ``ast`` for the audits."""

from __future__ import annotations

import ast
import traceback

import pytest

from npu_codemod.codemods import ast_handover, modules, rebound_references
from npu_codemod.codemods.ast_names import ast_import_names
from npu_codemod.codemods.ast_references import ast_reading
from npu_codemod.codemods.engine import FULL, Engine
from npu_codemod.codemods.modules import module_ast
from npu_codemod.codemods.names import ImportNames
from npu_codemod.codemods.rebound_references import bindings_key, class_members, rebound_reading
from npu_codemod.orchestrator.loaded_rules import RuleSelection, load_rules

from support.accessor_sources import ALIASED, CONTRIB, TRAINER

#: A tensor2tensor-shaped model file: slim and the TPU module reached through accessors, a
#: class whose methods use them, a name that is both bound to TensorFlow and an accessor.
MODEL = '''\
"""Video model layers (tensor2tensor's shape: contrib reached through accessor functions)."""
from __future__ import absolute_import

import tensorflow.compat.v1 as tf

from lib.utils import contrib
from lib.utils.contrib import slim

tfl = tf.layers
tfcl = contrib.layers()  # not an accessor of the repository: stays unbound


def conv_stack(images, filters):
  """Three convolutions, with slim's arg scope."""
  with contrib.framework().arg_scope([slim().conv2d], padding="SAME"):
    net = slim().conv2d(images, filters, [3, 3])
    net = contrib.slim().conv2d(net, filters, [3, 3])
  return tfl.flatten(net)


class VideoModel(object):
  """The model; contrib.tpu() only in one method."""

  def body(self, features):
    hidden = conv_stack(features["inputs"], 32)
    return tf.nn.relu(hidden)

  def estimator_spec(self, mode, loss):
    tpu_lib = contrib.tpu()
    optimizer = tpu_lib.CrossShardOptimizer(tf.train.AdamOptimizer(0.1))
    return tpu_lib.TPUEstimatorSpec(mode=mode, loss=loss, train_op=optimizer.minimize(loss))


# contrib.tpu() and slim() above; nothing here but this comment and a constant.
FRAMES = 4
'''
FILES = {"lib/__init__.py": "", "lib/utils/__init__.py": "", "lib/utils/contrib.py": CONTRIB,
         "lib/trainer.py": TRAINER, "lib/aliased.py": ALIASED, "lib/video.py": MODEL}
SPELLED = {"contrib.tpu": "tensorflow.contrib.tpu", "contrib.framework": "tensorflow.contrib.framework",
           "contrib.slim": "tensorflow.contrib.slim", "slim": "tensorflow.contrib.slim",
           "contrib.contrib_module": "?"}


def resolvers_of(text: str, accessors: "dict[str, str] | None") -> list[ImportNames]:
    found = [ast_import_names(text, "tensorflow", accessors), ast_import_names(text, "horovod")]
    assert all(found)
    return found  # type: ignore[return-value]


@pytest.mark.parametrize("name", sorted(FILES))
def test_a_reading_through_the_accessors_is_the_whole_files(name: str) -> None:
    text = FILES[name]
    recorded = resolvers_of(text, None)
    reading = ast_reading(text, recorded)
    assert reading is not None
    for accessors in (SPELLED, {"contrib.tpu": "tensorflow.contrib.tpu"}, {"tfl": "?", "tf": "?"}):
        resolvers = resolvers_of(text, accessors)
        assert rebound_reading(text, reading, bindings_key(recorded), resolvers) == ast_reading(text, resolvers)
    # and back: a reading made with the accessors, read as the file's own imports bind
    resolvers = resolvers_of(text, SPELLED)
    with_them = ast_reading(text, resolvers)
    assert with_them is not None
    assert rebound_reading(text, with_them, bindings_key(resolvers), recorded) == reading


@pytest.fixture
def every_class(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every class kept with its members, however short (the fixtures' are)."""
    monkeypatch.setattr(rebound_references, "MEMBERS_MIN_LINES", 1)


def test_a_short_class_is_kept_without_its_members() -> None:
    module = module_ast(MODEL)
    assert module is not None and class_members(module) == ()
    longer = MODEL.replace("    return tf.nn.relu(hidden)\n", "    return tf.nn.relu(hidden)\n" + "\n" * 100)
    module = module_ast(longer)
    assert module is not None and [first for first, _ in class_members(module)] == [21]


@pytest.mark.usefixtures("every_class")
def test_the_model_file_is_read_again_only_where_it_spells_an_accessor() -> None:
    recorded = resolvers_of(MODEL, None)
    reading = ast_reading(MODEL, recorded)
    module = module_ast(MODEL)
    assert reading is not None and module is not None
    resolvers = resolvers_of(MODEL, SPELLED)
    pieces: list[str] = []
    real_parse = ast.parse

    def counted(source, *args, **kwargs):  # type: ignore[no-untyped-def]
        pieces.append(source)
        return real_parse(source, *args, **kwargs)

    ast.parse = counted  # type: ignore[assignment]
    try:
        again = rebound_reading(MODEL, reading, bindings_key(recorded), resolvers, class_members(module))
        whole_classes = rebound_reading(MODEL, reading, bindings_key(recorded), resolvers)
    finally:
        ast.parse = real_parse
    assert again == whole_classes == ast_reading(MODEL, resolvers)
    assert again is not None and {site.spelled for site in again.sites} >= {
        "contrib.slim().conv2d", "slim().conv2d", "tpu_lib.TPUEstimatorSpec", "contrib.framework().arg_scope"}
    heads = [piece.split("\n")[piece.startswith("if 1:")] for piece in pieces]
    assert heads[:7] == [
        MODEL.split("\n")[0],  # the docstring spells contrib: a word is a word
        "from lib.utils import contrib", "from lib.utils.contrib import slim", "tfcl = contrib.layers()  "
        "# not an accessor of the repository: stays unbound", "def conv_stack(images, filters):",
        '  """The model; contrib.tpu() only in one method."""',  # the class's members that spell it
        "  def estimator_spec(self, mode, loss):"]  # not body(), nor the comment at the end, nor FRAMES
    assert heads[7:12] == heads[:5] and heads[12:] == ["class VideoModel(object):"]  # without members


@pytest.mark.parametrize("text", [
    "import tensorflow as tf\nx = 1\n\\\ny = contrib.tpu().RunConfig()\n",  # a line continued into it
    "import tensorflow as tf\n\x0cy = contrib.tpu().RunConfig()\n",  # a form feed: column 1
    "import tensorflow as tf\nif x:\n  pass\nelse: y = contrib.tpu().RunConfig()\n",
    "import tensorflow as tf\nclass A(\n    B): y = contrib.tpu().RunConfig()\n",  # a body on the header's line
    "import tensorflow as tf\nclass A(B):\n  x = 1\n  \\\n  y = contrib.tpu().RunConfig()\n",
    "import tensorflow as tf\nclass A(B):\n\tx = 1; y = contrib.tpu()\n\t# contrib\n\tdef f(self): return contrib.tpu()\n"])
@pytest.mark.usefixtures("every_class")
def test_statements_that_may_not_read_alone_give_no_answer_or_the_same(text: str) -> None:
    recorded = resolvers_of(text, None)
    reading = ast_reading(text, recorded)
    module = module_ast(text)
    assert reading is not None and module is not None
    resolvers = resolvers_of(text, {"contrib.tpu": "tensorflow.contrib.tpu"})
    for members in ((), class_members(module)):
        again = rebound_reading(text, reading, bindings_key(recorded), resolvers, members)
        assert again is None or again == ast_reading(text, resolvers)


#: Rules' own analyses that read more of a file's tree than the record serves (a call of an
#: accessor whose module is not known: NPU100 reports each, ``unresolved_accesses``).
OWN_READINGS = ("_true_by_default", "model_facts", "unresolved_accesses")


def test_the_engine_reads_accessor_files_from_the_record(monkeypatch: pytest.MonkeyPatch) -> None:
    """A repository analysed and rewritten as ``scan`` does, with every ``ast.parse`` of a
    whole file counted: the files that use accessors are not parsed again, and the outcomes
    are those without a record and those of ``--engine full``."""
    loaded = load_rules(RuleSelection())
    files = [(where, text.encode("utf-8")) for where, text in sorted(FILES.items())]
    by_text = {text: where for where, text in FILES.items() if text}
    parsed: list[tuple[str, set[str]]] = []
    real_parse = ast.parse

    def counted(source, *args, **kwargs):  # type: ignore[no-untyped-def]
        if source in by_text:
            parsed.append((by_text[source], {frame.name for frame in traceback.extract_stack()}))
        return real_parse(source, *args, **kwargs)

    def outcomes(hand_over: bool, engine: Engine) -> list[object]:
        ast_handover.clear()
        facts = loaded.repository_facts(files, "repo").facts
        if not hand_over:
            ast_handover.clear()
        modules.module_ast.cache_clear()
        parsed.clear()
        monkeypatch.setattr(ast, "parse", counted)
        try:
            return [engine.process(data, where, "repo", facts) for where, data in files]
        finally:
            monkeypatch.setattr(ast, "parse", real_parse)

    without = outcomes(False, loaded.engine)
    assert {"lib/video.py", "lib/trainer.py", "lib/aliased.py"} <= {where for where, _ in parsed}
    with_record = outcomes(True, loaded.engine)
    assert [where for where, asking in parsed if asking.isdisjoint(OWN_READINGS)] == []
    assert with_record == without == outcomes(True, Engine(loaded.engine.rules, FULL))
    assert any(finding.rule_id == "NPU100" and finding.path == "lib/video.py"
               for outcome in with_record for finding in outcome.findings)  # type: ignore[attr-defined]


def test_a_name_both_modules_bind_is_read_through_the_first_resolver() -> None:
    """``hvd`` is Horovod's as the file's imports bind it, TensorFlow's once the accessor
    call binds it too (the first resolver that has a name reads it, as in a whole reading)."""
    text = ("import horovod.tensorflow as hvd\nimport tensorflow as tf\nfrom lib.utils import contrib\n\n"
            "hvd = contrib.tpu()\nhvd.init()\nconfig = hvd.RunConfig(tf.ConfigProto())\n")
    recorded = resolvers_of(text, None)
    reading = ast_reading(text, recorded)
    resolvers = resolvers_of(text, {"contrib.tpu": "tensorflow.contrib.tpu"})
    assert reading is not None and resolvers[0].bindings["hvd"] == "tensorflow.contrib.tpu"
    again = rebound_reading(text, reading, bindings_key(recorded), resolvers)
    assert again == ast_reading(text, resolvers) and again != reading


@pytest.mark.usefixtures("every_class")
def test_a_class_whose_header_spells_an_accessor_is_read_whole_once() -> None:
    text = ("import tensorflow as tf\nfrom lib.utils import contrib\n\n\n"
            "class Layer(contrib.slim().Layer):  # the header: the whole class\n"
            "  def build(self, shape):\n    return contrib.tpu().RunConfig(tf.ConfigProto())\n")
    recorded = resolvers_of(text, None)
    reading, module = ast_reading(text, recorded), module_ast(text)
    assert reading is not None and module is not None
    resolvers = resolvers_of(text, SPELLED)
    again = rebound_reading(text, reading, bindings_key(recorded), resolvers, class_members(module))
    assert again is not None and again == ast_reading(text, resolvers) and len(again.sites) == 3
